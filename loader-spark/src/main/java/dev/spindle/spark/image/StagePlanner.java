package dev.spindle.spark.image;

import dev.spindle.spark.plan.SplitMix64;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a chain of {@link ImageOp}s into as few resample {@link Stage}s as exactness allows.
 *
 * <p>Crops before a resize become the resize's source view and crops after it become its output
 * window, so {@code resize + center_crop} and {@code random_resized_crop} are one pass that
 * computes only the kept pixels. A second resize, a resize of a padded or flipped image, start a
 * new stage (materialised in between), because fusing them would change Pillow's results. Needs
 * only image dimensions and the sample's random stream. One instance per planned image.
 */
final class StagePlanner {
  private final List<Stage> stages = new ArrayList<>();
  private int sourceWidth;
  private int sourceHeight;
  private Window view;
  private int resizedWidth;
  private int resizedHeight;
  private ResampleFilter filter;
  private Stage.Rect window;
  private boolean flip;

  private StagePlanner(int width, int height) {
    fresh(width, height);
  }

  /**
   * Plans {@code ops} for an image of {@code width x height}; draws randomness from {@code rng}.
   */
  static List<Stage> plan(List<ImageOp> ops, int width, int height, SplitMix64 rng) {
    StagePlanner p = new StagePlanner(width, height);
    for (ImageOp op : ops) {
      p.add(op, rng);
    }
    p.stages.add(p.current());
    return p.stages;
  }

  private void add(ImageOp op, SplitMix64 rng) {
    if (op instanceof ImageOp.Resize r) {
      int[] size = r.outputSize(window.width(), window.height());
      resize(size[0], size[1], r.filter());
    } else if (op instanceof ImageOp.CenterCrop c) {
      centerCrop(c.height(), c.width());
    } else if (op instanceof ImageOp.Crop c) {
      crop(c.top(), c.left(), c.height(), c.width());
    } else if (op instanceof ImageOp.RandomResizedCrop r) {
      int[] box = RandomResizedCropParams.sample(r, window.width(), window.height(), rng);
      crop(box[0], box[1], box[2], box[3]);
      resize(r.width(), r.height(), r.filter());
    } else if (op instanceof ImageOp.HorizontalFlip f) {
      if (rng.nextDouble() < f.p()) {
        flip = !flip;
      }
    }
  }

  private void centerCrop(int height, int width) {
    int top = cropOffset(window.height(), height);
    int left = cropOffset(window.width(), width);
    crop(top, left, height, width);
  }

  /** torchvision pads {@code (crop - size) // 2} on the leading side, else rounds half to even. */
  private static int cropOffset(int size, int crop) {
    return crop > size ? -((crop - size) / 2) : TorchvisionGeometry.centerOffset(size, crop);
  }

  private void crop(int top, int left, int height, int width) {
    int x = flip ? window.width() - left - width : left;
    window = new Stage.Rect(window.x() + x, window.y() + top, width, height);
  }

  private void resize(int width, int height, ResampleFilter f) {
    if (width == window.width() && height == window.height()) {
      return;
    }
    Stage now = current();
    if (now.resizes() || now.pads() || flip) {
      stages.add(now);
      fresh(window.width(), window.height());
    }
    view =
        new Window(view.x() + window.x(), view.y() + window.y(), window.width(), window.height());
    resizedWidth = width;
    resizedHeight = height;
    filter = f;
    window = new Stage.Rect(0, 0, width, height);
  }

  private Stage current() {
    return new Stage(
        sourceWidth, sourceHeight, view, resizedWidth, resizedHeight, filter, window, flip);
  }

  private void fresh(int width, int height) {
    sourceWidth = width;
    sourceHeight = height;
    view = new Window(0, 0, width, height);
    resizedWidth = width;
    resizedHeight = height;
    filter = ResampleFilter.BILINEAR;
    window = new Stage.Rect(0, 0, width, height);
    flip = false;
  }
}
