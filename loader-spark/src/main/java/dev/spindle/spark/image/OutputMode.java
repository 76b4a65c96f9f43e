package dev.spindle.spark.image;

import java.util.Locale;

/**
 * Layout and type of the pixels {@link ImageTransform#apply} writes. uint8 keeps batches small for
 * device-side normalisation; float32/float16 CHW are normalised on the CPU ({@code ToTensor} +
 * {@code Normalize}). Multi-byte values are little-endian, as Arrow's buffers are.
 */
public enum OutputMode {
  UINT8_HWC(1),
  UINT8_CHW(1),
  FLOAT32_CHW(4),
  FLOAT16_CHW(2);

  private final int bytesPerValue;

  OutputMode(int bytesPerValue) {
    this.bytesPerValue = bytesPerValue;
  }

  public int bytesPerValue() {
    return bytesPerValue;
  }

  public boolean isFloat() {
    return this == FLOAT32_CHW || this == FLOAT16_CHW;
  }

  /** The spec name, e.g. {@code "float32-chw"}. */
  public String specName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** Parses a spec name ({@code uint8-hwc}, {@code uint8-chw}, {@code float32-chw}, ...). */
  public static OutputMode parse(String name) {
    for (OutputMode m : values()) {
      if (m.specName().equalsIgnoreCase(name.trim())) {
        return m;
      }
    }
    throw new IllegalArgumentException(
        "Invalid image output: '"
            + name
            + "' (must be uint8-hwc, uint8-chw, float32-chw or float16-chw)");
  }
}
