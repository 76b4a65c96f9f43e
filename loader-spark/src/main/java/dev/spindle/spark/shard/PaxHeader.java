package dev.spindle.spark.shard;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The records of a pax extended header that matter here: {@code path} (raw bytes; the standard says
 * UTF-8, archives do not always comply) and {@code size}, both for the next entry only.
 *
 * @param path the next entry's name, or null when the header has none
 * @param size the next entry's size, or -1 when the header has none
 */
record PaxHeader(byte[] path, long size) {

  /**
   * Parses {@code "LENGTH KEY=VALUE\n"} records, LENGTH counting the whole record.
   *
   * @throws IllegalArgumentException saying what is malformed (the caller adds where)
   */
  static PaxHeader parse(byte[] body, long maxSize) {
    byte[] path = null;
    long size = -1;
    int at = 0;
    while (at < body.length && body[at] != 0) { // some writers pad the body with NULs
      int space = indexOf(body, (byte) ' ', at, Math.min(body.length, at + 12));
      long length = space < 0 ? -1 : decimal(body, at, space);
      int end = length <= 0 || length > body.length - at ? -1 : at + (int) length;
      int eq = end < 0 ? -1 : indexOf(body, (byte) '=', space, end);
      if (eq < 0 || body[end - 1] != '\n') {
        throw new IllegalArgumentException("malformed pax record at byte " + at + " of its body");
      }
      String key = new String(body, space + 1, eq - space - 1, StandardCharsets.UTF_8);
      if (key.equals("path")) {
        path = Arrays.copyOfRange(body, eq + 1, end - 1);
      } else if (key.equals("size")) {
        size = decimal(body, eq + 1, end - 1);
        if (size < 0 || size > maxSize) {
          throw new IllegalArgumentException(
              "pax size record is not a size up to "
                  + maxSize
                  + ": '"
                  + EscapedUtf8.text(body, eq + 1, end - 1)
                  + "'");
        }
      }
      at = end;
    }
    return new PaxHeader(path, size);
  }

  private static int indexOf(byte[] bytes, byte b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** The ASCII decimal number in {@code [from, to)}; -1 when it is none or over 18 digits. */
  private static long decimal(byte[] bytes, int from, int to) {
    if (from >= to || to - from > 18) {
      return -1;
    }
    long value = 0;
    for (int i = from; i < to; i++) {
      if (bytes[i] < '0' || bytes[i] > '9') {
        return -1;
      }
      value = value * 10 + (bytes[i] - '0');
    }
    return value;
  }
}
