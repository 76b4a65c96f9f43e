package dev.spindle.spark.image;

import org.apache.arrow.memory.ArrowBuf;

/**
 * What {@link ImageBench} drives: shuffled epochs of transformed images delivered as batches in one
 * contiguous Arrow buffer. One consumer thread calls {@link #next} and {@link #release}; the batch
 * buffer stays owned by the loader and is reused after {@link #release}.
 */
interface BenchLoader extends AutoCloseable {
  /** Starts epoch {@code epoch}: a seeded shuffle, filled in the background from now on. */
  void startEpoch(long seed, long epoch);

  /** Waits for the next batch of the epoch; null after the last. */
  ArrowBuf next() throws InterruptedException;

  /** Images in the batch the last {@link #next} returned. */
  int lastSize();

  /** Gives the batch the last {@link #next} returned back to the loader. */
  void release();

  /** Samples that failed to decode so far (skipped, counted). */
  long quarantined();

  @Override
  void close();
}
