package dev.spindle.spark.samples;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.shard.StoredImages;
import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How a path's rows get their uint8 H×W×C pixels, and the shape of its batches: decoded from
 * encoded images by a transform, or, for a {@code preprocess} output, the stored pixels copied as
 * they are (no decode, no transform: they were transformed when they were stored). Chosen once on
 * the driver from the input's manifest ({@link #of}); immutable, shipped to executors.
 *
 * @param transform the decode and transform, or null when the rows are stored pixels
 * @param height batch image height
 * @param width batch image width
 * @param channels batch image channels
 * @param transforms the transform chain the pixels come from, for reports and descriptions
 */
public record BatchImages(
    ImageTransform transform, int height, int width, int channels, String transforms)
    implements Serializable {

  /** Images decoded and transformed by {@code t}. */
  public static BatchImages decoding(ImageTransform t) {
    return new BatchImages(t, t.height(), t.width(), t.channels(), t.spec());
  }

  /** A preprocess output's stored pixels, copied as they are. */
  public static BatchImages stored(StoredImages s) {
    return new BatchImages(null, s.height(), s.width(), s.channels(), s.transforms());
  }

  /**
   * The images of an input: decoded by the transform {@code conf} describes, or, when {@code
   * stored} is not null (the input is a {@code preprocess} output), its stored pixels. Image
   * settings given explicitly ({@code spark.spindle.image.size}, {@code
   * spark.spindle.image.transforms}) must then describe what is stored: a preprocessed dataset is
   * never transformed again, so a disagreement is refused here, before any task, naming both.
   *
   * @param conf the job's settings, knowing every key the user set
   * @param input the input, for messages
   *     <p>A preprocess output of samples without an image ({@link StoredImages#none()}) is read
   *     only by a job whose declared fields have no {@code image} either: it then has no images at
   *     all.
   * @throws IllegalArgumentException when the settings disagree with the stored images
   */
  public static BatchImages of(StoredImages stored, Settings conf, String input) {
    if (stored == null) {
      return decoding(conf.uint8Transform());
    }
    if (!stored.images()) {
      return withoutImages(stored, conf, input);
    }
    boolean size = conf.isSet(SpindleConfig.IMAGE_SIZE);
    boolean chain = conf.isSet(SpindleConfig.IMAGE_TRANSFORMS);
    if (size || chain) {
      ImageTransform asked = conf.uint8Transform();
      boolean sameShape =
          asked.height() == stored.height()
              && asked.width() == stored.width()
              && asked.channels() == stored.channels();
      if (!sameShape || chain && !normal(asked.spec()).equals(normal(stored.transforms()))) {
        throw new IllegalArgumentException(disagreement(stored, asked, conf.given(), input));
      }
    }
    return stored(stored);
  }

  /** {@code stored}, which has no images, for a job that declares none, else refused by name. */
  private static BatchImages withoutImages(StoredImages stored, Settings conf, String input) {
    if (conf.get(SpindleConfig.FIELDS).hasImage()) {
      throw new IllegalArgumentException(
          input
              + " is a preprocess output of samples without an image (its _manifest.json records"
              + " image_shape null), but "
              + SpindleConfig.FIELDS.key()
              + " (--fields, the data source's option fields) "
              + (conf.get(SpindleConfig.FIELDS).isEmpty()
                  ? "is not set (image and label)"
                  : "'" + conf.get(SpindleConfig.FIELDS) + "' declares an image")
              + ": declare its columns without one, e.g. label=label,text=text:string");
    }
    return stored(stored);
  }

  /**
   * Bytes of one row: what the transform writes per image ({@link ImageTransform#outputBytes}:
   * H·W·C for the uint8 output every job decodes to; 4·H·W·C for the float32 CHW batches of {@code
   * bench images}, which runs the same path), or H·W·C of stored pixels.
   */
  public long rowBytes() {
    return transform != null ? transform.outputBytes() : (long) height * width * channels;
  }

  /** [H, W, C], for reports. */
  public List<Integer> shape() {
    return List.of(height, width, channels);
  }

  /** True when the rows are decoded; false for stored pixels. */
  public boolean decodes() {
    return transform != null;
  }

  private static String normal(String spec) {
    return spec.replaceAll("\\s+", "").toLowerCase(Locale.ROOT);
  }

  private static String disagreement(
      StoredImages stored, ImageTransform asked, Map<String, String> conf, String input) {
    StringBuilder keys = new StringBuilder();
    for (String key :
        List.of(SpindleConfig.IMAGE_SIZE.key(), SpindleConfig.IMAGE_TRANSFORMS.key())) {
      if (conf.containsKey(key)) {
        keys.append(keys.length() == 0 ? "" : ", ").append(key).append("=").append(conf.get(key));
      }
    }
    return "Input "
        + input
        + " is a preprocess output of "
        + stored.shape()
        + " images made by '"
        + stored.transforms()
        + "' (its _manifest.json), but the settings "
        + keys
        + " (--size,"
        + " option 'size' or 'transforms') ask for "
        + List.of(asked.height(), asked.width(), asked.channels())
        + " images made by '"
        + asked.spec()
        + "'. A preprocessed dataset"
        + " is read as stored, never transformed again: leave out the image settings, or"
        + " preprocess again with these";
  }
}
