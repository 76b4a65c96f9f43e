package dev.spindle.spark.shard;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Text from bytes that should be UTF-8 but may not be (tar member names, label entries): valid
 * UTF-8 decodes as is, but for the backslash, written {@code \x5c}; each byte of an invalid
 * sequence becomes {@code \xHH} (lower-case hex). The escape character being escaped too, the
 * mapping is lossless: different bytes never give the same text (U+FFFD replacement would merge
 * them, and so would a literal name {@code caf\xe9} with the byte 0xE9 if {@code \} were left
 * alone), and the result is always a valid string (an Arrow utf8 value, a JSON report field).
 * Stateless; any thread.
 */
final class EscapedUtf8 {
  private EscapedUtf8() {}

  static String text(byte[] bytes) {
    return text(bytes, 0, bytes.length);
  }

  static String text(byte[] bytes, int from, int to) {
    if (isPlainAscii(bytes, from, to)) {
      return new String(bytes, from, to - from, StandardCharsets.US_ASCII);
    }
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes, from, to - from);
    CharBuffer out = CharBuffer.allocate(to - from); // UTF-8 never has more chars than bytes
    StringBuilder text = new StringBuilder(to - from + 8);
    while (true) {
      CoderResult result = decoder.decode(in, out, true);
      appendEscapingBackslash(text, out.flip());
      out.clear();
      if (result.isError()) {
        for (int i = 0; i < result.length(); i++) {
          text.append(String.format("\\x%02x", in.get() & 0xff));
        }
      } else if (result.isUnderflow()) {
        return text.toString();
      }
    }
  }

  private static void appendEscapingBackslash(StringBuilder text, CharBuffer chars) {
    while (chars.hasRemaining()) {
      char c = chars.get();
      if (c == '\\') {
        text.append("\\x5c");
      } else {
        text.append(c);
      }
    }
  }

  /** ASCII without a backslash: the text is the bytes. */
  private static boolean isPlainAscii(byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) {
      if (bytes[i] < 0 || bytes[i] == '\\') {
        return false;
      }
    }
    return true;
  }
}
