package dev.spindle.gpu.device;

/**
 * A source of accelerator devices found through {@link java.util.ServiceLoader} (the CUDA one lives
 * in {@code dev.spindle.gpu.cuda}, so no other package loads JCuda).
 *
 * <p>Implementations must be cheap to instantiate and must not load native code before {@link
 * #probe()}; {@link #probe()} never throws. Any thread.
 */
public interface DeviceProvider {

  /** Result of looking for devices: how many, and why none when there are none. */
  record Probe(int deviceCount, String detail) {}

  /** The kind of device this provider opens. */
  DeviceKind kind();

  /** Looks for devices; catches everything (a missing driver is an answer, not an error). */
  Probe probe();

  /** Opens device {@code ordinal}; the caller owns and closes it. */
  Device open(int ordinal);
}
