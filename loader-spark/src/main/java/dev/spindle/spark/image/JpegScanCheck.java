package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.u16;

/**
 * Reads the Huffman-coded scans of a sequential or progressive JPEG the way libjpeg-turbo reads
 * them, codes only (no coefficient is computed), to find data that is missing or undecodable:
 * libjpeg-turbo only warns about it ("Corrupt JPEG data: premature end of data segment") and
 * decodes the rest as grey, and OpenCV passes no warning on. Sequential scans and progressive DC
 * scans are read completely; progressive AC scans are skipped (one end-of-band code stands for any
 * number of blocks, so only decoding them tells whether they are complete). Arithmetic-coded,
 * lossless and hierarchical JPEGs are not read. Costs about what the Huffman decoding of a full
 * decode costs, so callers run it only on suspicion ({@link GreyTail}). Confined to one thread.
 */
final class JpegScanCheck {
  private final byte[] data;
  private final int end;
  private final JpegFrame frame;
  private final HuffmanTable[] dcTables = new HuffmanTable[4];
  private final HuffmanTable[] acTables = new HuffmanTable[4];
  private int restartInterval;
  private int scans;
  private int p;

  private JpegScanCheck(byte[] data, int start, int end, JpegFrame frame) {
    this.data = data;
    this.p = start;
    this.end = end;
    this.frame = frame;
  }

  /**
   * The first problem in the scans of a JPEG whose header {@link HeaderProbe#probe} accepted that
   * libjpeg-turbo would warn about (premature end of data, a bad Huffman code, a missing restart
   * marker), or null when there is none it can see. Never reports a file that libjpeg-turbo decodes
   * without such a warning: it stops, reporting nothing, wherever the file leaves what libjpeg
   * would do open (no tables, a malformed segment).
   */
  static String problem(byte[] data, int offset, int length) throws ImageException {
    return problem(data, offset, length, JpegFrame.parse(data, offset, length));
  }

  /** {@link #problem(byte[], int, int)} with the JPEG's {@code frame} already read. */
  static String problem(byte[] data, int offset, int length, JpegFrame frame) {
    if (!frame.sequentialHuffman() && !frame.progressiveHuffman()) {
      return null;
    }
    return new JpegScanCheck(data, offset + 2, offset + length, frame).segments();
  }

  /** Walks the marker segments after SOI up to EOI, reading each scan. */
  private String segments() {
    while (p + 2 <= end && data[p] == (byte) 0xFF) {
      int q = p + 1;
      while (q < end && data[q] == (byte) 0xFF) {
        q++;
      }
      int marker = q < end ? data[q] & 0xFF : 0xD9;
      if (marker == 0xD9) {
        return null;
      }
      p = q + 1;
      if (marker == 0x01 || marker >= 0xD0 && marker <= 0xD7) {
        continue;
      }
      if (p + 2 > end || p + u16(data, p) > end) {
        return null;
      }
      String problem = segment(marker, p + u16(data, p));
      if (problem != null || p < 0) {
        return problem;
      }
    }
    return null;
  }

  /**
   * Reads the segment whose length field is at {@link #p} and moves past it; sets {@link #p} to -1
   * to stop without a problem.
   */
  private String segment(int marker, int segmentEnd) {
    int body = p + 2;
    p = segmentEnd;
    if (marker == 0xC4) {
      p = tables(body, segmentEnd) ? segmentEnd : -1;
    } else if (marker == 0xDD && segmentEnd - body >= 2) {
      restartInterval = u16(data, body);
    } else if (marker == 0xDA) {
      JpegScan scan = JpegScan.read(data, body - 2, frame);
      if (scan == null || !hasTables(scan)) {
        p = -1;
        return null;
      }
      return scan(scan);
    }
    return null;
  }

  /** Reads the tables of a DHT segment; false when one is malformed. */
  private boolean tables(int q, int segmentEnd) {
    while (q < segmentEnd) {
      int kind = data[q] & 0xFF;
      HuffmanTable t = q + 17 <= segmentEnd ? HuffmanTable.read(data, q + 1, segmentEnd) : null;
      if (t == null || (kind & 0x0F) > 3 || kind >> 4 > 1) {
        return false;
      }
      (kind >> 4 == 0 ? dcTables : acTables)[kind & 0x0F] = t;
      q += 1 + t.segmentBytes();
    }
    return true;
  }

  /** Whether the tables this scan is read with are defined (AC scans are skipped, not read). */
  private boolean hasTables(JpegScan scan) {
    if (frame.progressiveHuffman() && (scan.ss() > 0 || scan.ah() > 0)) {
      return true;
    }
    boolean ac = frame.sequentialHuffman();
    for (int i = 0; i < scan.components().length; i++) {
      if (table(dcTables, scan.dcTables()[i]) == null
          || ac && table(acTables, scan.acTables()[i]) == null) {
        return false;
      }
    }
    return true;
  }

