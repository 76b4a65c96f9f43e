package dev.spindle.spark.shard;

import java.io.IOException;

/**
 * A shard that cannot be used at all, found while counting it: a file named by a brace pattern that
 * does not exist, a Parquet file whose footer cannot be read or whose schema lacks the image or
 * label column or holds it with the wrong type. The message names the shard and what is wrong. When
 * it is found while reading (the file changed since it was counted), the task fails with it.
 */
public final class ShardRefusedException extends IOException {
  private static final long serialVersionUID = 1L;

  public ShardRefusedException(String message) {
    super(message);
  }

  ShardRefusedException(String message, Throwable cause) {
    super(message, cause);
  }
}
