package dev.spindle.spark.image;

import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Reads a TIFF's strips or tiles as libtiff decodes them, without keeping the pixels, to find the
 * errors libtiff reports and OpenCV's 8-bit reader passes over: it reads through libtiff's RGBA
 * interface with {@code stop_on_error} off, so a strip whose data is corrupt or short comes out as
 * whatever its buffer held, where Pillow refuses the file. Checked: uncompressed strips' lengths,
 * LZW (libtiff's "Using code not yet in table", "Corrupted LZW table", "Not enough data"), Deflate
 * (zlib's errors, too little data) and PackBits (too little data). Not checked: JPEG and CCITT
 * data, and the old (pre-6.0) LZW. One per image, one thread; holds the LZW table's lengths and a
 * 64 KiB inflate buffer.
 */
final class TiffStripCheck {
  private final int[] length = new int[4096];
  private byte[] sink;

  TiffStripCheck() {
    for (int i = 0; i < 256; i++) {
      length[i] = 1;
    }
  }

  /**
   * The first problem of a strip or tile {@code data[at, at + n)} that must decode to {@code
   * expected} bytes with {@code compression}, or null.
   */
  String problem(byte[] data, int at, int n, long compression, long expected) {
    return switch ((int) compression) {
      case 1 -> n < expected ? "holds " + n + " of its " + expected + " bytes" : null;
      case 5 -> lzw(data, at, n, expected);
      case 8, 32946 -> deflate(data, at, n, expected);
      case 32773 -> packBits(data, at, n, expected);
      default -> null;
    };
  }

  /** TIFF's LZW: codes MSB first, 9 to 12 bits, widened one code early; 256 clears, 257 ends. */
  private String lzw(byte[] data, int at, int n, long expected) {
    if (n >= 2 && data[at] == 0 && (data[at + 1] & 1) != 0) {
      return null; // libtiff's compatibility decoder for pre-6.0 LZW: not checked
    }
    long out = 0;
    long bitPos = 0;
    long bits = 8L * n;
    int width = 9;
    int next = 258;
    int prev = -1;
    while (out < expected && bitPos + width <= bits) {
      int code = read(data, at, bitPos, width);
      bitPos += width;
      if (code == 256) {
        width = 9;
        next = 258;
        prev = -1;
        continue;
      }
      if (code == 257) {
        break;
      }
      if (prev < 0) {
        if (code > 255) {
          return "LZW code " + code + " right after a clear code";
        }
        out++;
        prev = code;
        continue;
      }
      if (code > next) {
        return "LZW code " + code + " not yet in its table (" + next + " entries)";
      }
      if (next >= 4096) {
        return "LZW table full without a clear code";
      }
      length[next] = length[prev] + 1;
      out += code == next ? length[next] : length[code];
      next++;
      if (next >= (1 << width) - 1 && width < 12) {
        width++;
      }
      prev = code;
    }
    return out < expected ? "LZW data for " + out + " of its " + expected + " bytes" : null;
  }

  private static int read(byte[] data, int at, long bitPos, int width) {
    int v = 0;
    for (int i = 0; i < width; i++) {
      long b = bitPos + i;
      v = v << 1 | (data[at + (int) (b >>> 3)] >> (7 - (int) (b & 7)) & 1);
    }
    return v;
  }

  private String deflate(byte[] data, int at, int n, long expected) {
    Inflater inflater = new Inflater();
    try {
      inflater.setInput(data, at, n);
      if (sink == null) {
        sink = new byte[64 << 10];
      }
      long out = 0;
      while (out < expected) {
        int got = inflater.inflate(sink);
        out += got;
        if (got == 0
            && (inflater.finished() || inflater.needsInput() || inflater.needsDictionary())) {
          break;
        }
      }
      return out < expected ? "Deflate data for " + out + " of its " + expected + " bytes" : null;
    } catch (DataFormatException e) {
      return "Deflate data: " + e.getMessage();
    } finally {
      inflater.end();
    }
  }

  private static String packBits(byte[] data, int at, int n, long expected) {
    long out = 0;
    int p = at;
    int end = at + n;
    while (out < expected && p < end) {
      int c = data[p++];
      int copied = c >= 0 ? c + 1 : c != -128 ? 1 : 0; // input bytes the run takes
      if (p + copied > end) {
        break; // libtiff: "Terminating PackBitsDecode due to lack of data"
      }
      out += c >= 0 ? c + 1 : c != -128 ? 1 - c : 0;
      p += copied;
    }
    return out < expected
        ? "PackBits data for " + Math.min(out, expected) + " of its " + expected + " bytes"
        : null;
  }
}
