package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.u16;

/**
 * A JPEG's frame header (coding process, declared size, each component's sampling factors) with the
 * block and MCU counts libjpeg derives from it (ITU T.81 A.2), and its first scan header. Read
 * before decoding, it tells what the decode will allocate and how little entropy-coded data a valid
 * file can possibly have. Immutable; any thread.
 */
final class JpegFrame {
  private static final int BLOCK = 8;

  /** libjpeg's coefficient buffer holds 64 16-bit coefficients per block. */
  private static final int COEFFICIENT_BYTES = 64 * 2;

  private final int process;
  private final int width;
  private final int height;
  private final int[] ids;
  private final int[] h;
  private final int[] v;
  private final int hMax;
  private final int vMax;

  private JpegFrame(int process, int width, int height, int[] ids, int[] h, int[] v) {
    this.process = process;
    this.width = width;
    this.height = height;
    this.ids = ids;
    this.h = h;
    this.v = v;
    this.hMax = max(h);
    this.vMax = max(v);
  }

  /** The frame of a JPEG whose header {@link HeaderProbe#probe} accepted. */
  static JpegFrame parse(byte[] data, int offset, int length) throws ImageException {
    return read(data, HeaderProbe.jpegFrameHeader(data, offset, length));
  }

  /**
   * The frame header whose body (sample precision byte) is at {@code body}; the probe has checked
   * that the segment is in the data and at least 8 bytes long.
   */
  static JpegFrame read(byte[] data, int body) throws ImageException {
    int segment = u16(data, body - 2);
    int n = data[body + 5] & 0xFF;
    if (segment != 8 + 3 * n) {
      throw new ImageException(
          "Invalid JPEG frame header: " + segment + " bytes for " + n + " components");
    }
    int[] ids = new int[n];
    int[] h = new int[n];
    int[] v = new int[n];
    for (int c = 0; c < n; c++) {
      int p = body + 6 + 3 * c;
      ids[c] = data[p] & 0xFF;
      h[c] = (data[p + 1] & 0xFF) >> 4;
      v[c] = data[p + 1] & 0x0F;
      if (h[c] < 1 || h[c] > 4 || v[c] < 1 || v[c] > 4) {
        throw new ImageException(
            "Invalid JPEG sampling factors "
                + h[c]
                + "x"
                + v[c]
                + " of component "
                + ids[c]
                + " (must be 1..4)");
      }
    }
    return new JpegFrame(
        data[body - 3] & 0xFF, u16(data, body + 3), u16(data, body + 1), ids, h, v);
  }

  int width() {
    return width;
  }

  int height() {
    return height;
  }

  int components() {
    return ids.length;
  }

  /** The index of the component with identifier {@code id}, or -1. */
  int index(int id) {
    for (int c = 0; c < ids.length; c++) {
      if (ids[c] == id) {
        return c;
      }
    }
    return -1;
  }

  /** Baseline or extended sequential DCT, Huffman-coded (SOF0, SOF1). */
  boolean sequentialHuffman() {
    return process == 0xC0 || process == 0xC1;
  }

  /** Progressive DCT, Huffman-coded (SOF2). */
  boolean progressiveHuffman() {
    return process == 0xC2;
  }

  /** Any progressive process (SOF2, SOF6, SOF10, SOF14). */
  boolean progressive() {
    return process == 0xC2 || process == 0xC6 || process == 0xCA || process == 0xCE;
  }

  int h(int c) {
    return h[c];
  }

  int v(int c) {
    return v[c];
  }

  /** Blocks across component {@code c}: its own width, not padded to whole MCUs. */
  long blocksWide(int c) {
    return ceil((long) width * h[c], (long) BLOCK * hMax);
  }

  long blocksHigh(int c) {
    return ceil((long) height * v[c], (long) BLOCK * vMax);
  }

  /** MCUs across an interleaved scan. */
  long mcusWide() {
    return ceil(width, BLOCK * hMax);
  }

  long mcusHigh() {
    return ceil(height, BLOCK * vMax);
  }

  /**
   * The whole-image coefficient buffer libjpeg allocates when the image comes in several scans
   * (progressive, or a first scan without every component): 128 bytes per block, each component
   * padded to whole multiples of its sampling factors (jdcoefct.c).
   */
  long coefficientBytes() {
    long blocks = 0;
    for (int c = 0; c < ids.length; c++) {
      blocks += ceil(blocksWide(c), h[c]) * h[c] * ceil(blocksHigh(c), v[c]) * v[c];
    }
    return blocks * COEFFICIENT_BYTES;
  }

  /**
   * An upper bound of libjpeg's row buffers: per component at most ten row groups of {@code vMax}
   * block rows (the main buffer with its context rows) plus the upsampler's {@code vMax} rows, each
   * at most the MCU-padded width; 16 block heights cover both.
   */
  long rowBytes() {
    return 2L * BLOCK * vMax * mcusWide() * BLOCK * hMax * ids.length;
  }

  private static long ceil(long a, long b) {
    return (a + b - 1) / b;
  }

  private static int max(int[] a) {
    int m = 0;
    for (int x : a) {
      m = Math.max(m, x);
    }
    return m;
  }
}
