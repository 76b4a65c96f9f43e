package dev.spindle.spark.pipeline;

import java.util.Iterator;
import java.util.List;

/**
 * The consuming end of a running pipeline: the sink. {@link #hasNext()} waits for the next result
 * (in slices of at most 50 ms, watching for a stop, an interrupt and a Spark task kill); the item
 * {@link #next()} returns is owned by the caller.
 *
 * <p>When the pipeline fails, {@code hasNext()} throws its {@link PipelineFailure} (every later
 * call throws the same one). When the calling thread is interrupted, the pipeline is closed and
 * {@code hasNext()} throws {@link java.util.concurrent.CancellationException} with the interrupt
 * status kept; inside a killed Spark task it throws Spark's {@code TaskKilledException}.
 *
 * <p>One consumer thread at a time. {@link #close()} may be called from any thread, any number of
 * times: it stops every stage, releases every item still inside the pipeline (closing {@link
 * AutoCloseable} items), and waits up to the stop timeout for running ops to return. {@link
 * #stats()} and {@link #quarantine()} may be called from any thread, also after close.
 */
public interface PipelineIterator<T> extends Iterator<T>, AutoCloseable {
  /** Statistics of every stage now. */
  PipelineStats stats();

  /** Items dropped so far, across all stages. */
  List<QuarantineEntry> quarantine();

  /** Stops the pipeline; idempotent, never throws. */
  @Override
  void close();
}
