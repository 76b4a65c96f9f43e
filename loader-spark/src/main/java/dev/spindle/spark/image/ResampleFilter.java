package dev.spindle.spark.image;

/** A resampling filter as Pillow defines it: a weight function and its support at scale 1. */
enum ResampleFilter {
  /** Pillow's {@code BILINEAR} (a triangle); antialiases when downscaling. */
  BILINEAR(1.0) {
    @Override
    double weight(double x) {
      double a = Math.abs(x);
      return a < 1.0 ? 1.0 - a : 0.0;
    }
  },
  /** Pillow's {@code BOX}: with support scaled by the downscale factor, an area average. */
  BOX(0.5) {
    @Override
    double weight(double x) {
      return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
    }
  };

  private final double support;

  ResampleFilter(double support) {
    this.support = support;
  }

  double support() {
    return support;
  }

  abstract double weight(double x);
}