  /** Table {@code n} (a scan header's 4 bits), or null when undefined or out of range. */
  private static HuffmanTable table(HuffmanTable[] tables, int n) {
    return n < tables.length ? tables[n] : null;
  }

  /** Reads one scan's data and moves {@link #p} to the marker after it. */
  private String scan(JpegScan scan) {
    scans++;
    EntropyBits in = new EntropyBits(data, scan.data(), end);
    if (frame.progressiveHuffman() && scan.ss() > 0) {
      p = in.skipSegment();
      return null;
    }
    int[] c = scan.components();
    long mcus =
        scan.interleaved()
            ? frame.mcusWide() * frame.mcusHigh()
            : frame.blocksWide(c[0]) * frame.blocksHigh(c[0]);
    for (long m = 0; m < mcus; m++) {
      if (restartInterval > 0 && m > 0 && m % restartInterval == 0) {
        int number = (int) ((m / restartInterval - 1) & 7);
        if (!in.restart(number)) {
          return String.format(
              "restart marker RST%d missing in scan %d before MCU %d of %d",
              number, scans, m, mcus);
        }
      }
      int result = mcu(in, scan);
      if (result != 0) {
        return String.format(
            "%s in scan %d at MCU %d of %d",
            result == HuffmanTable.BAD ? "bad Huffman code" : "premature end of data",
            scans,
            m,
            mcus);
      }
    }
    p = in.skipSegment();
    return null;
  }

  /** Reads the blocks of one MCU: 0, or {@link HuffmanTable#END} or {@link HuffmanTable#BAD}. */
  private int mcu(EntropyBits in, JpegScan scan) {
    for (int i = 0; i < scan.components().length; i++) {
      int c = scan.components()[i];
      int blocks = scan.interleaved() ? frame.h(c) * frame.v(c) : 1;
      HuffmanTable dc = table(dcTables, scan.dcTables()[i]);
      HuffmanTable ac = table(acTables, scan.acTables()[i]);
      for (int b = 0; b < blocks; b++) {
        int result = block(in, scan, dc, ac);
        if (result != 0) {
          return result;
        }
      }
    }
    return 0;
  }

  /** One block's codes as libjpeg's decode_mcu functions read them (jdhuff.c, jdphuff.c). */
  private int block(EntropyBits in, JpegScan scan, HuffmanTable dc, HuffmanTable ac) {
    if (frame.progressiveHuffman() && scan.ah() > 0) {
      return in.bits(1) < 0 ? HuffmanTable.END : 0; // DC refinement: one bit a block
    }
    int s = dc.decode(in);
    if (s < 0 || s > 0 && in.bits(s) < 0) {
      return s < 0 ? s : HuffmanTable.END;
    }
    return frame.sequentialHuffman() ? acCodes(in, ac) : 0;
  }

  /** A sequential block's AC codes, up to end-of-block or the 63rd coefficient. */
  private static int acCodes(EntropyBits in, HuffmanTable ac) {
    for (int k = 1; k < 64; k++) {
      int rs = ac.decode(in);
      if (rs < 0) {
        return rs;
      }
      int run = rs >> 4;
      int size = rs & 0x0F;
      if (size != 0) {
        k += run;
        if (in.bits(size) < 0) {
          return HuffmanTable.END;
        }
      } else if (run == 15) {
        k += 15;
      } else {
        break;
      }
    }
    return 0;
  }

  /**
   * libjpeg-turbo decodes blocks whose data is missing or undecodable as grey, with a warning that
   * OpenCV drops; Pillow refuses such a file. Called when the image ends in grey.
   */
  static void requireCompleteScans(byte[] data, int offset, int length, JpegFrame frame)
      throws ImageException {
    String problem = problem(data, offset, length, frame);
    if (problem != null) {
      throw new ImageException("Corrupt JPEG: " + problem);
    }
  }

  /**
   * libjpeg-turbo decodes a truncated file with a warning and grey fill; Pillow refuses it. A
   * complete JPEG has an end-of-image marker after its first scan (inside entropy-coded data 0xFF
   * is always followed by 0x00 or a restart marker, so 0xFFD9 there is the real end). {@code scan}:
   * the first scan's offset, -1 when there is none.
   */
  static void requireEndOfImage(byte[] data, int offset, int length, int scan)
      throws ImageException {
    if (scan >= 0) {
      for (int p = offset + length - 2; p > scan; p--) {
        if (data[p] == (byte) 0xFF && data[p + 1] == (byte) 0xD9) {
          return;
        }
      }
    }
    throw new ImageException("Truncated JPEG: no end-of-image marker after the image data");
  }
}
