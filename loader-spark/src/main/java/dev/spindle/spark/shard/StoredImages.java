package dev.spindle.spark.shard;

import java.io.Serializable;
import java.util.List;

/**
 * What the rows of a {@code preprocess} output hold: images already decoded and transformed, all of
 * one shape, as its {@code _manifest.json} records them ({@code image_shape}, {@code transforms}).
 * Immutable; shipped to executors inside a {@link dev.spindle.spark.manifest.Manifest}.
 *
 * <p>A {@code preprocess} output of samples without an image (its declared fields had none) records
 * {@code image_shape} null: its rows hold {@link #none()}, every dimension 0.
 *
 * @param height rows of pixels
 * @param width pixels per row
 * @param channels values per pixel (3: RGB)
 * @param transforms the transform chain that made them, as {@code preprocess} ran it
 */
public record StoredImages(int height, int width, int channels, String transforms)
    implements Serializable {

  /** The transforms of {@link #none()}. */
  private static final String NO_IMAGES = "none (no image)";

  public StoredImages {
    boolean none = height == 0 && width == 0 && channels == 0;
    if (!none && (height <= 0 || width <= 0 || channels <= 0)) {
      throw new IllegalArgumentException(
          "Invalid image shape ["
              + height
              + ", "
              + width
              + ", "
              + channels
              + "] (every dimension must be > 0)");
    }
    if (transforms == null) {
      throw new IllegalArgumentException("Stored images need the transforms that made them");
    }
  }

  /** What a preprocess output of samples without an image holds: no pixels at all. */
  public static StoredImages none() {
    return new StoredImages(0, 0, 0, NO_IMAGES);
  }

  /** Whether the rows hold images ({@link #none()} holds none). */
  public boolean images() {
    return height > 0;
  }

  /** Bytes of one image: H·W·C. */
  public long rowBytes() {
    return (long) height * width * channels;
  }

  /** [H, W, C]. */
  public List<Integer> shape() {
    return List.of(height, width, channels);
  }
}
