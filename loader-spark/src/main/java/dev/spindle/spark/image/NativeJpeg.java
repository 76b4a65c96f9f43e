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
 * reduced scale, into the calling thread's {@link DecodeScratch}. The pixels it decodes are
 * libjpeg-turbo's, as a whole-image decode by OpenCV or Pillow gives them: the region is widened
 * by {@link #margin} pixels on each side beyond what the resample reads, so the columns and rows
 * it reads never sit at the edge of the decoded part, where chroma upsampling and progressive
 * block smoothing see other neighbours than in a whole image.
 *
 * <p>The library is built by the Maven build ({@code src/main/native/build.sh}) into the jar at
 * {@code dev/spindle/spark/image/native/linux-ARCH/libspindlejpeg.so} and loaded from there
 * (copied to a private temporary file first). Where it is missing, cannot load, or the system
 * property {@code spindle.image.nativeJpeg} is {@code false}, {@link #AVAILABLE} is false, one
 * line says why, and {@link ImageTransform} decodes with OpenCV: the same bytes. Thread-safe.
 */
final class NativeJpeg {
  private static final Logger LOG = LoggerFactory.getLogger(NativeJpeg.class);
  private static final String LIBRARY = "libspindlejpeg.so";

  /** decode()'s results (spindle_jpeg.c). */
  private static final int OK = 0;
  private static final int UNSUPPORTED = 1;
  private static final int TOO_SMALL = 2;
  private static final int R_NEEDED = 0;
  private static final int R_WIDTH = 1;
  private static final int R_HEIGHT = 2;
  private static final int R_X = 3;
  private static final int R_Y = 4;
  private static final int R_STRIDE = 5;
  private static final int R_ROWS = 6;
  private static final int R_WARNINGS = 7;
  private static final int R_PROGRESSIVE = 8;
  private static final int R_COUNT = 9;

  /** Why the native decoder is not used, or null when it is. */
  private static final String UNAVAILABLE = load();

  /** Whether the native decoder loaded and is enabled. */
  static final boolean AVAILABLE = UNAVAILABLE == null;

  private NativeJpeg() {}

  /** "native libjpeg-turbo region decode", or why OpenCV decodes instead. */
  static String describe() {
    return AVAILABLE ? "native libjpeg-turbo (region decode)"
        : "OpenCV whole-image decode (" + UNAVAILABLE + ")";
  }

  /**
   * Pixels decoded beyond what the resample reads, on each side, at 1/{@code reduce} scale: one
   * for a baseline JPEG (its chroma upsampling reads one neighbouring sample), two iMCUs (32
   * full-scale pixels) for a progressive one, whose block smoothing reads neighbouring blocks.
   */
  static int margin(boolean progressive, int reduce) {
    return progressive ? Math.max(2, 32 / reduce) : 2;
  }

  /** A decoded region: see {@link VectorResample.Region}, of a {@code width x height} image. */
  record Decoded(ByteBuffer rgb, int width, int height, VectorResample.Region region,
      int warnings) {}

  /**
   * Decodes columns {@code [x0, x1)} and rows {@code [y0, y1)} (and the {@link #margin}) of the
   * JPEG in {@code data} at 1/{@code reduce} scale, whose size {@code width x height} the caller
   * computed; the pixels stay valid until this thread's next decode.
   *
   * @return the region, or null for a JPEG the native path leaves to OpenCV (CMYK, YCCK)
   * @throws ImageException with libjpeg-turbo's message when the data is corrupt
   */
  static Decoded decode(byte[] data, int offset, int length, int reduce, boolean progressive,
      int x0, int y0, int x1, int y1, DecodeScratch scratch) throws ImageException {
    BytePointer encoded = scratch.encoded(length);
    encoded.position(0).put(data, offset, length);
    ByteBuffer in = encoded.position(0).limit(length).asByteBuffer();
    int[] r = new int[R_COUNT];
    int margin = margin(progressive, reduce);
    int guess = Math.multiplyExact(Math.multiplyExact(x1 - x0 + 2 * margin + 64, 3),
        y1 - y0 + 2 * margin);
    for (int attempt = 0; attempt < 2; attempt++) {
      BytePointer pixels = scratch.region(attempt == 0 ? guess : r[R_NEEDED]);
      ByteBuffer out = pixels.position(0).limit(pixels.capacity()).asByteBuffer();
      int status = decode(in, length, reduce, x0, y0, x1, y1, margin, out, r);
      if (status == UNSUPPORTED) {
        return null;
      }
      if (status == OK) {
        return new Decoded(out, r[R_WIDTH], r[R_HEIGHT],
            new VectorResample.Region(r[R_X], r[R_Y], r[R_STRIDE]), r[R_WARNINGS]);
      }
      if (status != TOO_SMALL) {
        throw new IllegalStateException("Native JPEG decoder returned " + status);
      }
    }
    throw new IllegalStateException("Native JPEG decoder: region buffer of " + r[R_NEEDED]
        + " bytes still too small");
  }

  /**
   * The size of the JPEG at 1/{@code reduce} scale as libjpeg computes it ({@code {width,
   * height, progressive}}), or null for one the native path leaves to OpenCV.
   */
  static int[] scaledSize(byte[] data, int offset, int length, int reduce, DecodeScratch scratch)
      throws ImageException {
    BytePointer encoded = scratch.encoded(length);
    encoded.position(0).put(data, offset, length);
    ByteBuffer in = encoded.position(0).limit(length).asByteBuffer();
    int[] r = new int[R_COUNT];
    if (decode(in, length, reduce, 0, 0, 0, 0, 0, null, r) == UNSUPPORTED) {
      return null;
    }
    return new int[] {r[R_WIDTH], r[R_HEIGHT], r[R_PROGRESSIVE]};
  }

  private static native int decode(ByteBuffer in, int length, int scale, int x0, int y0, int x1,
      int y1, int margin, ByteBuffer out, int[] result) throws ImageException;

  /** Loads the library; null, or why not (logged once). */
  private static String load() {
    if ("false".equalsIgnoreCase(System.getProperty("spindle.image.nativeJpeg"))) {
      return "disabled by spindle.image.nativeJpeg=false";
    }
    String arch = switch (System.getProperty("os.arch")) {
      case "amd64", "x86_64" -> "x86_64";
      case "aarch64", "arm64" -> "aarch64";
      default -> null;
    };
    String why;
    if (arch == null || !System.getProperty("os.name").startsWith("Linux")) {
      why = "no native build for " + System.getProperty("os.name") + " "
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
        return "the jar has no " + resource + " (built without a C compiler or"
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
