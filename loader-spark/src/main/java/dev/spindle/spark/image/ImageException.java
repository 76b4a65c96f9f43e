package dev.spindle.spark.image;

/**
 * A sample that cannot be decoded or transformed.
 *
 * <p>{@link #getMessage()} is a user-facing reason ("Truncated JPEG: no end-of-image marker"); it
 * names neither shard nor key, because the caller that knows them adds them to its quarantine
 * record. Thrown by {@link ImageInfo#probe} and {@link ImageTransform#apply}; never signals a bug
 * in Spindle itself (those stay unchecked).
 */
public final class ImageException extends Exception {
  private static final long serialVersionUID = 1L;

  public ImageException(String reason) {
    super(reason);
  }

  public ImageException(String reason, Throwable cause) {
    super(reason, cause);
  }
}
