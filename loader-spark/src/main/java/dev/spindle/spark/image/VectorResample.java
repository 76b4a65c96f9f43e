package dev.spindle.spark.image;

import static dev.spindle.spark.image.VectorLanes.LANES;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The last {@link Stage} of a transform (no padding) with {@link PillowResample}'s exact integer
 * arithmetic, eight values at a time with the JDK Vector API ({@code jdk.incubator.vector},
 * 256-bit), written straight into the destination in its {@link OutputMode}.
 *
 * <p>Same sums as the scalar passes, in the same order of passes, so the same bytes: each output
 * value is {@code HALF + sum(input * coefficient)} over its own taps, clipped to 0..255 after each
 * pass; only the lanes differ.
 *
 * <ul>
 *   <li>{@link VectorHorizontalPass}: 8 source rows at a time, transposed ({@link VectorTranspose})
 *       so that one vector holds one (column, channel) of 8 rows, into {@code planar}, 8x8 tiles of
 *       bytes per channel and group of 8 output columns.
 *   <li>{@link VectorVerticalPass}: 8 output columns at a time from {@code planar}, fused with the
 *       output conversion (float32 CHW straight into the Arrow buffer).
 * </ul>
 *
 * Both compute in {@link VectorLanes}. This class is the entry: it sets up both passes' kernels and
 * the planar buffer, and hands the source's rows to the horizontal pass.
 *
 * <p>Used only when the module is present and the CPU has 256-bit vectors ({@link VectorPath});
 * otherwise {@link StageRunner} and {@link OutputWriter#write} run the same arithmetic in scalar
 * Java. Stateless; called on the thread that runs the transform; buffers come from that thread's
 * {@link DecodeScratch}; the destination is the caller's.
 */
final class VectorResample {
  private VectorResample() {}

  /**
   * Runs {@code stage} (which must not pad) on {@code source} and writes its window, {@code
   * window.width() x window.height()}, through {@code writer} at {@code dst[dstOffset]}.
   */
  static void run(
      Stage stage,
      DecodedImage source,
      int reduce,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
      boolean permute,
      DecodeScratch scratch) {
    run(
        stage,
        ByteBuffer.wrap(source.pixels()),
        source.width(),
        source.height(),
        reduce,
        writer,
        dst,
        dstOffset,
        permute,
        scratch);
  }

  /**
   * {@link #run} on an image of {@code width x height} RGB bytes in {@code rgb} (from its position
   * 0; for example the decoder's native buffer, read only where the stage needs it).
   */
  static void run(
      Stage stage,
      ByteBuffer rgb,
      int width,
      int height,
      int reduce,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
      boolean permute,
      DecodeScratch scratch) {
    try {
      run(
          stage,
          (first, count) -> rgb.slice(first * width * 3, count * width * 3),
          width,
          height,
          new Region(0, 0, width),
          reduce,
          writer,
          dst,
          dstOffset,
          permute,
          scratch);
    } catch (ImageException e) {
      throw new IllegalStateException(e); // a whole image in memory: nothing left to decode
    }
  }

  /**
   * The source's pixels, handed to the horizontal pass in order, a few rows at a time, for example
   * as a decoder produces them.
   */
  @FunctionalInterface
  interface Source {
    /**
     * Rows {@code [first, first + count)} of the region (relative to its first row), one after
     * another, each {@link Region#rowPixels()} pixels wide, from position 0 of the buffer returned;
     * valid until the next call. Called with consecutive ranges.
     */
    ByteBuffer rows(int first, int count) throws ImageException;
  }

  /**
   * Where the pixels of a {@code width x height} source image are: rows of {@code rowPixels} pixels
   * whose first is the source's column {@code x}, the first row being the source's row {@code y}. A
   * whole image is {@code (0, 0, width)}; a decoded region ({@link NativeJpeg}) holds at least
   * {@link #sourceRegion}.
   */
  record Region(int x, int y, int rowPixels) {}

  /**
   * {@link #run} on the part of a {@code width x height} image that {@code region} places in {@code
   * source}; it must hold every pixel {@link #sourceRegion} names. Reads the source's rows in order
   * while it resamples them, so a decoder's rows are used while in cache.
   *
   * @throws ImageException when {@code source} cannot decode its rows
   */
  static void run(
      Stage stage,
      Source source,
      int width,
      int height,
      Region region,
      int reduce,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
      boolean permute,
      DecodeScratch scratch)
      throws ImageException {
    Stage.Rect win = stage.window();
    ByteBuffer floats =
        writer.mode() != OutputMode.FLOAT32_CHW
            ? null
            : dst.nioBuffer(dstOffset, win.width() * win.height() * 3 * 4)
                .order(ByteOrder.LITTLE_ENDIAN);
    run(
        stage, source, width, height, region, reduce, writer, floats, dst, dstOffset, permute,
        scratch);
  }

  /**
   * The source pixels {@link #run} reads of a {@code width x height} image (at {@code 1 / reduce}
   * scale): {@code {x0, y0, x1, y1}}, columns {@code [x0, x1)} and rows {@code [y0, y1)}, the taps
   * of the window's columns and rows.
   */
  static int[] sourceRegion(Stage stage, int width, int height, int reduce, DecodeScratch scratch) {
    StageRunner.Kernels k = StageRunner.kernels(stage, reduce, width, height, scratch);
    PillowResample.Padded pad = k.x().padded(width);
    return new int[] {pad.first(), k.y().firstInput(), pad.end(), k.y().endInput()};
  }

  /** {@link #run}; float32 output goes to {@code floats} (from 0), other modes to {@code dst}. */
  private static void run(
      Stage stage,
      Source source,
      int srcWidth,
      int srcHeight,
      Region region,
      int reduce,
      OutputWriter writer,
      ByteBuffer floats,
      ArrowBuf dst,
      long dstOffset,
      boolean permute,
      DecodeScratch scratch)
      throws ImageException {
    Stage.Rect win = stage.window();
    int w = win.width();
    int h = win.height();
    StageRunner.Kernels k = StageRunner.kernels(stage, reduce, srcWidth, srcHeight, scratch);
    PillowResample.Kernel kx = k.x();
    PillowResample.Kernel ky = k.y();
    int y0 = ky.firstInput();
    int rows = ky.endInput() - y0;
    int width = (w + LANES - 1) / LANES * LANES;
    int paddedRows = (rows + LANES - 1) / LANES * LANES;
    byte[] planar = scratch.bytes(DecodeScratch.Slot.PLANAR, 3 * paddedRows * width);
    VectorHorizontalPass.horizontal(
        source,
        srcWidth,
        region,
        y0,
        rows,
        kx,
        stage.flip(),
        width,
        paddedRows,
        planar,
        permute,
        scratch);
    VectorVerticalPass.vertical(
        planar, y0, width, paddedRows, ky, w, h, writer, floats, dst, dstOffset, scratch);
  }
}
