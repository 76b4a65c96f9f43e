package dev.spindle.spark.image;

/**
 * One resample of a plan: take {@code view} of a {@code sourceWidth x sourceHeight} image, resize
 * it to {@code resizedWidth x resizedHeight} with {@code filter} (no-op when equal to the view),
 * and emit {@code window} of the resized image (zeros where the window leaves it), mirrored when
 * {@code flip}. The emitted image is {@code window.width() x window.height()}.
 */
record Stage(
    int sourceWidth,
    int sourceHeight,
    Window view,
    int resizedWidth,
    int resizedHeight,
    ResampleFilter filter,
    Rect window,
    boolean flip) {

  boolean resizes() {
    return resizedWidth != view.width() || resizedHeight != view.height();
  }

  boolean pads() {
    return window.x() < 0
        || window.y() < 0
        || window.x() + window.width() > resizedWidth
        || window.y() + window.height() > resizedHeight;
  }

  /** A rectangle that may extend past its image (centre crops larger than the image pad). */
  record Rect(int x, int y, int width, int height) {}
}
