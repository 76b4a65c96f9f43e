package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * How shard readers read from storage: {@code spark.spindle.io.index} (read a tar's planned samples
 * through its member index), {@code spark.spindle.io.coalesceBytes} (planned samples closer than
 * this are read in one ranged read), {@code spark.spindle.io.concurrency} (ranged reads in flight
 * per executor), and where the indexes of the input's tars are ({@link TarIndexes}, from the
 * manifest cache; null when none could be written). Immutable; shipped to tasks.
 */
public record IoSettings(boolean index, long coalesceBytes, int concurrency, TarIndexes indexes)
    implements Serializable {
  /** Every shard read whole, in order, as before indexes existed. */
  public static final IoSettings SEQUENTIAL = new IoSettings(false, 1 << 20, 16, null);

  public IoSettings {
    if (coalesceBytes < 0) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.io.coalesceBytes: " + coalesceBytes + " (must be >= 0)");
    }
    if (concurrency <= 0) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.io.concurrency: " + concurrency + " (must be > 0)");
    }
  }

  /** These settings with the input's indexes found at {@code where} (null: none). */
  public IoSettings withIndexes(TarIndexes where) {
    return new IoSettings(index, coalesceBytes, concurrency, where);
  }

  /**
   * True when opening a reader of {@code shard} starts its reads ({@link IndexedTarReader}: an
   * uncompressed tar, with indexes on), so a caller gains by opening it early; any other reader
   * reads when consumed, and holds its resources from its open on.
   */
  public boolean readsAhead(Shard shard) {
    return indexed()
        && shard.format() == ShardFormat.TAR
        && !TarCompression.compressed(shard.uri());
  }

  /** True when a tar's planned samples are read through its index, where it has a usable one. */
  boolean indexed() {
    return index && indexes != null;
  }
}
