package dev.spindle.spark.sink;

import dev.spindle.spark.shard.PartChecks;
import java.io.IOException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.hadoop.fs.Path;

/**
 * Appends the record batches of one {@link VectorSchemaRoot} in {@link
 * dev.spindle.spark.batch.BatchSchema}'s layout to one file of a job's output ({@link
 * OutputFormat}). One thread. The root stays owned by the caller; each {@link #write} appends the
 * root's current rows. The file is complete only after {@link #close()} returned normally; a task
 * that fails leaves a partial file that its committer deletes, never a visible one. Write errors
 * name the file ({@link OutputWriteException}). {@code close()} is safe to call twice.
 */
public interface BatchFileSink extends AutoCloseable {

  /** Appends the root's current rows. */
  void write(VectorSchemaRoot root) throws IOException;

  /** The file being written. */
  Path path();

  /** Rows written so far. */
  long rows();

  /**
   * What the manifest records to check the file by: its checksums, computed as it was written, and
   * the range of the {@code index} column it stores. Valid once {@link #close()} returned normally.
   */
  PartChecks checks();

  @Override
  void close() throws IOException;

  /** Names the file: "No space left on device" alone does not say where. */
  static IOException failed(Path path, IOException e) {
    return e instanceof OutputWriteException
        ? e
        : new OutputWriteException("Cannot write " + path, e);
  }
}
