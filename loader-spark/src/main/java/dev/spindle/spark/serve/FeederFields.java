package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.SlotField;
import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.samples.BatchImages;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The extra fields a rank's feeder carries, derived from the feed's batch schema: its columns after
 * {@code image}, {@code label}, {@code key}, {@code index} ({@link SlotField#extras}), each
 * variable one (text, bytes, lists) reserving {@code spark.spindle.fields.maxBytes} bytes a row in
 * every ring slot. An image + label feed has none, and its feeder is today's. Stateless; task
 * threads.
 */
final class FeederFields {
  /**
   * The default of {@code spark.spindle.fields.maxBytes}: the bound on one variable value the
   * sample readers enforce (quarantining a sample over it), so a slot never needs more.
   */
  static final int DEFAULT_MAX_BYTES = 65_536;

  private FeederFields() {}

  /** The feeder fields of a feed whose batches hold {@code images} (no extra fields yet). */
  static List<SlotField> of(BatchImages images) {
    return of(
        BatchSchema.of(images.height(), images.width(), images.channels()), DEFAULT_MAX_BYTES);
  }

  /**
   * The feeder fields of batches of {@code schema}, variable ones bounded by {@code maxBytes}.
   *
   * @throws IllegalArgumentException naming a column whose type a feeder cannot carry
   */
  static List<SlotField> of(Schema schema, int maxBytes) {
    return SlotField.extras(schema, maxBytes);
  }
}
