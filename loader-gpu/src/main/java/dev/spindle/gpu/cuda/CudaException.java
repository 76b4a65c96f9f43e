package dev.spindle.gpu.cuda;

/** A CUDA driver call failed; the message names the call and the driver's error. */
final class CudaException extends RuntimeException {
  CudaException(String message) {
    super(message);
  }
}
