package dev.spindle.gpu.device;

/** The implementations of {@link Device}; also the values of {@code --device}. */
public enum DeviceKind {
  /** A CUDA GPU through the JCuda driver API. */
  CUDA,
  /** Plain off-heap memory standing in for a GPU, with the same ring semantics. */
  HOST;

  /**
   * Parses {@code cuda} or {@code host} (any case).
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public static DeviceKind parse(String name) {
    for (DeviceKind k : values()) {
      if (k.name().equalsIgnoreCase(name)) {
        return k;
      }
    }
    throw new IllegalArgumentException("Invalid device: '" + name + "' (must be cuda or host)");
  }
}
