package dev.spindle.spark.image;

/** A pixel rectangle: top-left corner {@code (x, y)} and size {@code width x height}. */
record Window(int x, int y, int width, int height) {
  Window {
    if (x < 0 || y < 0 || width <= 0 || height <= 0) {
      throw new IllegalArgumentException(
          "Invalid window: " + width + "x" + height + " at (" + x + ", " + y + ")");
    }
  }
}
