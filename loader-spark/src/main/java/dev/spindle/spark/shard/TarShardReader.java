package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.batch.FieldSpec;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * Reads a WebDataset tar shard, sample by sample, through {@link TarSampleCursor} (the grouping
 * rules and damage handling are there, shared with {@link #countSamples}): an entry with one of
 * {@link WebDatasetKeys#TAR_IMAGES}' extensions ({@code .jpg}, {@code .png}, {@code .webp}, {@code
 * .tif}, {@code .gif}, ...) is a sample's image, {@code .cls} or {@code .label} its label ({@link
 * LabelRule}; a sample holding both is quarantined unless they are the same number); other entries
 * are ignored. An entry over its limit is the sample's problem and is never read. A compressed
 * shard ({@link TarCompression}: gzip, xz, bzip2, Zstandard) is decompressed on the way ({@link
 * DecompressedStream}: a damaged stream is the shard's damage, like a damaged archive). One thread.
 */
final class TarShardReader implements ShardReader {
  /** A label entry over this size is refused unread: a label is a few digits. */
  static final int MAX_LABEL_BYTES = 4096;

  private final InputStream in;
  private final TarSampleCursor cursor;
  private final String shard;
  private final SampleLimits limits;
  private final int[] wanted; // positions to read, strictly increasing; null = every sample
  private final CacheTally cache;
  private int nextWanted;
  private boolean exhausted;
  private Sample next;

  private TarShardReader(
      InputStream in, String shard, SampleLimits limits, int[] wanted, CacheTally cache) {
    this(in, shard, limits, wanted, cache, 0, 0);
  }

  private TarShardReader(
      InputStream in,
      String shard,
      SampleLimits limits,
      int[] wanted,
      CacheTally cache,
      int firstPosition,
      long startOffset) {
    this.in = in;
    this.cache = cache;
    this.shard = shard;
    this.cursor = new TarSampleCursor(in, shard, firstPosition, startOffset);
    this.limits = limits;
    this.wanted = wanted;
  }

  /**
   * Bytes buffered for header parsing. A skip to the next wanted sample seeks, and the read after
   * it fills the buffer again, so a sparse plan (the window shuffle takes a few samples of each
   * shard it opens) reads about a buffer per sample beside the sample's own bytes: with 1 MiB at
   * both levels (ours and the file system's stream) an epoch read 6.4x a data set of 56 KiB photos
   * (bench-train-gap's read_mb), with 64 KiB 4.3x. 16 KiB holds the headers of a sample's members;
   * a content read longer than it goes straight to the file system, whose own buffer is kept to
   * {@link #FS_BUFFER_BYTES} for the same reason.
   */
  static final int BUFFER_BYTES = 16 << 10;

  /** The file system stream's buffer (Hadoop's default {@code io.file.buffer.size}). */
  static final int FS_BUFFER_BYTES = 4 << 10;

  /** A reader of only the samples at {@code positions} (strictly increasing), or all if null. */
  static TarShardReader open(Shard shard, Configuration conf, SampleLimits limits, int[] positions)
      throws IOException {
    return open(shard, conf, limits, positions, new IoCounters());
  }

  /**
   * {@link #open(Shard, Configuration, SampleLimits, int[])}, counting the shard's open and what is
   * read from storage into {@code counters}.
   */
  static TarShardReader open(
      Shard shard, Configuration conf, SampleLimits limits, int[] positions, IoCounters counters)
      throws IOException {
    CacheTally cache = new CacheTally();
    InputStream raw = open(shard, conf, cache, counters);
    counters.opened(false, TarCompression.compressed(shard.uri()));
    return new TarShardReader(
        new BufferedInputStream(TarCompression.forShard(raw, shard.uri()), BUFFER_BYTES),
        shard.uri(),
        limits,
        positions,
        cache);
  }

  /**
   * The shard's bytes in order: the shard cache's local copy ({@link ShardCache}, when it is on and
   * holds or can fetch the shard), else storage's stream, counted into {@code counters}. A fetch
   * into the cache counts as one request for the whole shard; reads of the local copy count nothing
   * (the report's {@code cache_bytes_served}).
   */
  private static InputStream open(
      Shard shard, Configuration conf, CacheTally cache, IoCounters counters) throws IOException {
    Path path = new Path(shard.uri());
    boolean[] direct = {false};
    InputStream in =
        ShardCache.open(
            shard,
            conf,
            cache,
            () -> {
              direct[0] = true;
              return path.getFileSystem(conf).open(path, FS_BUFFER_BYTES);
            });
    if (cache.counts().misses() > 0) {
      counters.request(shard.bytes());
    }
    return direct[0] ? new CountingStream(in, counters) : in;
  }

  /**
   * A sample parsed from its bytes alone, and the damage that parse met (in the sample, or right
   * after it), or null.
   */
  record Parsed(Sample sample, String damage) {}

  /**
   * The sample at {@code position} of a shard, from its bytes alone ({@link TarIndex}'s range,
   * starting at the shard's byte {@code startOffset}): the sample a walk of the whole shard yields
   * there, with the damage the walk would have met while reading it (a shard changed in place since
   * it was indexed).
   *
   * @throws UncheckedIOException when they hold no sample at all
   */
  static Parsed sampleAt(
      InputStream in, String shard, SampleLimits limits, int position, long startOffset) {
    TarShardReader reader =
        new TarShardReader(
            in, shard, limits, new int[] {position}, new CacheTally(), position, startOffset);
    if (!reader.hasNext()) {
      throw new UncheckedIOException(
          new IOException(
              "the indexed bytes of sample #"
                  + position
                  + " of "
                  + shard
                  + " hold no sample (the shard changed since it was indexed)"));
    }
    Sample sample = reader.next();
    return new Parsed(sample, reader.cursor.damage());
  }

  /** The {@value TarSampleCursor#DAMAGE_KEY} sample at {@code position} of a damaged shard. */
  static Sample damageSample(String shard, long position, String damage, SampleLimits limits) {
    return new SampleBuilder(shard, TarSampleCursor.DAMAGE_KEY, position, limits)
        .problem(TarSampleCursor.damageProblem(damage))
        .build();
  }

  /** Reads the samples at {@code positions} (strictly increasing; null = all) of a tar stream. */
  static TarShardReader of(InputStream in, String shard, SampleLimits limits, int[] positions) {
    return new TarShardReader(in, shard, limits, positions, new CacheTally());
  }

  /**
   * Counts the samples of a tar stream as a reader yields them (damage included), reading headers
   * only: the content of every entry is skipped.
   *
   * @throws IOException only when the stream itself fails
   */
  static long countSamples(InputStream in, String shard) throws IOException {
    return walk(in, shard).samples();
  }

  /**
   * What one walk of a tar stream's headers found: the samples a reader yields (damage included)
   * and, when every one of them can be read alone, each one's byte range.
   *
   * @param samples the count
   * @param starts each sample's first byte, or null when the shard cannot be indexed
   * @param ends the end of each sample's bytes, or null
   * @param notIndexed why it cannot be (damage, a repeated key), or null
   */
  record Walk(long samples, long[] starts, long[] ends, String notIndexed) {}

  /**
   * Counts a tar stream's samples ({@link #countSamples}) and records each one's byte range {@code
   * [start, end)}: from the first header block of its first member to the end of its last member's
   * padded content. Members of no sample lie between ranges. A shard with damage or a repeated key
   * gets no ranges: its problems are found only by reading it whole.
   *
   * @throws IOException only when the stream itself fails
   */
  static Walk walk(InputStream in, String shard) throws IOException {
    TarSampleCursor cursor = new TarSampleCursor(in, shard);
    long count = 0;
    long[] starts = new long[64];
    long[] ends = new long[64];
    String problem = null;
    while (cursor.nextSample()) {
      if (problem == null && cursor.problem() != null) {
        problem = cursor.problem();
      }
      while (cursor.nextEntry()) {
        // walks the sample's members by their headers, so that its end is known
      }
      if (count == starts.length) {
        starts = Arrays.copyOf(starts, starts.length * 2);
        ends = Arrays.copyOf(ends, ends.length * 2);
      }
      starts[(int) count] = cursor.start();
      ends[(int) count] = cursor.end();
      count++;
    }
    if (problem != null) {
      return new Walk(count, null, null, "sample problem: " + problem);
    }
    return new Walk(
        count, Arrays.copyOf(starts, (int) count), Arrays.copyOf(ends, (int) count), null);
  }

  @Override
  public boolean hasNext() {
    if (next == null && !exhausted) {
      try {
        next = readSample();
      } catch (IOException e) {
        throw new UncheckedIOException(
            "Failed reading tar shard " + shard + ": " + e.getMessage(), e);
      }
      exhausted = next == null;
    }
    return next != null;
  }

  @Override
  public Sample next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more samples in " + shard);
    }
    Sample sample = next;
    next = null;
    return sample;
  }

  /** The next wanted sample; unwanted ones are passed over by their headers, never read. */
  private Sample readSample() throws IOException {
    while (wanted == null || nextWanted < wanted.length) {
      if (!cursor.nextSample()) {
        return null;
      }
      if (wanted == null || cursor.position() == wanted[nextWanted]) {
        nextWanted++;
        return build();
      }
    }
    return null; // past the last wanted position: the rest of the archive is not read
  }

  private Sample build() throws IOException {
    SampleBuilder sample = new SampleBuilder(shard, cursor.key(), cursor.position(), limits);
    if (cursor.problem() != null) {
      return sample.problem(cursor.problem()).build();
    }
    while (cursor.nextEntry()) {
      collect(sample);
    }
    return sample.build();
  }

  private void collect(SampleBuilder sample) throws IOException {
    String name = cursor.entryName();
    String ext = cursor.entryExtension();
    sample.entry(name, ext);
    byte[] read = null; // the member's content once read: it cannot be read twice
    FieldSet fields = limits.fields();
    boolean image =
        fields.isEmpty()
            ? WebDatasetKeys.TAR_IMAGE_EXTENSIONS.contains(ext)
            : fields.image() != null && ext.equals(fields.image().source());
    boolean label =
        fields.isEmpty()
            ? WebDatasetKeys.LABEL_EXTENSIONS.contains(ext)
            : fields.label() != null && ext.equals(fields.label().source());
    if (image && sample.wantsImage()) {
      byte[] bytes =
          content(
              sample,
              name,
              limits.maxSampleBytes(),
              "image entry %s is %d bytes, over spark.spindle.maxSampleBytes=%d");
      if (bytes != null) {
        sample.image(bytes, name);
      }
      read = bytes;
    } else if (label && sample.wantsLabelEntry()) {
      byte[] bytes =
          content(
              sample,
              name,
              MAX_LABEL_BYTES,
              "label entry %s is %d bytes, over the limit of %d bytes for a label");
      if (bytes != null) {
        sample.labelText(bytes, name);
      }
      read = bytes;
    }
    collectFields(sample, name, ext, read);
  }

  /**
   * Reads the member once for every extra field whose source is its extension ({@code
   * caption=txt,raw=txt:bytes} share one read): a string or bytes member over {@code
   * spark.spindle.fields.maxBytes} is the sample's problem, unread.
   *
   * @param read the member's content when the image or label took it, else null
   */
  private void collectFields(SampleBuilder sample, String name, String ext, byte[] read)
      throws IOException {
    List<FieldSpec> extras = sample.extras();
    byte[] bytes = read;
    for (int i = 0; i < extras.size(); i++) {
      FieldSpec f = extras.get(i);
      if (!f.source().equals(ext) || !sample.wantsField(i)) {
        continue;
      }
      if (bytes == null) {
        bytes = content(sample, name, memberLimit(f), overLimit(f));
      }
      if (bytes != null) {
        sample.fieldBytes(i, bytes, name);
      }
    }
  }

  /** The largest member a field's value is read from (lists are bounded again once parsed). */
  private int memberLimit(FieldSpec f) {
    if (f.type().isScalar()) {
      return MAX_LABEL_BYTES;
    }
    return f.type().isList() ? limits.maxSampleBytes() : limits.maxFieldBytes();
  }

  private static String overLimit(FieldSpec f) {
    String bound =
        f.type().isScalar()
            ? "the limit of %3$d bytes for a number"
            : f.type().isList()
                ? "spark.spindle.maxSampleBytes=%3$d"
                : "spark.spindle.fields.maxBytes=%3$d";
    return "field '" + f.name() + "': member %1$s is %2$d bytes, over " + bound;
  }

  /**
   * The entry's content, or null when it is over {@code limit} (not read) or the archive ends
   * inside it; the sample's problem says which.
   */
  private byte[] content(SampleBuilder sample, String name, int limit, String overLimit)
      throws IOException {
    if (cursor.entrySize() > limit) {
      sample.problem(String.format(overLimit, name, cursor.entrySize(), limit));
      return null;
    }
    try {
      return cursor.readContent();
    } catch (TarFormatException e) {
      sample.problem("shard damaged while reading entry " + name + ": " + e.getMessage());
      return null;
    }
  }

  @Override
  public CacheCounts cacheCounts() {
    return cache.counts();
  }

  @Override
  public String damage() {
    return cursor.damage();
  }

  @Override
  public void close() throws IOException {
    exhausted = true;
    in.close();
  }
}
