package dev.spindle.spark.image;

import java.io.Serializable;
import java.util.Arrays;

/**
 * One step of a transform chain, in torchvision's terms. Immutable values; {@link TransformSpec}
 * parses them from a spec string and {@link StagePlanner} turns a chain into resample stages.
 */
sealed interface ImageOp extends Serializable {

  /**
   * {@code Resize}: with {@code shortSide} the short side becomes {@code height} (torchvision's int
   * size), otherwise the image becomes exactly {@code height x width}.
   */
  record Resize(int height, int width, boolean shortSide, ResampleFilter filter)
      implements ImageOp {
    public Resize {
      positive("resize size", height);
      positive("resize size", width);
    }

    /** Output size {@code {width, height}} for an input of {@code w x h}. */
    public int[] outputSize(int w, int h) {
      return shortSide
          ? TorchvisionGeometry.resizeShortSide(w, h, height)
          : new int[] {width, height};
    }
  }

  /** {@code CenterCrop(height, width)}; pads with zeros where the crop is larger than the image. */
  record CenterCrop(int height, int width) implements ImageOp {
    public CenterCrop {
      positive("center_crop size", height);
      positive("center_crop size", width);
    }
  }

  /** {@code F.crop(top, left, height, width)}; zeros outside the image, as PIL's crop. */
  record Crop(int top, int left, int height, int width) implements ImageOp {
    public Crop {
      positive("crop size", height);
      positive("crop size", width);
    }
  }

  /** {@code RandomResizedCrop(size, scale, ratio)} with torchvision's sampling algorithm. */
  record RandomResizedCrop(
      int height,
      int width,
      double scaleMin,
      double scaleMax,
      double ratioMin,
      double ratioMax,
      ResampleFilter filter)
      implements ImageOp {
    public RandomResizedCrop {
      positive("random_resized_crop size", height);
      positive("random_resized_crop size", width);
      if (!(scaleMin > 0 && scaleMin <= scaleMax && scaleMax <= 1.0)) {
        throw new IllegalArgumentException(
            "Invalid random_resized_crop scale: "
                + scaleMin
                + ":"
                + scaleMax
                + " (0 < min <= max <= 1)");
      }
      if (!(ratioMin > 0 && ratioMin <= ratioMax)) {
        throw new IllegalArgumentException(
            "Invalid random_resized_crop ratio: "
                + ratioMin
                + ":"
                + ratioMax
                + " (0 < min <= max)");
      }
    }
  }

  /** {@code RandomHorizontalFlip(p)}; {@code p = 1} always flips. */
  record HorizontalFlip(double p) implements ImageOp {
    public HorizontalFlip {
      if (!(p >= 0 && p <= 1)) {
        throw new IllegalArgumentException("Invalid hflip probability: " + p + " (must be 0..1)");
      }
    }
  }

  /**
   * {@code ToTensor} + {@code Normalize(mean, std)}: float output {@code (v / 255 - mean) / std}.
   */
  record Normalize(float[] mean, float[] std) implements ImageOp {
    static final float[] IMAGENET_MEAN = {0.485f, 0.456f, 0.406f};
    static final float[] IMAGENET_STD = {0.229f, 0.224f, 0.225f};

    public Normalize {
      if (mean.length != 3 || std.length != 3) {
        throw new IllegalArgumentException(
            "Invalid normalize: mean "
                + Arrays.toString(mean)
                + ", std "
                + Arrays.toString(std)
                + " (3 values each)");
      }
      for (float s : std) {
        if (!(s > 0)) {
          throw new IllegalArgumentException(
              "Invalid normalize std: " + Arrays.toString(std) + " (must be > 0)");
        }
      }
      mean = mean.clone();
      std = std.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Normalize n && Arrays.equals(mean, n.mean) && Arrays.equals(std, n.std);
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(mean) + Arrays.hashCode(std);
    }

    @Override
    public String toString() {
      return "normalize(mean=" + join(mean) + ",std=" + join(std) + ")";
    }

    private static String join(float[] v) {
      return v[0] + ":" + v[1] + ":" + v[2];
    }
  }

  private static void positive(String what, int v) {
    if (v <= 0 || v > 16384) {
      throw new IllegalArgumentException("Invalid " + what + ": " + v + " (must be 1..16384)");
    }
  }
}
