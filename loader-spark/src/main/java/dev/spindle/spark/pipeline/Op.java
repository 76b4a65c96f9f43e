package dev.spindle.spark.pipeline;

/**
 * The work of one {@code pipe} stage: turns one input item into one output item.
 *
 * <p>Called concurrently, up to the stage's concurrency, on pool threads: an op must be
 * thread-safe. It takes ownership of its input: it returns it, or returns a new item (closing the
 * input itself when the input is {@link AutoCloseable} and no longer needed). When an op throws,
 * the pipeline closes an {@link AutoCloseable} input, so {@code close()} must be idempotent.
 *
 * <p>Throwing an {@link Exception} rejects the item: it is dropped, counted and quarantined against
 * the stage's {@link FailureBudget}, with the message of a checked exception as the reason (a
 * {@link RuntimeException}'s reason also names its class: it is more likely a bug). Throwing an
 * {@link Error} stops the pipeline at once. Returning {@code null} is an item failure ("op returned
 * null"): an op that wants to reject an item throws.
 *
 * @param <I> input item type
 * @param <O> output item type
 */
@FunctionalInterface
public interface Op<I, O> {
  /** Transforms one item; never returns {@code null}. */
  O apply(I in) throws Exception;
}
