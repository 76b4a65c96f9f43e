package dev.spindle.spark.shard;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/**
 * What a {@code preprocess} output's {@code _manifest.json} records of one part file besides its
 * size and rows, so that a reader can tell the file is the one committed and its rows are where the
 * manifest puts them: a content checksum and the range of the {@code index} column it stores.
 * Immutable; shipped to executors inside its {@link Shard}.
 *
 * <p>Checksums are CRC-32C (Castagnoli), written in the manifest as 8 lowercase hex digits of the
 * 32-bit value, big-endian (the form Google Cloud Storage reports an object's {@code crc32c} in,
 * base64 aside).
 *
 * @param crc32c the whole file's, computed as it was written
 * @param batchesCrc32c for an Arrow IPC file, the checksum of its footer's {@value #BATCH_CRCS}
 *     list (each record batch's own checksum), so that a reader of a few record batches checks
 *     those against the manifest without reading the rest; -1 for a Parquet file
 * @param firstIndex the stored {@code index} of the file's first row, -1 when it has none
 * @param lastIndex that of its last row, -1 when it has none
 */
public record PartChecks(long crc32c, long batchesCrc32c, long firstIndex, long lastIndex)
    implements Serializable {

  /**
   * The Arrow footer's custom metadata key holding each record batch's CRC-32C, in order: 8 hex
   * digits per batch, nothing between them. A batch's bytes are its whole block: the message with
   * its metadata and body, from the block's offset for metadata length + body length bytes.
   */
  public static final String BATCH_CRCS = "spindle.batch_crc32c";

  /** The manifest's form of a checksum: 8 lowercase hex digits. */
  public static String hex(long crc) {
    return HexFormat.of().toHexDigits((int) crc);
  }

  /** A checksum written by {@link #hex}, or -1 when {@code text} is not one. */
  public static long parseHex(String text) {
    if (text == null || text.length() != 8 || !text.chars().allMatch(PartChecks::isHexDigit)) {
      return -1;
    }
    return Long.parseLong(text, 16);
  }

  /** The CRC-32C of a {@value #BATCH_CRCS} value: what the manifest's {@code batches_crc32c} is. */
  public static long crcOfList(String batchCrcs) {
    CRC32C crc = new CRC32C();
    crc.update(batchCrcs.getBytes(StandardCharsets.US_ASCII));
    return crc.getValue();
  }

  private static boolean isHexDigit(int c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  }
}
