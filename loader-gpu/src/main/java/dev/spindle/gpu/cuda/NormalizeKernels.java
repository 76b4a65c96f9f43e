package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.ElementType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The normalisation kernels, loaded with {@code cuModuleLoadData} from the resource that suits the
 * device of the context current on the calling thread ({@link #resourceFor}): on compute capability
 * 9.0 (H100, H200) the sm_90 cubin {@code normalize.sm_90.cubin}, which needs no JIT; elsewhere the
 * PTX {@code normalize.ptx}, which the driver compiles. Both are built from {@code normalize.cu}
 * (see loader-gpu/README.md; {@code KernelBuildSuite} checks they match it). Loaded once per
 * stream; unloaded by {@link #close()} (idempotent).
 */
final class NormalizeKernels implements AutoCloseable {
  static final String PTX_RESOURCE = "normalize.ptx";
  static final String CUBIN_SM90_RESOURCE = "normalize.sm_90.cubin";
  private final CUmodule module = new CUmodule();
  private final CUfunction f32 = new CUfunction();
  private final CUfunction f16 = new CUfunction();
  private boolean loaded;

  NormalizeKernels() {
    int[] capability = currentCapability();
    String resource = resourceFor(capability[0], capability[1]);
    check(
        JCudaDriver.cuModuleLoadData(module, image(resource)),
        "cuModuleLoadData("
            + resource
            + ") on compute capability "
            + capability[0]
            + "."
            + capability[1]);
    loaded = true;
    try {
      check(
          JCudaDriver.cuModuleGetFunction(f32, module, "spindle_normalize_f32"),
          "cuModuleGetFunction(spindle_normalize_f32)");
      check(
          JCudaDriver.cuModuleGetFunction(f16, module, "spindle_normalize_f16"),
          "cuModuleGetFunction(spindle_normalize_f16)");
    } catch (RuntimeException e) {
      Cuda.closeQuietly(this, e);
      throw e;
    }
  }

  CUfunction function(ElementType type) {
    return switch (type) {
      case FLOAT32 -> f32;
      case FLOAT16 -> f16;
      case UINT8 ->
          throw new IllegalArgumentException(
              "Invalid element type for normalisation: UINT8 (must be FLOAT16 or FLOAT32)");
    };
  }

  /** The module to load on compute capability {@code major.minor}: the cubin on 9.0, else PTX. */
  static String resourceFor(int major, int minor) {
    return major == 9 && minor == 0 ? CUBIN_SM90_RESOURCE : PTX_RESOURCE;
  }

  /** The PTX text, NUL-terminated as {@code cuModuleLoadData} requires. */
  static byte[] ptx() {
    return image(PTX_RESOURCE);
  }

  /** A module resource's bytes as {@code cuModuleLoadData} takes them (PTX: NUL-terminated). */
  static byte[] image(String resource) {
    try (InputStream in = NormalizeKernels.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            "Missing resource " + resource + " next to " + NormalizeKernels.class.getName());
      }
      byte[] bytes = in.readAllBytes();
      return resource.endsWith(".ptx") ? Arrays.copyOf(bytes, bytes.length + 1) : bytes;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + resource, e);
    }
  }

  /** {major, minor} of the current context's device. */
  private static int[] currentCapability() {
    CUdevice device = new CUdevice();
    check(JCudaDriver.cuCtxGetDevice(device), "cuCtxGetDevice");
    int[] major = new int[1];
    int[] minor = new int[1];
    check(
        JCudaDriver.cuDeviceGetAttribute(
            major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
    check(
        JCudaDriver.cuDeviceGetAttribute(
            minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
    return new int[] {major[0], minor[0]};
  }

  @Override
  public void close() {
    if (loaded) {
      loaded = false;
      check(JCudaDriver.cuModuleUnload(module), "cuModuleUnload");
    }
  }
}
