package dev.spindle.spark.image;

import dev.spindle.spark.plan.SplitMix64;

/**
 * torchvision 0.14's {@code RandomResizedCrop.get_params}: up to 10 attempts at a random area
 * fraction and log-uniform aspect ratio, then the central fallback crop. Only the random source
 * differs from torchvision's (torch's generator cannot be shared): here it is the sample's {@link
 * SampleRandom} stream, so the crop is a pure function of (seed, epoch, sample index). The draws
 * are normative (package documentation, "Random operations"): {@code StrictMath}'s log and exp, so
 * that every JVM on every CPU draws the same crops.
 */
final class RandomResizedCropParams {
  private static final int ATTEMPTS = 10;

  private RandomResizedCropParams() {}

  /** Returns {@code {top, left, height, width}} inside a {@code width x height} image. */
  static int[] sample(ImageOp.RandomResizedCrop op, int width, int height, SplitMix64 rng) {
    double area = (double) width * height;
    double logMin = StrictMath.log(op.ratioMin());
    double logMax = StrictMath.log(op.ratioMax());
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      double targetArea = area * uniform(rng, op.scaleMin(), op.scaleMax());
      double aspect = StrictMath.exp(uniform(rng, logMin, logMax));
      int w = (int) Math.rint(Math.sqrt(targetArea * aspect));
      int h = (int) Math.rint(Math.sqrt(targetArea / aspect));
      if (0 < w && w <= width && 0 < h && h <= height) {
        int top = rng.nextBelow(height - h + 1);
        int left = rng.nextBelow(width - w + 1);
        return new int[] {top, left, h, w};
      }
    }
    return fallback(op, width, height);
  }

  private static int[] fallback(ImageOp.RandomResizedCrop op, int width, int height) {
    double inRatio = (double) width / height;
    int w = width;
    int h = height;
    if (inRatio < op.ratioMin()) {
      h = (int) Math.rint(w / op.ratioMin());
    } else if (inRatio > op.ratioMax()) {
      w = (int) Math.rint(h * op.ratioMax());
    }
    return new int[] {Math.floorDiv(height - h, 2), Math.floorDiv(width - w, 2), h, w};
  }

  /** One draw, also when {@code min == max}: {@code [min, max)}, or {@code min}. */
  private static double uniform(SplitMix64 rng, double min, double max) {
    double r = rng.nextDouble() * (max - min) + min;
    return r >= max && max > min ? Math.nextDown(max) : r;
  }
}
