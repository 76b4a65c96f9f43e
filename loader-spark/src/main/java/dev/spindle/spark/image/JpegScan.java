package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.u16;

/**
 * One JPEG scan header (SOS, ITU T.81 B.2.3): the frame components it codes with their Huffman
 * table numbers, its spectral band and successive approximation bits, and where its entropy-coded
 * data starts.
 *
 * @param components indices into the frame's components, in scan order
 * @param dcTables DC table number of each scan component
 * @param acTables AC table number of each scan component
 * @param ss start of the spectral band (0 for a DC or sequential scan)
 * @param ah successive approximation high bit (0 for a first scan of its band)
 * @param data offset of the first entropy-coded byte
 */
record JpegScan(int[] components, int[] dcTables, int[] acTables, int ss, int ah, int data) {

  /**
   * The scan whose header's length field is at {@code p} (the probe has checked that the segment
   * lies in the data), or null when it is not a well-formed scan of {@code frame}: libjpeg then
   * refuses the file, or (a component-less progressive scan) reads no data from it.
   */
  static JpegScan read(byte[] data, int p, JpegFrame frame) {
    int segment = u16(data, p);
    int n = segment < 8 ? 0 : data[p + 2] & 0xFF;
    if (n < 1 || n > 4 || segment != 6 + 2 * n) {
      return null;
    }
    int[] components = new int[n];
    int[] dc = new int[n];
    int[] ac = new int[n];
    for (int i = 0; i < n; i++) {
      components[i] = frame.index(data[p + 3 + 2 * i] & 0xFF);
      if (components[i] < 0) {
        return null;
      }
      dc[i] = (data[p + 4 + 2 * i] & 0xFF) >> 4;
      ac[i] = data[p + 4 + 2 * i] & 0x0F;
    }
    int q = p + 3 + 2 * n;
    return new JpegScan(components, dc, ac, data[q] & 0xFF, (data[q + 2] & 0xFF) >> 4, p + segment);
  }

  /**
   * The fewest entropy-coded bits any valid file has in this scan when it is the file's first.
   * Every block of every component of a scan is coded; a Huffman code is at least 1 bit long.
   * Sequential (Huffman): each block is a DC code and at least one AC code (an end-of-block, or a
   * run/size code; a block never ends without one), so 2 bits. Progressive (Huffman): a first DC
   * scan has one DC code per block, 1 bit; AC scans code runs of empty blocks in one end-of-band
   * code, and a later scan may be missing altogether, so no bound. Arithmetic-coded data can code a
   * block in a fraction of a bit, so no bound either. Counting each component's own blocks, without
   * the padding blocks of interleaved MCUs, only lowers the bound.
   */
  long minimumBits(JpegFrame frame) {
    if (frame.sequentialHuffman()) {
      return 2 * blocks(frame);
    }
    return frame.progressiveHuffman() && ss == 0 && ah == 0 ? blocks(frame) : 0;
  }

  /** A single-component scan codes the component's own blocks, one block per MCU. */
  boolean interleaved() {
    return components.length > 1;
  }

  /** The blocks this scan codes, not counting the padding of interleaved MCUs. */
  long blocks(JpegFrame frame) {
    long n = 0;
    for (int c : components) {
      n += frame.blocksWide(c) * frame.blocksHigh(c);
    }
    return n;
  }
}
