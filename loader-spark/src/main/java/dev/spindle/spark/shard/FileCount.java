package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * What counting found for one shard file, where it was counted (the driver or an executor).
 * Immutable.
 *
 * @param uri the file
 * @param bytes its size when it was counted
 * @param modificationTime its modification time when it was counted, ms since the epoch
 * @param samples the samples its reader yields; -1 when only its facts were asked for or it was
 *     refused
 * @param refused why it cannot be a shard (it does not exist, a Parquet footer or schema that
 *     cannot be used), or null
 * @param notIndexed when a member index was asked for ({@link TarIndexes}), why none was written (a
 *     compressed tar, damage, a repeated key, a file that could not be written); null when it was
 *     written or not asked for
 */
public record FileCount(
    String uri, long bytes, long modificationTime, long samples, String refused, String notIndexed)
    implements Serializable {

  /** A count for which no index was asked. */
  public FileCount(String uri, long bytes, long modificationTime, long samples, String refused) {
    this(uri, bytes, modificationTime, samples, refused, null);
  }

  static FileCount refused(String uri, String reason) {
    return new FileCount(uri, -1, -1, -1, reason);
  }
}
