package dev.spindle.spark.samples;

import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.pipeline.Pipeline;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Readies a JVM that will decode images before its first sample arrives: loads the native decoder
 * the first images take ({@link ImageTransform#loadDecoders}: the JPEG region decoder and resample,
 * or OpenCV where they are missing) and has the JIT compile the pipeline engine ({@link
 * Pipeline#runWarmUp}), on one daemon thread of its own, while the JVM has other slow things to do
 * (the embedded session's start; a trainer's {@code import torch}).
 *
 * <p>It does not compile the vector resample (1.4 s, with the compilers and the collector 2.6 s of
 * CPU: {@code WarmUpCost} in loader-bench) nor load OpenCV (0.6 s, 0.9 s of CPU): beside Spark's
 * start and {@code import torch} on two cores, both delayed a trainer's first batch ({@code
 * bin/bench-train-gap}, docs/benchmarks.md). The first images take the native decoder and resample
 * instead (the same bytes, about 1.3 times the vector path's cost per image), and their first
 * decode starts the vector path's compiling on a thread of its own ({@code VectorPath}), which it
 * takes over from once compiled.
 *
 * <p>Nothing waits for it. Once per JVM; later calls return at once.
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
      ImageTransform.loadDecoders();
      Pipeline.runWarmUp();
      LOG.debug("Decode warm-up took {} ms", (System.nanoTime() - start) / 1_000_000);
    } catch (RuntimeException | LinkageError e) {
      // a decoder that cannot load is said by the first sample that needs it, with its shard
      LOG.debug("Decode warm-up stopped: {}", e.toString());
    }
  }
}
