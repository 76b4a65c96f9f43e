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
 */
public record FileCount(String uri, long bytes, long modificationTime, long samples, String refused)
    implements Serializable {

  static FileCount refused(String uri, String reason) {
    return new FileCount(uri, -1, -1, -1, reason);
  }
}
