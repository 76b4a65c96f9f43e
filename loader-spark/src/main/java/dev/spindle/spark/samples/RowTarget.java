package dev.spindle.spark.samples;

import org.apache.arrow.memory.ArrowBuf;

/**
 * Where one sample's pixels go when they do not get a buffer of their own: its row of the batch it
 * will be delivered in (a ring slot of a feeder, or a pooled Arrow batch), so the decode stage
 * writes them there and nothing copies them afterwards. Given by the source with the item ({@link
 * IndexedSample#target()}); used by one decode thread: {@link #begin}, write {@code rowBytes} at
 * {@link #offset()} of the buffer it returned, {@link #end} (always, in a {@code finally}).
 */
public interface RowTarget {
  /**
   * Starts writing the row: its batch's pixel buffer, or null when the batch was given up (the task
   * is failing: write nothing). Call {@link #end} after either.
   */
  ArrowBuf begin();

  /** Where the row starts in the buffer {@link #begin} returned. */
  long offset();

  /** The row's writing is over; its batch may now be delivered or given back. */
  void end();
}
