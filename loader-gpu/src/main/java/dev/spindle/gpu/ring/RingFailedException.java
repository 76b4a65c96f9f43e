package dev.spindle.gpu.ring;

/**
 * The ring stopped because of a failure (a copy-thread error, an expired lease, or a producer that
 * called {@link PrefetchRing#fail}); thrown to every later caller, with the first cause.
 */
public final class RingFailedException extends IllegalStateException {
  RingFailedException(Throwable cause) {
    super("Prefetch ring failed: " + cause.getMessage(), cause);
  }
}
