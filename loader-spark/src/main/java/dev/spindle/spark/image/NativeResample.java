package dev.spindle.spark.image;

import java.nio.ByteBuffer;
import java.util.Locale;
import org.apache.arrow.memory.ArrowBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The native resample ({@code src/main/native/spindle_resample.c}, in {@link NativeJpeg}'s
 * library): the last {@link Stage} of a transform (one resample, no padding, upright image) with
 * {@link PillowResample}'s integer arithmetic, fused band by band with {@link NativeJpeg}'s region
 * decode (a source row decoded, resampled horizontally into a ring of the rows the vertical pass
 * needs, each output row converted and written straight into the batch's Arrow memory), or run on
 * an image decoded into native memory (OpenCV's buffer). Same bytes as the Java paths ({@link
 * VectorResample}, {@link StageRunner}): the kernels are the same {@link PillowResample.Kernel}s,
 * the output conversion uses {@link OutputWriter}'s tables.
 *
 * <p>SIMD level chosen at run time: {@link #AVX2} (with FMA), {@link #SSE41} or {@link #C} (plain
 * C), the best the CPU has. When it runs, by default ({@code auto}): at {@link #AVX2} everywhere,
 * because there both passes run on 8 rows or columns at a time (the horizontal one on transposed
 * bytes, as the Java vector path does) and cost less than the JIT-compiled vector path
 * (docs/benchmarks.md, "The native resample on 8 lanes": 1.3-1.45 times less CPU per image with the
 * decode); at {@link #SSE41} or {@link #C} (one pixel at a time, slower than the vector path) only
 * in place of the scalar Java path, that is where the Java vector path ({@link VectorPath}) is not
 * running (a JVM without {@code jdk.incubator.vector}, a CPU without 256-bit vectors, or before C2
 * has compiled it). The system property {@code spindle.image.nativeResample} changes that: {@code
 * true} runs it everywhere at the best level, {@code avx2}, {@code sse4.1} or {@code c} everywhere
 * at that level, {@code false} (or {@code java}) never; a library that did not load ({@link
 * NativeJpeg#AVAILABLE}) means never. A level the CPU lacks is refused (the Java paths run, {@link
 * #describe} says why). The property is for tests and benchmarks; users have no key for it.
 * Stateless and thread-safe; each call's buffers are its own (native, freed before it returns).
 */
final class NativeResample {
  private static final Logger LOG = LoggerFactory.getLogger(NativeResample.class);

  /** SIMD levels (spindle_resample.c's LEVEL_*). */
  static final int C = 0;

  static final int SSE41 = 1;
  static final int AVX2 = 2;

  /** Output modes (spindle_resample.c's MODE_*). */
  private static final int MODE_UINT8_HWC = 0;

  private static final int MODE_UINT8_CHW = 1;
  private static final int MODE_FLOAT32_CHW = 2;
  private static final int MODE_FLOAT16_CHW = 3;

  private static final String[] NAMES = {"c", "sse4.1", "avx2"};

  /** The best level this CPU runs, or -1 without the library. */
  static final int BEST = NativeJpeg.AVAILABLE ? bestLevel() : -1;

  /** Why the native resample is off, or null when it runs. */
  private static final String OFF = off();

  /** The level {@link ImageTransform#apply} uses when it runs the native resample, or -1: never. */
  static final int LEVEL = OFF == null ? chosen() : -1;

  /**
   * Whether the native resample runs even where the Java vector path runs: at {@link #AVX2}, or
   * when spindle.image.nativeResample is {@code true} or names a level; otherwise only in place of
   * the scalar Java path.
   */
  static final boolean EVERYWHERE =
      LEVEL == AVX2 || (LEVEL >= 0 && !property().isEmpty() && !property().equals("auto"));

  private NativeResample() {}

  /** Whether {@code level} runs on this machine (the library loaded and the CPU has it). */
  static boolean supported(int level) {
    return level >= C && level <= BEST;
  }

  /** The levels this machine runs, plain C first. */
  static int[] supportedLevels() {
    int[] levels = new int[BEST + 1];
    for (int i = 0; i <= BEST; i++) {
      levels[i] = i;
    }
    return levels;
  }

  /** "c", "sse4.1" or "avx2". */
  static String name(int level) {
    return NAMES[level];
  }

  /**
   * The level for one image: {@link #LEVEL} when the native resample runs {@link #EVERYWHERE} or
   * the Java vector path does not run ({@code vector} false), else -1 (the Java vector path).
   */
  static int levelFor(boolean vector) {
    return EVERYWHERE || !vector ? LEVEL : -1;
  }

  /**
   * "native (avx2)" and the like when it runs everywhere; "native (sse4.1) where the Java vector
   * path does not run" and the like at the slower levels by default; or "java (why)".
   */
  static String describe() {
    if (LEVEL < 0) {
      return "java (" + OFF + ")";
    }
    return "native ("
        + name(LEVEL)
        + ")"
        + (EVERYWHERE ? "" : " where the Java vector path does not run");
  }

  private static String property() {
    return System.getProperty("spindle.image.nativeResample", "").trim().toLowerCase(Locale.ROOT);
  }

  private static String off() {
    String p = property();
    String why = null;
    if (p.equalsIgnoreCase("false") || p.equalsIgnoreCase("java")) {
      why = "disabled by spindle.image.nativeResample=" + p;
    } else if (!NativeJpeg.AVAILABLE) {
      why = "no native library: " + NativeJpeg.describe();
    } else if (!p.isEmpty() && !p.equals("true") && !p.equals("auto")) {
      int forced = level(p);
      if (forced < 0) {
        why =
            "invalid spindle.image.nativeResample=" + p + " (auto, true, false, avx2, sse4.1 or c)";
      } else if (!supported(forced)) {
        why = "spindle.image.nativeResample=" + p + " but this CPU runs at most " + name(BEST);
      }
    }
    if (why != null) {
      LOG.info("Spindle resamples in Java: {}", why);
    }
    return why;
  }

  private static int chosen() {
    int forced = level(property());
    return forced >= 0 ? forced : BEST;
  }

  private static int level(String name) {
    for (int i = 0; i < NAMES.length; i++) {
      if (NAMES[i].equals(name)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Whether the native resample can write {@code writer}'s output at {@code dst[dstOffset]}: its
   * float values must be aligned (Arrow's buffers and Spindle's batch rows are).
   */
  static boolean canWrite(OutputWriter writer, ArrowBuf dst, long dstOffset) {
    long address = dst.memoryAddress() + dstOffset;
    return address % writer.mode().bytesPerValue() == 0;
  }

  /**
   * Decodes the rows of {@code band} that {@code stage} reads and resamples them into {@code dst}
   * at {@code level}, band by band; {@code band} is consumed (close it). {@code w x h} is the
   * image's size at {@code 1 / reduce} scale.
   */
  static void fused(
      Stage stage,
      NativeJpeg.Band band,
      int w,
      int h,
      int reduce,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
      int level,
      DecodeScratch scratch)
      throws ImageException {
    VectorResample.Region region = band.region;
    band.resampled(
        run(
            stage,
            band.handle(),
            null,
            region.rowPixels(),
            region.x(),
            region.y(),
            w,
            h,
            reduce,
            writer,
            dst,
            dstOffset,
            level,
            scratch));
  }

  /**
   * Resamples an upright {@code width x height} RGB image in native memory ({@code rgb}, a direct
   * buffer, from position 0) into {@code dst} at {@code level}.
   */
  static void fromMemory(
      Stage stage,
      ByteBuffer rgb,
      int width,
      int height,
      int reduce,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
      int level,
      DecodeScratch scratch)
      throws ImageException {
    run(stage, 0L, rgb, width, 0, 0, width, height, reduce, writer, dst, dstOffset, level, scratch);
  }

  /**
   * The kernels of {@code stage} for a {@code srcWidth x srcHeight} source whose rows (of {@code
   * rowPixels} pixels from column {@code regionX}, the first being row {@code regionY}) come from
   * the decoder {@code handle} or from {@code memory} (whose row 0 is the image's row 0); native
   * sums and writes. Returns libjpeg's warnings (0 from memory).
   */
  private static int run(
      Stage stage,
      long handle,
      ByteBuffer memory,
      int rowPixels,
      int regionX,
      int regionY,
      int srcWidth,
      int srcHeight,
      int reduce,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
      int level,
      DecodeScratch scratch)
      throws ImageException {
    Stage.Rect win = stage.window();
    int w = win.width();
    int h = win.height();
    StageRunner.Kernels k = StageRunner.kernels(stage, reduce, srcWidth, srcHeight, scratch);
    PillowResample.Kernel kx = k.x();
    PillowResample.Kernel ky = k.y();
    PillowResample.Padded pad = kx.padded(srcWidth);
    int taps = pad.taps();
    int n = pad.start().length;
    int[] xstart = new int[w];
    int[] xk = new int[w * taps];
    for (int x = 0; x < w; x++) {
      int sx = stage.flip() ? n - 1 - x : x; // a flip reads the columns' kernels mirrored
      xstart[x] = pad.start()[sx] - regionX;
      System.arraycopy(pad.k(), sx * taps, xk, x * taps, taps);
    }
    int y0 = ky.firstInput();
    int rows = ky.endInput() - y0;
    int[] ystart = new int[h];
    for (int y = 0; y < h; y++) {
      ystart[y] = ky.start()[y] - y0;
    }
    ByteBuffer source =
        memory == null ? null : memory.slice(y0 * rowPixels * 3, rows * rowPixels * 3);
    OutputMode mode = writer.mode();
    return resample(
        handle,
        source,
        rowPixels * 3,
        handle != 0 ? y0 : 0, // the decoder counts the image's rows
        rows,
        xstart,
        xk,
        taps,
        w,
        ystart,
        ky.taps(),
        ky.k(),
        ky.ksize(),
        h,
        switch (mode) {
          case UINT8_HWC -> MODE_UINT8_HWC;
          case UINT8_CHW -> MODE_UINT8_CHW;
          case FLOAT32_CHW -> MODE_FLOAT32_CHW;
          case FLOAT16_CHW -> MODE_FLOAT16_CHW;
        },
        mode == OutputMode.FLOAT32_CHW ? writer.floatTable() : null,
        mode == OutputMode.FLOAT32_CHW ? normalization(writer) : null,
        mode == OutputMode.FLOAT16_CHW ? writer.halfTable() : null,
        dst.memoryAddress() + dstOffset,
        dst.capacity() - dstOffset,
        level);
  }

  /**
   * The means then the standard deviations of {@code writer}'s normalization, or null without one:
   * the AVX2 level computes float32 values in vectors from them (checking each channel against
   * {@link OutputWriter#floatTable} first, reading the table where they differ).
   */
  private static float[] normalization(OutputWriter writer) {
    float[] mean = writer.mean();
    float[] std = writer.std();
    if (mean == null || std == null) {
      return null;
    }
    return new float[] {mean[0], mean[1], mean[2], std[0], std[1], std[2]};
  }

  private static native int resample(
      long decoder,
      ByteBuffer memory,
      int stride,
      int y0,
      int rows,
      int[] xstart,
      int[] xk,
      int taps,
      int w,
      int[] ystart,
      int[] ytaps,
      int[] yk,
      int ksize,
      int h,
      int mode,
      float[] floats,
      float[] norm,
      short[] halves,
      long dst,
      long dstBytes,
      int level)
      throws ImageException;

  private static native int bestLevel();
}
