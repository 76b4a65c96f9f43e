package dev.spindle.spark.samples;

import dev.spindle.spark.shard.Sample;

/**
 * What enters the sample path: one encoded sample read from a shard, with its dataset (or planned)
 * index. Made by the source on its reading thread, then read by decode threads; implementations are
 * immutable.
 */
public interface IndexedSample {
  /** The encoded sample (or one with a problem, which the path quarantines). */
  Sample sample();

  /** The sample's index: its dataset index, or its planned index in an epoch. */
  long index();

  /** The key the pipeline lists it under when it is quarantined, e.g. {@link SampleId#of}. */
  String id();

  /** Its size in bytes, for the byte bound of the queue it waits in. */
  long bytes();

  /**
   * Whether this item closes its batch before the path's batch size is reached (a token budget's
   * batches vary in rows); false by default: batches of the batch size.
   */
  default boolean endsBatch() {
    return false;
  }

  /**
   * Where the path writes the sample's pixels: its row of the batch it is delivered in, or null
   * (the default) for a buffer of its own ({@link Decoded#pixels()}), which the consumer copies.
   */
  default RowTarget target() {
    return null;
  }

  /**
   * This item with {@link Sample#withoutImage}, of the same class: what the path hands its consumer
   * for a sample whose pixels it wrote into {@link #target()}. The batch's rows reach the consumer
   * only when the batch is complete, and the encoded bytes (a whole batch of them, which the path's
   * byte bounds no longer count once the pixels are placed) would otherwise live until then. An
   * item with a target overrides it; by default the item itself.
   */
  default IndexedSample withoutImage() {
    return this;
  }
}
