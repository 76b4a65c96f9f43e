package dev.spindle.gpu.cuda;

import dev.spindle.gpu.device.Device;
import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.device.DeviceProvider;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Finds CUDA GPUs through the JCuda driver API, for {@code DeviceDiscovery} (registered in {@code
 * META-INF/services}). Instantiating it loads no native code; {@link #probe()} catches every {@link
 * Throwable}, including the {@link UnsatisfiedLinkError} that loading {@code JCudaDriver} throws on
 * a machine without a driver. Any thread.
 */
public final class CudaDeviceProvider implements DeviceProvider {
  private static volatile Probe probe;

  /** For {@link java.util.ServiceLoader}. */
  public CudaDeviceProvider() {}

  @Override
  public DeviceKind kind() {
    return DeviceKind.CUDA;
  }

  @Override
  public Probe probe() {
    Probe p = probe;
    if (p == null) {
      try {
        p = probeDriver();
      } catch (Throwable t) {
        p = new Probe(0, "CUDA driver not usable: " + summarize(t));
      }
      probe = p; // the first answer is the informative one: JCuda's class init fails only once
    }
    return p;
  }

  /** One line: JCuda's link errors carry whole nested stack traces in their message. */
  static String summarize(Throwable t) {
    String message = String.valueOf(t.getMessage());
    String line = message.lines().findFirst().orElse("");
    for (String l : message.lines().toList()) {
      if (l.contains("libcuda")) {
        line = l.substring(l.indexOf("libcuda")).trim();
        break;
      }
    }
    String s = t.getClass().getSimpleName() + ": " + line;
    return s.length() > 240 ? s.substring(0, 240) + "..." : s;
  }

  @Override
  public Device open(int ordinal) {
    return new CudaDevice(ordinal);
  }

  private static Probe probeDriver() {
    int rc = JCudaDriver.cuInit(0);
    if (rc != CUresult.CUDA_SUCCESS) {
      return new Probe(0, "cuInit failed: " + CUresult.stringFor(rc));
    }
    int[] count = {0};
    rc = JCudaDriver.cuDeviceGetCount(count);
    if (rc != CUresult.CUDA_SUCCESS) {
      return new Probe(0, "cuDeviceGetCount failed: " + CUresult.stringFor(rc));
    }
    int[] version = {0};
    JCudaDriver.cuDriverGetVersion(version);
    return new Probe(count[0], count[0] + " CUDA device(s), driver API " + version[0]);
  }
}
