package dev.spindle.spark.image;

/**
 * Chooses the JPEG decoder's reduced scale (1/2, 1/4, 1/8) for a plan's first stage: the largest
 * one that still leaves at least the resize's target resolution in both directions, so the
 * remaining resample only ever shrinks. Stateless.
 */
final class ReducedDecode {
  private static final int[] SCALES = {8, 4, 2};

  private ReducedDecode() {}

  static int scale(Stage first) {
    if (!first.resizes()) {
      return 1;
    }
    for (int s : SCALES) {
      if ((double) first.view().width() / s >= first.resizedWidth()
          && (double) first.view().height() / s >= first.resizedHeight()) {
        return s;
      }
    }
    return 1;
  }
}
