package dev.spindle.gpu.ring;

/** A consumer kept a lease past its deadline; the ring fails with this cause. */
public final class LeaseExpiredException extends RuntimeException {
  LeaseExpiredException(String message) {
    super(message);
  }
}
