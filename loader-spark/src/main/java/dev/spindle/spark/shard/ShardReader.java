package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;

/**
 * Iterates the samples of one shard in their stored order. One thread; close() releases the
 * underlying streams and is safe to call twice. A damaged tar is not an error: its damage is its
 * last sample ({@code (rest of shard)}, with a problem). Storage errors surface from {@code
 * hasNext()/next()} as {@link java.io.UncheckedIOException} naming the shard (the task fails and
 * Spark retries it).
 */
public interface ShardReader extends Iterator<Sample>, AutoCloseable {

  @Override
  void close() throws IOException;

  /**
   * Why the shard could not be read to its end (the problem of its {@code (rest of shard)} sample),
   * or null. Valid once {@code hasNext()} returned false.
   */
  default String damage() {
    return null;
  }

  /**
   * Image bytes this reader copied on the host out of what it read into the samples' arrays: a
   * preprocess output's stored pixels, copied from the file's decoded buffers (an Arrow record
   * batch, a Parquet page) into each {@link Sample#image()}. 0 for encoded images, which are read,
   * not copied (their decode writes the pixels).
   */
  default long copiedImageBytes() {
    return 0;
  }

  /**
   * What the executor-local shard cache did for this reader's open and reads ({@link ShardCache}:
   * the tar reader uses it); {@link CacheCounts#NONE} for readers that read storage directly.
   */
  default CacheCounts cacheCounts() {
    return CacheCounts.NONE;
  }

  /**
   * Opens a reader for the shard.
   *
   * @param limits what one sample may be: an image over its size limit or a label outside its range
   *     makes a quarantined sample, not an allocation or a wrong label
   */
  static ShardReader open(Shard shard, Configuration conf, SampleLimits limits) throws IOException {
    return switch (shard.format()) {
      case TAR -> TarShardReader.open(shard, conf, limits, null);
      case IMAGE_FOLDER -> new ImageFolderReader(shard, conf, limits, null);
      case PARQUET -> ParquetShardReader.open(shard, conf, limits, null);
      case DECODED_ARROW -> DecodedArrowReader.open(shard, conf, limits, null);
      case DECODED_PARQUET -> DecodedParquetReader.open(shard, conf, limits, null);
    };
  }

  /**
   * Opens a reader that yields only the samples at {@code positions} (strictly increasing), each
   * with its own position. Skipped samples are passed over at the index level: a tar reader skips
   * their entries by header without reading the content, a folder reader never opens their files, a
   * Parquet reader reads only the row groups and pages that hold them, an Arrow reader of a
   * preprocess output only the record batches that hold them. The reader stops after the last
   * wanted position; if the shard ends before it, the missing samples are simply not returned (the
   * caller sees which positions came back and lists the others, {@link Sample#unread}).
   */
  static ShardReader open(Shard shard, Configuration conf, SampleLimits limits, int[] positions)
      throws IOException {
    requireIncreasing(shard, positions);
    return switch (shard.format()) {
      case TAR -> TarShardReader.open(shard, conf, limits, positions.clone());
      case IMAGE_FOLDER -> new ImageFolderReader(shard, conf, limits, positions.clone());
      case PARQUET -> ParquetShardReader.open(shard, conf, limits, positions.clone());
      case DECODED_ARROW -> DecodedArrowReader.open(shard, conf, limits, positions.clone());
      case DECODED_PARQUET -> DecodedParquetReader.open(shard, conf, limits, positions.clone());
    };
  }

  /**
   * {@link #open(Shard, Configuration, SampleLimits, int[])} reading as {@code io} says: an
   * uncompressed tar with a usable member index ({@link IoSettings#indexes()}) has only its planned
   * samples read, by coalesced ranged reads that start at once on the executor's range-read threads
   * (so a caller that opens the readers of several shards before consuming the first has their
   * reads overlap); any other shard is read as before. What is read from storage, and the open,
   * count into {@code counters}.
   */
  static ShardReader open(
      Shard shard,
      Configuration conf,
      SampleLimits limits,
      int[] positions,
      IoSettings io,
      IoCounters counters)
      throws IOException {
    if (shard.format() != ShardFormat.TAR) {
      ShardReader reader = open(shard, conf, limits, positions);
      counters.opened(false, false);
      return reader;
    }
    requireIncreasing(shard, positions);
    return io.readsAhead(shard)
        ? new IndexedTarReader(shard, conf, limits, positions.clone(), io, counters)
        : TarShardReader.open(shard, conf, limits, positions.clone(), counters);
  }

  private static void requireIncreasing(Shard shard, int[] positions) {
    for (int i = 1; i < positions.length; i++) {
      if (positions[i] <= positions[i - 1]) {
        throw new IllegalArgumentException(
            "Invalid positions for "
                + shard.displayName()
                + ": "
                + positions[i - 1]
                + " then "
                + positions[i]
                + " (must be strictly increasing)");
      }
    }
  }
}
