package dev.spindle.spark.shard;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
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
    this.in = in;
    this.cache = cache;
    this.shard = shard;
    this.cursor = new TarSampleCursor(in, shard);
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
    Path path = new Path(shard.uri());
    CacheTally cache = new CacheTally();
    InputStream raw =
        ShardCache.open(
            shard, conf, cache, () -> path.getFileSystem(conf).open(path, FS_BUFFER_BYTES));
    return new TarShardReader(
        new BufferedInputStream(TarCompression.forShard(raw, shard.uri()), BUFFER_BYTES),
        shard.uri(),
        limits,
        positions,
        cache);
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
    TarSampleCursor cursor = new TarSampleCursor(in, shard);
    long count = 0;
    while (cursor.nextSample()) {
      count++;
    }
    return count;
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
    if (WebDatasetKeys.TAR_IMAGE_EXTENSIONS.contains(ext) && sample.wantsImage()) {
      byte[] bytes =
          content(
              sample,
              name,
              limits.maxSampleBytes(),
              "image entry %s is %d bytes, over spark.spindle.maxSampleBytes=%d");
      if (bytes != null) {
        sample.image(bytes, name);
      }
    } else if (WebDatasetKeys.LABEL_EXTENSIONS.contains(ext) && sample.wantsLabelEntry()) {
      byte[] bytes =
          content(
              sample,
              name,
              MAX_LABEL_BYTES,
              "label entry %s is %d bytes, over the limit of %d bytes for a label");
      if (bytes != null) {
        sample.labelText(bytes, name);
      }
    }
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
