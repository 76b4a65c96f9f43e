package dev.spindle.spark.image;

/**
 * One JPEG Huffman table (DHT, ITU T.81 B.2.4.2) as the canonical decoding tables of T.81 F.2.2.3
 * ({@code MINCODE}, {@code MAXCODE}, {@code VALPTR}), decoding a code bit by bit as libjpeg's slow
 * path does. Immutable; any thread.
 */
final class HuffmanTable {
  /** {@link #decode}: the bits ran out first. */
  static final int END = -1;

  /** {@link #decode}: no code of up to 16 bits matches (libjpeg warns "bad Huffman code"). */
  static final int BAD = -2;

  private final int[] minCode = new int[17];
  private final int[] maxCode = new int[17];
  private final int[] valPtr = new int[17];
  private final int[] values;

  private HuffmanTable(int[] counts, int[] values) {
    this.values = values;
    int code = 0;
    int k = 0;
    for (int l = 1; l <= 16; l++) {
      valPtr[l] = k;
      minCode[l] = code;
      code += counts[l];
      k += counts[l];
      maxCode[l] = counts[l] == 0 ? -1 : code - 1;
      code <<= 1;
    }
  }

  /**
   * The table whose 16 code-length counts start at {@code p}, or null when its symbols would pass
   * {@code end} or number more than 256 (libjpeg refuses such a segment).
   */
  static HuffmanTable read(byte[] data, int p, int end) {
    int[] counts = new int[17];
    int n = 0;
    for (int l = 1; l <= 16; l++) {
      counts[l] = data[p + l - 1] & 0xFF;
      n += counts[l];
    }
    if (n > 256 || p + 16 + n > end) {
      return null;
    }
    int[] values = new int[n];
    for (int i = 0; i < n; i++) {
      values[i] = data[p + 16 + i] & 0xFF;
    }
    return new HuffmanTable(counts, values);
  }

  /** Bytes the table takes in its segment after the class/number byte. */
  int segmentBytes() {
    return 16 + values.length;
  }

  /** The next symbol from {@code in}, {@link #END} or {@link #BAD}. */
  int decode(EntropyBits in) {
    int code = 0;
    for (int l = 1; l <= 16; l++) {
      int bit = in.bits(1);
      if (bit < 0) {
        return END;
      }
      code = code << 1 | bit;
      if (code <= maxCode[l]) {
        return values[valPtr[l] + code - minCode[l]];
      }
    }
    return BAD;
  }
}
