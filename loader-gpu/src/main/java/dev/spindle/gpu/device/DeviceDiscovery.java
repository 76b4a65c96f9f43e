package dev.spindle.gpu.device;

import java.util.ServiceLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the device a feeder runs on: a CUDA GPU when asked for (or, by default, when one is
 * present), else the host device, with one log line saying why. Never crashes for want of a GPU or
 * a driver. The CUDA probe runs once per JVM.
 *
 * <p>Threads: any. Owner: the caller owns the returned device.
 */
public final class DeviceDiscovery {
  private static final Logger LOG = LoggerFactory.getLogger(DeviceDiscovery.class);
  private static volatile DeviceProvider.Probe cudaProbe;

  private DeviceDiscovery() {}

  /** What the caller asks for. */
  public enum Choice {
    /** CUDA if a device with the ordinal exists, else the host device (logged). */
    AUTO,
    /** CUDA or an exception saying why not. */
    CUDA,
    /** The host device. */
    HOST;

    /** Parses {@code auto}, {@code cuda} or {@code host}. */
    public static Choice parse(String s) {
      for (Choice c : values()) {
        if (c.name().equalsIgnoreCase(s)) {
          return c;
        }
      }
      throw new IllegalArgumentException(
          "Invalid device: '" + s + "' (must be auto, cuda or host)");
    }
  }

  /** The CUDA probe result (cached): device count and detail; count 0 when unavailable. */
  public static DeviceProvider.Probe probeCuda() {
    DeviceProvider.Probe p = cudaProbe;
    if (p == null) {
      DeviceProvider provider = cudaProvider();
      p =
          provider == null
              ? new DeviceProvider.Probe(0, "no CUDA provider on the classpath")
              : provider.probe();
      cudaProbe = p;
    }
    return p;
  }

  /** True if CUDA device {@code ordinal} can be opened. */
  public static boolean cudaAvailable(int ordinal) {
    return ordinal >= 0 && ordinal < probeCuda().deviceCount();
  }

  /**
   * Opens the device for {@code ordinal} according to {@code choice}.
   *
   * @throws IllegalStateException for {@link Choice#CUDA} when the device is absent, with the
   *     probe's reason
   */
  public static Device open(Choice choice, int ordinal) {
    if (choice == Choice.HOST) {
      return new HostDevice();
    }
    DeviceProvider.Probe probe = probeCuda();
    if (ordinal >= 0 && ordinal < probe.deviceCount()) {
      return cudaProvider().open(ordinal);
    }
    String why =
        "CUDA device "
            + ordinal
            + " unavailable ("
            + probe.deviceCount()
            + " found: "
            + probe.detail()
            + ")";
    if (choice == Choice.CUDA) {
      throw new IllegalStateException(why);
    }
    LOG.warn("{}; using the host device instead", why);
    return new HostDevice();
  }

  private static DeviceProvider cudaProvider() {
    for (DeviceProvider p : ServiceLoader.load(DeviceProvider.class)) {
      if (p.kind() == DeviceKind.CUDA) {
        return p;
      }
    }
    return null;
  }
}
