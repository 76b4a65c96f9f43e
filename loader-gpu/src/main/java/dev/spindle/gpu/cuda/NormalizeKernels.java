package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.ElementType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The normalisation kernels, loaded from the PTX resource {@code normalize.ptx} (built from
 * {@code normalize.cu}, see its header) with {@code cuModuleLoadData}. Loaded once per stream, in
 * the context current on the calling thread; unloaded by {@link #close()} (idempotent).
 */
final class NormalizeKernels implements AutoCloseable {
  static final String PTX_RESOURCE = "normalize.ptx";
  private final CUmodule module = new CUmodule();
  private final CUfunction f32 = new CUfunction();
  private final CUfunction f16 = new CUfunction();
  private boolean loaded;

  NormalizeKernels() {
    check(JCudaDriver.cuModuleLoadData(module, ptx()), "cuModuleLoadData(" + PTX_RESOURCE + ")");
    loaded = true;
    try {
      check(JCudaDriver.cuModuleGetFunction(f32, module, "spindle_normalize_f32"),
          "cuModuleGetFunction(spindle_normalize_f32)");
      check(JCudaDriver.cuModuleGetFunction(f16, module, "spindle_normalize_f16"),
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
      case UINT8 -> throw new IllegalArgumentException(
          "Invalid element type for normalisation: UINT8 (must be FLOAT16 or FLOAT32)");
    };
  }

  /** The PTX text, NUL-terminated as {@code cuModuleLoadData} requires. */
  static byte[] ptx() {
    try (InputStream in = NormalizeKernels.class.getResourceAsStream(PTX_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("Missing resource " + PTX_RESOURCE + " next to "
            + NormalizeKernels.class.getName());
      }
      byte[] text = in.readAllBytes();
      return Arrays.copyOf(text, text.length + 1);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + PTX_RESOURCE, e);
    }
  }

  @Override
  public void close() {
    if (loaded) {
      loaded = false;
      check(JCudaDriver.cuModuleUnload(module), "cuModuleUnload");
    }
  }
}
