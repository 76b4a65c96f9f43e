package dev.spindle.spark.sink;

import java.io.IOException;

/**
 * Writing to the output failed (disk full, permission denied, quota): the message names the file or
 * folder, because the underlying error ("No space left on device") often does not. Thrown on
 * executors by task sinks and on the driver by the committer; serializable, so Spark carries it to
 * the driver as the cause of the failed job.
 */
public final class OutputWriteException extends IOException {
  public OutputWriteException(String what, IOException cause) {
    super(what + ": " + cause.getMessage(), cause);
  }
}
