package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.SlotField;
import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.SampleSettings;
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
  private FeederFields() {}

  /**
   * The feeder fields of a feed of {@code sample}'s settings: its declared extra fields ({@code
   * spark.spindle.fields}), the variable ones bounded by {@code spark.spindle.fields.maxBytes}, the
   * bound the sample readers quarantine a value over, so a slot never needs more.
   */
  static List<SlotField> of(SampleSettings sample) {
    BatchImages images = sample.images();
    return of(
        BatchSchema.of(images.height(), images.width(), images.channels(), sample.extras()),
        sample.limits().maxFieldBytes());
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
