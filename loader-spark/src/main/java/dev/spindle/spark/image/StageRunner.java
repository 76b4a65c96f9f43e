package dev.spindle.spark.image;

import java.util.Arrays;

/** Executes one {@link Stage} on an RGB image with {@link PillowResample}. Stateless. */
final class StageRunner {
  private StageRunner() {}

  /**
   * Runs {@code stage} on {@code source}, writing the stage's window ({@code width * height * 3}
   * RGB bytes) into {@code out}. {@code reduce} is the JPEG decoder's scale denominator: 1 reads
   * the view exactly as Pillow crops; above 1 the source is the reduced image and the view becomes
   * a fractional resampling box in it.
   */
  static void run(Stage stage, DecodedImage source, int reduce, byte[] out, DecodeScratch scratch) {
    Stage.Rect win = stage.window();
    int cx0 = clamp(win.x(), stage.resizedWidth());
    int cx1 = clamp(win.x() + win.width(), stage.resizedWidth());
    int cy0 = clamp(win.y(), stage.resizedHeight());
    int cy1 = clamp(win.y() + win.height(), stage.resizedHeight());
    int insideWidth = cx1 - cx0;
    boolean direct = !stage.flip() && !stage.pads();
    if (!direct) {
      Arrays.fill(out, 0, win.width() * win.height() * 3, (byte) 0);
    }
    if (insideWidth <= 0 || cy1 <= cy0) {
      return;
    }
    PillowResample.Kernel kx =
        kernel(stage, reduce, source.width(), true, cx0, insideWidth, scratch);
    PillowResample.Kernel ky =
        kernel(stage, reduce, source.height(), false, cy0, cy1 - cy0, scratch);
    int y0 = ky.firstInput();
    int y1 = ky.endInput();
    int[] rows = scratch.ints(DecodeScratch.IntSlot.ROWS, (y1 - y0) * insideWidth * 3);
    PillowResample.horizontal(
        source.pixels(),
        source.width(),
        y0,
        y1,
        kx,
        rows,
        scratch.ints(DecodeScratch.IntSlot.ROW, source.width() * 3));
    int[] acc = scratch.ints(DecodeScratch.IntSlot.ACCUMULATOR, insideWidth * 3);
    if (direct) {
      PillowResample.vertical(rows, y0, insideWidth, ky, out, 0, insideWidth * 3, acc);
      return;
    }
    byte[] inside = scratch.bytes(DecodeScratch.Slot.WINDOW, insideWidth * (cy1 - cy0) * 3);
    PillowResample.vertical(rows, y0, insideWidth, ky, inside, 0, insideWidth * 3, acc);
    blit(inside, insideWidth, cy1 - cy0, out, win, cx0 - win.x(), cy0 - win.y(), stage.flip());
  }

  /** The kernels of both axes of a stage's output window. */
  record Kernels(PillowResample.Kernel x, PillowResample.Kernel y) {}

  /**
   * The kernels of {@code stage}'s output window ({@link Stage#window}) for a {@code sourceWidth x
   * sourceHeight} source (at {@code 1 / reduce} scale): every resample path takes them from here,
   * so they all sum the same taps.
   */
  static Kernels kernels(
      Stage stage, int reduce, int sourceWidth, int sourceHeight, DecodeScratch scratch) {
    Stage.Rect win = stage.window();
    return new Kernels(
        kernel(stage, reduce, sourceWidth, true, win.x(), win.width(), scratch),
        kernel(stage, reduce, sourceHeight, false, win.y(), win.height(), scratch));
  }

  /**
   * The kernel of one axis of {@code stage}: outputs {@code [first, first + count)}; the thread's
   * cached one when it computed the same kernel recently.
   */
  static PillowResample.Kernel kernel(
      Stage stage,
      int reduce,
      int sourceSize,
      boolean horizontal,
      int first,
      int count,
      DecodeScratch scratch) {
    int offset = horizontal ? stage.view().x() : stage.view().y();
    int size = horizontal ? stage.view().width() : stage.view().height();
    int out = horizontal ? stage.resizedWidth() : stage.resizedHeight();
    if (reduce == 1) {
      return kernel(stage.filter(), size, 0, size, out, first, count, offset, scratch);
    }
    double in0 = (double) offset / reduce;
    double in1 = (double) (offset + size) / reduce;
    return kernel(stage.filter(), sourceSize, in0, in1, out, first, count, 0, scratch);
  }

  /** {@link PillowResample#kernel}'s arguments, as a cache key. */
  private record KernelKey(
      ResampleFilter filter,
      int inSize,
      double in0,
      double in1,
      int outSize,
      int first,
      int count,
      int offset) {}

  private static PillowResample.Kernel kernel(
      ResampleFilter filter,
      int inSize,
      double in0,
      double in1,
      int outSize,
      int first,
      int count,
      int offset,
      DecodeScratch scratch) {
    return scratch.kernel(
        new KernelKey(filter, inSize, in0, in1, outSize, first, count, offset),
        () -> PillowResample.kernel(filter, inSize, in0, in1, outSize, first, count, offset));
  }

  /** Copies the computed part into the window at (x, y), mirroring columns when {@code flip}. */
  private static void blit(
      byte[] inside,
      int width,
      int height,
      byte[] out,
      Stage.Rect win,
      int x,
      int y,
      boolean flip) {
    int outStride = win.width() * 3;
    for (int r = 0; r < height; r++) {
      int src = r * width * 3;
      int dst = (y + r) * outStride;
      if (!flip) {
        System.arraycopy(inside, src, out, dst + x * 3, width * 3);
        continue;
      }
      for (int c = 0; c < width; c++) {
        int d = dst + (win.width() - 1 - (x + c)) * 3;
        out[d] = inside[src + c * 3];
        out[d + 1] = inside[src + c * 3 + 1];
        out[d + 2] = inside[src + c * 3 + 2];
      }
    }
  }

  private static int clamp(int v, int max) {
    return Math.max(0, Math.min(v, max));
  }
}
