package dev.spindle.spark.shard;

import java.io.IOException;

/**
 * A tar shard's bytes stop being a valid archive here: a header whose checksum, numbers or pax
 * records are wrong, or an archive that ends inside an entry. It is the shard's damage (what came
 * before is used, the rest of the shard is quarantined), unlike any other {@link IOException},
 * which comes from the storage and fails the task so Spark retries it. The message names the shard,
 * the header's byte offset and, when known, the entry.
 */
final class TarFormatException extends IOException {
  private static final long serialVersionUID = 1L;

  TarFormatException(String message) {
    super(message);
  }
}
