package dev.spindle.gpu.device;

/** Element type of the image tensor a trainer leases. */
public enum ElementType {
  /** Raw uint8 HWC, exactly the bytes of the Arrow batch (no normalisation). */
  UINT8(1),
  /** IEEE half precision, normalised, CHW. */
  FLOAT16(2),
  /** IEEE single precision, normalised, CHW. */
  FLOAT32(4);

  private final int bytes;

  ElementType(int bytes) {
    this.bytes = bytes;
  }

  /** Size of one element in bytes. */
  public int bytes() {
    return bytes;
  }

  /**
   * Parses {@code uint8}, {@code float16} or {@code float32} (any case).
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public static ElementType parse(String name) {
    for (ElementType t : values()) {
      if (t.name().equalsIgnoreCase(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException(
        "Invalid element type: '" + name + "' (must be uint8, float16 or float32)");
  }
}
