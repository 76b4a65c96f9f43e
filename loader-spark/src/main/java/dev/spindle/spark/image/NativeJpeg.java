package dev.spindle.spark.image;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.bytedeco.javacpp.BytePointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spindle's native JPEG region decoder ({@code src/main/native/spindle_jpeg.c}: libjpeg-turbo,
 * linked in statically): decodes only the rows and columns a transform reads, at full or DCT-
 * reduced scale, a band of rows at a time into the calling thread's {@link DecodeScratch} ({@link
 * Band}), so the resample reads them while they are in cache. The pixels it decodes are
 * libjpeg-turbo's, as a whole-image decode by OpenCV or Pillow gives them: the region is widened by
 * {@link #margin} pixels on each side beyond what the resample reads, so the columns and rows it
 * reads never sit at the edge of the decoded part, where chroma upsampling and progressive block
 * smoothing see other neighbours than in a whole image. A decode of bytes it decoded before resumes
 * the Huffman decoding at the region's first MCU in each row from the state the earlier decode
 * recorded ({@link JpegSeekIndex}, {@code spindle_seek.c}): the same pixels, without
 * entropy-decoding the MCUs above and beside the region again.
 *
 * <p>The library is built by the Maven build ({@code src/main/native/build.sh}) into the jar at
 * {@code dev/spindle/spark/image/native/linux-ARCH/libspindlejpeg.so} and loaded from there (copied
 * to a private temporary file first). Where it is missing, cannot load, or the system property
 * {@code spindle.image.nativeJpeg} is {@code false}, {@link #AVAILABLE} is false, one line says
 * why, and {@link ImageTransform} decodes with OpenCV: the same bytes. Thread-safe.
 */
final class NativeJpeg {
  private static final Logger LOG = LoggerFactory.getLogger(NativeJpeg.class);
  private static final String LIBRARY = "libspindlejpeg.so";

  /** open()'s result[] (spindle_jpeg.c). */
  private static final int R_WIDTH = 0;

  private static final int R_HEIGHT = 1;
  private static final int R_X = 2;
  private static final int R_Y = 3;
  private static final int R_STRIDE = 4;
  private static final int R_ROWS = 5;
  private static final int R_COUNT = 6;

  /** open()'s index when none is kept yet: start one (null: none wanted). */
  private static final long[] NO_INDEX = new long[0];

  /** Why the native decoder is not used, or null when it is. */
  private static final String UNAVAILABLE = load();

  /** Whether the native decoder loaded and is enabled. */
  static final boolean AVAILABLE = UNAVAILABLE == null;

  private NativeJpeg() {}

  /** "native libjpeg-turbo region decode", or why OpenCV decodes instead. */
  static String describe() {
    return AVAILABLE
        ? "native libjpeg-turbo (region decode)"
        : "OpenCV whole-image decode (" + UNAVAILABLE + ")";
  }

  /**
   * Pixels decoded beyond what the resample reads, on each side, at 1/{@code reduce} scale: two for
   * a baseline JPEG (fancy upsampling of 2x-subsampled chroma reads the neighbouring chroma sample;
   * NativeJpegSuite fails with none and passes with two), two iMCUs (32 full-scale pixels) for a
   * progressive one, whose block smoothing may read neighbouring blocks.
   */
  static int margin(boolean progressive, int reduce) {
    return progressive ? Math.max(2, 32 / reduce) : 2;
  }

  /**
   * A region of a JPEG being decoded, its rows in order ({@link #rows}): a {@link
   * VectorResample.Source} of a {@code width x height} image (at the decode's scale) whose {@code
   * region} it decodes. Owned by one thread; close it (try-with-resources) to free the
   * decompressor. The encoded bytes stay in the thread's {@link DecodeScratch} meanwhile.
   */
  static final class Band implements VectorResample.Source, AutoCloseable {
    final int width;
    final int height;
    final VectorResample.Region region;
    final int rows;
    private final DecodeScratch scratch;
    private final JpegSeekIndex.Key key;
    private long handle;
    private int next;
    private int warnings;

    private Band(long handle, int[] r, DecodeScratch scratch, JpegSeekIndex.Key key) {
      this.handle = handle;
      this.key = key;
      this.width = r[R_WIDTH];
      this.height = r[R_HEIGHT];
      this.region = new VectorResample.Region(r[R_X], r[R_Y], r[R_STRIDE]);
      this.rows = r[R_ROWS];
      this.scratch = scratch;
    }

    /**
     * Decodes rows {@code [first, first + count)} of the region into the thread's band buffer (rows
     * before {@code first} that were not asked for are decoded and dropped).
     */
    @Override
    public ByteBuffer rows(int first, int count) throws ImageException {
      if (first < next || first + count > rows) {
        throw new IllegalArgumentException(
            "Invalid rows "
                + first
                + ".."
                + (first + count)
                + " of a region of "
                + rows
                + " rows, next "
                + next);
      }
      long rowBytes = 3L * region.rowPixels();
      BytePointer band = scratch.region(Math.toIntExact(rowBytes * Math.max(count, 1)));
      ByteBuffer out = band.position(0).limit(band.capacity()).asByteBuffer();
      while (next < first) { // margin rows above the first one read
        int skip = Math.min(first - next, Math.max(count, 1));
        read(out, skip);
      }
      read(out, count);
      return out;
    }

    /** Decodes the whole region into the thread's band buffer (for tests). */
    ByteBuffer all() throws ImageException {
      return rows(0, rows);
    }

    private void read(ByteBuffer out, int count) throws ImageException {
      if (handle == 0) {
        throw new IllegalStateException("Band closed");
      }
      warnings = NativeJpeg.read(handle, out, 0, count);
      next += count;
    }

    /** The decoder, for {@link NativeResample#fused}, which reads its rows itself. */
    long handle() {
      if (handle == 0) {
        throw new IllegalStateException("Band closed");
      }
      return handle;
    }

    /**
     * Records that {@link NativeResample#fused} read the rows it needed, with libjpeg-turbo's
     * {@code warnings}: no more rows are to be read.
     */
    void resampled(int warnings) {
      this.warnings = warnings;
      this.next = rows;
    }

    /** libjpeg-turbo's warnings so far: corrupt data it decoded as grey. */
    int warnings() {
      return warnings;
    }

    /** Frees the decompressor, keeping the seek index it grew when it decoded without warnings. */
    @Override
    public void close() {
      if (handle != 0) {
        if (key != null && warnings == 0) {
          long[] index = seekIndex(handle);
          if (index != null) {
            JpegSeekIndex.put(key, index);
          }
        }
        NativeJpeg.close(handle);
        handle = 0;
      }
    }
  }

  /**
   * Opens columns {@code [x0, x1)} and rows {@code [y0, y1)} (widened by the {@link #margin}) of
   * the JPEG in {@code data} at 1/{@code reduce} scale for decoding.
   *
   * @return the region, or null for a JPEG the native path leaves to OpenCV (CMYK, YCCK)
   * @throws ImageException with libjpeg-turbo's message when the headers are corrupt
   */
  static Band open(
      byte[] data,
      int offset,
      int length,
      int reduce,
      boolean progressive,
      int x0,
      int y0,
      int x1,
      int y1,
      DecodeScratch scratch)
      throws ImageException {
    ByteBuffer in = scratch.encoded(data, offset, length).position(0).limit(length).asByteBuffer();
    int[] r = new int[R_COUNT];
    JpegSeekIndex.Key key =
        JpegSeekIndex.ENABLED && reduce == 1 && !progressive ? JpegSeekIndex.key(in, length) : null;
    long[] index = key == null ? null : JpegSeekIndex.get(key);
    long handle =
        open(
            in,
            length,
            reduce,
            x0,
            y0,
            x1,
            y1,
            margin(progressive, reduce),
            key == null ? null : index == null ? NO_INDEX : index,
            r);
    return handle == 0 ? null : new Band(handle, r, scratch, key);
  }

  private static native long open(
      ByteBuffer in,
      int length,
      int scale,
      int x0,
      int y0,
      int x1,
      int y1,
      int margin,
      long[] index,
      int[] result)
      throws ImageException;

  /** The seek index as the decode of {@code handle} grew it, or null when it did not. */
  private static native long[] seekIndex(long handle);

  private static native int read(long handle, ByteBuffer out, long offset, int rows)
      throws ImageException;

  private static native void close(long handle);

  /** Loads the library; null, or why not (logged once). */
  private static String load() {
    if ("false".equalsIgnoreCase(System.getProperty("spindle.image.nativeJpeg"))) {
      return "disabled by spindle.image.nativeJpeg=false";
    }
    String arch =
        switch (System.getProperty("os.arch")) {
          case "amd64", "x86_64" -> "x86_64";
          case "aarch64", "arm64" -> "aarch64";
          default -> null;
        };
    String why;
    if (arch == null || !System.getProperty("os.name").startsWith("Linux")) {
      why =
          "no native build for "
              + System.getProperty("os.name")
              + " "
              + System.getProperty("os.arch");
    } else {
      why = loadFrom("native/linux-" + arch + "/" + LIBRARY);
    }
    if (why != null) {
      LOG.info("Spindle decodes JPEGs with OpenCV: {}", why);
    }
    return why;
  }

  private static String loadFrom(String resource) {
    try (InputStream lib = NativeJpeg.class.getResourceAsStream(resource)) {
      if (lib == null) {
        return "the jar has no "
            + resource
            + " (built without a C compiler or"
            + " libjpeg62-turbo-dev)";
      }
      // a file of this JVM's own: concurrent executors never see each other's half-written copy
      Path file = Files.createTempFile("spindle-jpeg-", ".so");
      try {
        Files.copy(lib, file, StandardCopyOption.REPLACE_EXISTING);
        System.load(file.toAbsolutePath().toString());
      } finally {
        Files.deleteIfExists(file); // loaded: the mapping outlives the name
      }
      return null;
    } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
      return "cannot load " + resource + ": " + e;
    }
  }
}
