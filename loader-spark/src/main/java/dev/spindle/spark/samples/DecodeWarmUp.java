package dev.spindle.spark.samples;

import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.pipeline.Pipeline;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warms a JVM that will decode images before its first sample arrives: loads the decoders' native
 * libraries and has the JIT compile the vector resample ({@link ImageTransform#preload}) and the
 * pipeline engine ({@link Pipeline#runWarmUp}), on one daemon thread of its own, as {@code bench
 * images} does before its clock. Started while the JVM has other slow things to do with one core:
 * the embedded session's start (the command line's JVM is its executor) and a trainer's {@code
 * import torch}. Without it the same code compiles during the first epochs, on the cores the decode
 * needs (measured with {@code bin/bench-train-gap}: compiler threads at 0.46 ms per image in {@code
 * train}'s epochs 1-3, against 0.07 in {@code bench images}', docs/benchmarks.md).
 *
 * <p>Nothing waits for it: a sample decoded before it finished takes the scalar resample, which
 * gives the same bytes. Once per JVM; later calls return at once.
 */
public final class DecodeWarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(DecodeWarmUp.class);
  private static final AtomicBoolean STARTED = new AtomicBoolean();

  private DecodeWarmUp() {}

  /** Starts the warm-up on a daemon thread, unless it has started in this JVM. Any thread. */
  public static void start() {
    if (!STARTED.compareAndSet(false, true)) {
      return;
    }
    Thread t = new Thread(DecodeWarmUp::run, "spindle-jit-warm-up");
    t.setDaemon(true);
    t.start();
  }

  private static void run() {
    long start = System.nanoTime();
    try {
      ImageTransform.preload();
      Pipeline.runWarmUp();
      LOG.debug("Decode warm-up took {} ms", (System.nanoTime() - start) / 1_000_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException | LinkageError e) {
      // a decoder that cannot load is said by the first sample that needs it, with its shard
      LOG.debug("Decode warm-up stopped: {}", e.toString());
    }
  }
}
