package dev.spindle.spark.image;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The {@code spark.spindle.image.*} configuration keys, their defaults and CLI flags, in one place
 * (to be folded into Spindle's configuration registry), and the {@link ImageTransform} they
 * describe. Stateless; any thread may call it.
 */
public final class ImageConfig {
  public static final String TRANSFORMS = "spark.spindle.image.transforms";
  public static final String OUTPUT = "spark.spindle.image.output";
  public static final String MAX_PIXELS = "spark.spindle.image.maxPixels";
  public static final String MAX_DECODE_BYTES = "spark.spindle.image.maxDecodeBytes";
  public static final String EXIF_ORIENTATION = "spark.spindle.image.exifOrientation";
  public static final String REDUCED_DECODE = "spark.spindle.image.reducedDecode";
  public static final String SEED = "spark.spindle.image.seed";

  /** A key with its default value, CLI flag and documentation. */
  public record Key(String name, String defaultValue, String flag, String doc) {}

  private static final Map<String, Key> KEYS = new LinkedHashMap<>();

  static {
    add(
        TRANSFORMS,
        "resize(256),center_crop(224)",
        "--transforms",
        "Transform chain applied in order: resize(S | H,W[,filter=bilinear|bicubic|box]), "
            + "center_crop(S | H,W), crop(TOP,LEFT,H,W), random_resized_crop(S | H,W"
            + "[,scale=0.08:1][,ratio=3/4:4/3]), hflip[(P)], normalize[(mean=R:G:B,std=R:G:B)]"
            + " (last). Matches torchvision on PIL images.");
    add(
        OUTPUT,
        "auto",
        "--image-output",
        "uint8-hwc, uint8-chw, float32-chw or float16-chw; auto = float32-chw when the chain "
            + "ends with normalize, else uint8-hwc.");
    add(
        MAX_PIXELS,
        Long.toString(ImageTransform.DEFAULT_MAX_PIXELS),
        "--max-pixels",
        "Images declaring more pixels are quarantined from their header, before decoding.");
    add(
        MAX_DECODE_BYTES,
        Long.toString(ImageTransform.DEFAULT_MAX_DECODE_BYTES),
        "--max-decode-bytes",
        "Images whose decode would allocate more bytes (pixels at the"
            + " decode scale, decoder buffers, copies, resample buffers) are quarantined from"
            + " their headers, before any allocation.");
    add(
        EXIF_ORIENTATION,
        "true",
        "--exif-orientation",
        "Turn images upright by their EXIF orientation (JPEG APP1, PNG eXIf, WebP EXIF; as"
            + " ImageOps.exif_transpose) first; a TIFF's orientation tag is applied either way.");
    add(
        REDUCED_DECODE,
        "false",
        "--reduced-decode",
        "Decode JPEGs at 1/2, 1/4 or 1/8 scale when the first resize still gets at least its "
            + "target resolution (much faster; values then differ slightly from torchvision's).");
    add(
        SEED,
        "0",
        "--image-seed",
        "Seed of the random operations; with the epoch and sample index it fixes every choice.");
  }

  private ImageConfig() {}

  private static void add(String name, String def, String flag, String doc) {
    KEYS.put(name, new Key(name, def, flag, doc));
  }

  /** Every key, in documentation order. */
  public static Map<String, Key> keys() {
    return java.util.Collections.unmodifiableMap(KEYS);
  }

  /**
   * The transform that {@code conf} describes ({@code conf.apply(key)} returns the value or null
   * when unset), for epoch 0: call {@link ImageTransform#forEpoch} per epoch.
   *
   * @throws IllegalArgumentException naming the key of a bad value
   */
  public static ImageTransform transform(Function<String, String> conf) {
    ImageTransform t = ImageTransform.parse(value(conf, TRANSFORMS));
    String output = value(conf, OUTPUT).trim().toLowerCase(Locale.ROOT);
    try {
      if (!output.equals("auto")) {
        t = t.withOutput(OutputMode.parse(output));
      }
      return t.withMaxPixels(Long.parseLong(value(conf, MAX_PIXELS).trim()))
          .withMaxDecodeBytes(Long.parseLong(value(conf, MAX_DECODE_BYTES).trim()))
          .withExifOrientation(bool(conf, EXIF_ORIENTATION))
          .withReducedDecode(bool(conf, REDUCED_DECODE))
          .withSeed(Long.parseLong(value(conf, SEED).trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Invalid number in "
              + MAX_PIXELS
              + ", "
              + MAX_DECODE_BYTES
              + " or "
              + SEED
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private static String value(Function<String, String> conf, String key) {
    String v = conf.apply(key);
    return v == null ? KEYS.get(key).defaultValue() : v;
  }

  private static boolean bool(Function<String, String> conf, String key) {
    String v = value(conf, key).trim().toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException("Invalid " + key + ": '" + v + "' (true or false)");
    }
    return v.equals("true");
  }
}
