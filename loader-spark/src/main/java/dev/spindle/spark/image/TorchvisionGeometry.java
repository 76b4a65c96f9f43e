package dev.spindle.spark.image;

/**
 * Output sizes and crop offsets computed exactly as torchvision 0.14 computes them for PIL images,
 * including Python's float division, truncation and round-half-to-even. Stateless.
 */
final class TorchvisionGeometry {
  private TorchvisionGeometry() {}

  /**
   * {@code Resize(size)} with an int size: the short side becomes {@code size}, the long side
   * {@code int(size * long / short)}. Returns {@code {width, height}}.
   */
  static int[] resizeShortSide(int width, int height, int size) {
    int shortSide = Math.min(width, height);
    int longSide = Math.max(width, height);
    int newLong = (int) ((double) ((long) size * longSide) / shortSide);
    return width <= height ? new int[] {size, newLong} : new int[] {newLong, size};
  }

  /** {@code CenterCrop}'s offset: {@code int(round((size - crop) / 2.0))}, ties to even. */
  static int centerOffset(int size, int crop) {
    return (int) Math.rint((size - crop) / 2.0);
  }
}
