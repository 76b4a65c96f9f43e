package dev.spindle.spark.example;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Reads the IDX files MNIST and Fashion-MNIST ship as ({@code *-idx3-ubyte.gz} images, {@code
 * *-idx1-ubyte.gz} labels): a big-endian header (magic {@code 0x00000803} / {@code 0x00000801},
 * dimensions), then uint8 data. Stateless; any thread.
 */
final class IdxFiles {
  static final int IMAGE_MAGIC = 0x803;
  static final int LABEL_MAGIC = 0x801;

  private IdxFiles() {}

  /** Images {@code [from, from + count)} as {@code rows*cols} bytes each, and the shape. */
  record Images(int rows, int cols, byte[][] pixels) {}

  static int count(Path file) throws IOException {
    try (DataInputStream in = open(file)) {
      int magic = in.readInt();
      if (magic != IMAGE_MAGIC && magic != LABEL_MAGIC) {
        throw bad(file, magic);
      }
      return in.readInt();
    }
  }

  static Images images(Path file, int from, int count) throws IOException {
    try (DataInputStream in = open(file)) {
      int magic = in.readInt();
      if (magic != IMAGE_MAGIC) {
        throw bad(file, magic);
      }
      int n = in.readInt();
      int rows = in.readInt();
      int cols = in.readInt();
      checkRange(file, n, from, count);
      in.skipNBytes((long) from * rows * cols);
      byte[][] out = new byte[count][rows * cols];
      for (byte[] image : out) {
        in.readFully(image);
      }
      return new Images(rows, cols, out);
    }
  }

  static byte[] labels(Path file, int from, int count) throws IOException {
    try (DataInputStream in = open(file)) {
      int magic = in.readInt();
      if (magic != LABEL_MAGIC) {
        throw bad(file, magic);
      }
      checkRange(file, in.readInt(), from, count);
      in.skipNBytes(from);
      byte[] out = new byte[count];
      in.readFully(out);
      return out;
    }
  }

  private static DataInputStream open(Path file) throws IOException {
    InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
    return new DataInputStream(
        new BufferedInputStream(
            file.toString().endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw, 1 << 16));
  }

  private static void checkRange(Path file, int n, int from, int count) {
    if (from < 0 || count < 0 || (long) from + count > n) {
      throw new IllegalArgumentException(
          "Invalid range: ["
              + from
              + ", "
              + (from + count)
              + ") of "
              + file
              + ", which holds "
              + n
              + " items");
    }
  }

  private static IOException bad(Path file, int magic) {
    return new IOException(
        "Not an IDX image or label file: "
            + file
            + " (magic 0x"
            + Integer.toHexString(magic)
            + ")");
  }
}
