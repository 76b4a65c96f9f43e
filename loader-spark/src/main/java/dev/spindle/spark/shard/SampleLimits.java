package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldSet;
import java.io.Serializable;

/**
 * What a shard reader accepts in one sample, and which of its parts it reads. Immutable; shipped to
 * executors with a job's tasks.
 *
 * @param maxSampleBytes an image entry or file larger than this is quarantined unread
 * @param numClasses labels must be below this; 0 = unknown (any label an int32 column holds)
 * @param fields the declared fields ({@code spark.spindle.fields}); {@link FieldSet#NONE}: image
 *     and label, as before fields existed
 * @param maxFieldBytes bytes one string, bytes or list value of a declared field may hold ({@code
 *     spark.spindle.fields.maxBytes}): a larger one is the sample's problem
 */
public record SampleLimits(int maxSampleBytes, int numClasses, FieldSet fields, int maxFieldBytes)
    implements Serializable {

  /** The default of {@code spark.spindle.fields.maxBytes}. */
  public static final int DEFAULT_MAX_FIELD_BYTES = 65536;

  public SampleLimits {
    if (maxSampleBytes <= 0) {
      throw new IllegalArgumentException(
          "Invalid maxSampleBytes: " + maxSampleBytes + " (must be > 0)");
    }
    if (numClasses < 0) {
      throw new IllegalArgumentException(
          "Invalid numClasses: " + numClasses + " (must be >= 0; 0 = unknown)");
    }
    if (maxFieldBytes <= 0) {
      throw new IllegalArgumentException(
          "Invalid maxFieldBytes: " + maxFieldBytes + " (must be > 0)");
    }
  }

  /** Limits of an image + label sample: no declared fields. */
  public SampleLimits(int maxSampleBytes, int numClasses) {
    this(maxSampleBytes, numClasses, FieldSet.NONE, DEFAULT_MAX_FIELD_BYTES);
  }
}
