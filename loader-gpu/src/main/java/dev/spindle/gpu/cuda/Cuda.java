package dev.spindle.gpu.cuda;

import jcuda.driver.CUresult;

/** Checks driver return codes; JCuda's global exception switch is left alone. */
final class Cuda {
  private Cuda() {}

  /** Throws {@link CudaException} naming the call and the error if {@code rc} is not success. */
  static void check(int rc, String call) {
    if (rc != CUresult.CUDA_SUCCESS) {
      throw new CudaException(call + " failed: " + CUresult.stringFor(rc) + " (" + rc + ")");
    }
  }

  /** Runs {@code r}, adding any failure to {@code primary} as suppressed: quiet only on failure. */
  static void closeQuietly(AutoCloseable r, Throwable primary) {
    if (r == null) {
      return;
    }
    try {
      r.close();
    } catch (Throwable t) {
      primary.addSuppressed(t);
    }
  }
}
