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
  /** Pillow's {@code BICUBIC} (Keys cubic, a = -0.5); antialiases when downscaling. */
  BICUBIC(2.0) {
    @Override
    double weight(double x) {
      double a = Math.abs(x);
      if (a < 1.0) {
        return (1.5 * a - 2.5) * a * a + 1;
      }
      if (a < 2.0) {
        return (((a - 5) * a + 8) * a - 4) * -0.5;
      }
      return 0.0;
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
