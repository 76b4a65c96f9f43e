package dev.spindle.spark.sink;

import dev.spindle.spark.shard.PartChecks;
import java.io.Serializable;

/**
 * A file a task attempt wrote under the job's temporary folder, to be made visible at commit.
 *
 * @param partition the Spark partition that wrote it (its final name is {@link
 *     OutputCommitter#finalName})
 * @param tempPath where the attempt wrote it
 * @param rows rows in the file
 * @param bytes the file's size
 * @param checks its checksums and stored index range, for the manifest; null when not known
 */
public record CommittedFile(
    int partition, String tempPath, long rows, long bytes, PartChecks checks)
    implements Serializable {

  /** A file without checks. */
  public CommittedFile(int partition, String tempPath, long rows, long bytes) {
    this(partition, tempPath, rows, bytes, null);
  }
}
