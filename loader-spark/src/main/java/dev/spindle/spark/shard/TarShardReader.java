package dev.spindle.spark.shard;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * Reads a WebDataset tar shard: consecutive entries sharing a key form one sample; {@code .jpg},
 * {@code .jpeg} or {@code .png} is its image, {@code .cls} (or {@code .label}) its label ({@link
 * LabelRule}). Other entries ({@code .json}, {@code .txt}, …) are ignored.
 */
final class TarShardReader implements ShardReader {
  private final InputStream in;
  private final TarEntryReader entries;
  private final String shard;
  private final SampleLimits limits;
  private final int[] wanted; // positions to read, strictly increasing; null = every sample
  private int nextWanted;
  private boolean entryPending;
  private boolean exhausted;
  private long position;
  private Sample next;
  private String damage;

  private TarShardReader(InputStream in, String shard, SampleLimits limits, int[] wanted) {
    this.in = in;
    this.shard = shard;
    this.entries = new TarEntryReader(in, shard);
    this.limits = limits;
    this.wanted = wanted;
  }

  /** A reader of only the samples at {@code positions} (strictly increasing), or all if null. */
  static TarShardReader open(Shard shard, Configuration conf, SampleLimits limits, int[] positions)
      throws IOException {
    Path path = new Path(shard.uri());
    InputStream raw = path.getFileSystem(conf).open(path, 1 << 20);
    return new TarShardReader(
        new BufferedInputStream(raw, 1 << 20), shard.uri(), limits, positions);
  }

  /** Reads the samples at {@code positions} (strictly increasing; null = all) of a tar stream. */
  static TarShardReader of(InputStream in, String shard, SampleLimits limits, int[] positions) {
    return new TarShardReader(in, shard, limits, positions);
  }

  /** Counts the samples of a tar stream, reading headers only (content is skipped). */
  static long countSamples(InputStream in, String shard) {
    TarEntryReader reader = new TarEntryReader(in, shard);
    long count = 0;
    String lastKey = null;
    try {
      while (reader.next()) {
        String key = WebDatasetKeys.key(reader.name());
        if (!key.equals(lastKey)) {
          count++;
          lastKey = key;
        }
      }
    } catch (IOException e) {
      // Same stopping point as the reader: the samples counted so far are the ones it yields.
    }
    return count;
  }

  @Override
  public boolean hasNext() {
    if (next == null && !exhausted) {
      try {
        next = readSample();
      } catch (IOException e) {
        throw new UncheckedIOException("Failed reading tar shard " + shard + ": " + e.getMessage(), e);
      }
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

  private Sample readSample() throws IOException {
    if (!entryPending) {
      try {
        if (!entries.next()) {
          exhausted = true;
          return null;
        }
      } catch (IOException e) {
        exhausted = true;
        damage = e.getMessage();
        return null;
      }
    }
    if (wanted != null && !skipToWanted()) {
      return null;
    }
    String key = WebDatasetKeys.key(entries.name());
    SampleBuilder sample = new SampleBuilder(shard, key, position++, limits);
    do {
      try {
        collect(sample);
      } catch (IOException e) {
        // Counted from its header but its content is unreadable: report it, end the shard here.
        exhausted = true;
        entryPending = false;
        return sample.problem("shard damaged while reading this sample: " + e.getMessage()).build();
      }
      try {
        entryPending = entries.next();
      } catch (IOException e) {
        exhausted = true; // this sample is complete; what follows cannot be read
        entryPending = false;
        damage = e.getMessage();
      }
    } while (entryPending && WebDatasetKeys.key(entries.name()).equals(key));
    return sample.build();
  }

  /**
   * Moves past unwanted samples by their headers alone: {@link TarEntryReader#next()} skips the
   * content of an entry that was not read, so their image bytes are never read. Returns false
   * when no wanted sample is left (the rest of the archive is not read) or the archive ended.
   */
  private boolean skipToWanted() throws IOException {
    if (nextWanted >= wanted.length) {
      exhausted = true;
      entryPending = false;
      return false;
    }
    int target = wanted[nextWanted++];
    while (position < target) {
      String key = WebDatasetKeys.key(entries.name());
      do {
        try {
          entryPending = entries.next();
        } catch (IOException e) {
          entryPending = false;
          damage = e.getMessage();
        }
        if (!entryPending) {
          exhausted = true;
          return false;
        }
      } while (WebDatasetKeys.key(entries.name()).equals(key));
      position++;
    }
    return true;
  }

  private void collect(SampleBuilder sample) throws IOException {
    String ext = WebDatasetKeys.extension(entries.name());
    if (WebDatasetKeys.IMAGE_EXTENSIONS.contains(ext)) {
      if (entries.size() > limits.maxSampleBytes()) {
        sample.problem(
            String.format(
                "image entry %s is %d bytes, over spark.spindle.maxSampleBytes=%d",
                entries.name(), entries.size(), limits.maxSampleBytes()));
      } else {
        sample.image(entries.readContent(limits.maxSampleBytes()), entries.name());
      }
    } else if (WebDatasetKeys.LABEL_EXTENSIONS.contains(ext)) {
      sample.labelText(entries.readContent(4096), entries.name());
    }
  }

  @Override
  public String damage() {
    return damage;
  }

  @Override
  public void close() throws IOException {
    exhausted = true;
    in.close();
  }
}
