package dev.spindle.spark.manifest;

import java.nio.charset.StandardCharsets;

/**
 * Strings as the binary manifest stores them: UTF-8, except that a lone surrogate (a Java string
 * may hold one; JSON carries it as an escape) is encoded as its own three-byte sequence (WTF-8). So
 * every string round-trips exactly, and a string cut anywhere, even inside a surrogate pair, joins
 * back to the same string. Bytes that are no such encoding decode as U+FFFD, as any UTF-8 decoding
 * of names does. Stateless; any thread.
 */
final class Wtf8 {
  private static final byte SURROGATE_LEAD = (byte) 0xED; // the lead byte of U+D000..U+DFFF

  private Wtf8() {}

  static byte[] encode(String s) {
    if (!hasLoneSurrogate(s)) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    byte[] out = new byte[s.length() * 3];
    int n = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i); // a lone surrogate is its own code point here
      i += Character.charCount(cp);
      if (cp < 0x80) {
        out[n++] = (byte) cp;
      } else if (cp < 0x800) {
        out[n++] = (byte) (0xC0 | cp >> 6);
        out[n++] = (byte) (0x80 | cp & 0x3F);
      } else if (cp < 0x10000) {
        out[n++] = (byte) (0xE0 | cp >> 12);
        out[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
        out[n++] = (byte) (0x80 | cp & 0x3F);
      } else {
        out[n++] = (byte) (0xF0 | cp >> 18);
        out[n++] = (byte) (0x80 | cp >> 12 & 0x3F);
        out[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
        out[n++] = (byte) (0x80 | cp & 0x3F);
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  static String decode(byte[] b, int off, int len) {
    for (int i = off; i < off + len; i++) {
      if (b[i] == SURROGATE_LEAD) {
        return decodeSlowPath(b, off, off + len);
      }
    }
    return new String(b, off, len, StandardCharsets.UTF_8);
  }

  /** A UTF-8 decoder that also takes encoded surrogates; anything invalid is one U+FFFD a byte. */
  private static String decodeSlowPath(byte[] b, int i, int end) {
    StringBuilder s = new StringBuilder(end - i);
    while (i < end) {
      int lead = b[i] & 0xFF;
      int more =
          lead < 0x80
              ? 0
              : lead < 0xC2 ? -1 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : lead < 0xF5 ? 3 : -1;
      int cp = more < 0 || i + more >= end ? -1 : lead & (0x7F >> more);
      for (int k = 1; cp >= 0 && k <= more; k++) {
        int next = b[i + k] & 0xFF;
        cp = (next & 0xC0) == 0x80 ? cp << 6 | next & 0x3F : -1;
      }
      boolean shortest = more < 2 || (more == 2 ? cp >= 0x800 : cp >= 0x10000 && cp <= 0x10FFFF);
      if (cp < 0 || !shortest) {
        s.append('\uFFFD');
        i++;
      } else {
        s.appendCodePoint(cp);
        i += more + 1;
      }
    }
    return s.toString();
  }

  private static boolean hasLoneSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return true;
      }
    }
    return false;
  }
}
