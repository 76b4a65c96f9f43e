package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * What a shard reader accepts in one sample. Immutable; shipped to executors with a job's tasks.
 *
 * @param maxSampleBytes an image entry or file larger than this is quarantined unread
 * @param numClasses labels must be below this; 0 = unknown (any label an int32 column holds)
 */
public record SampleLimits(int maxSampleBytes, int numClasses) implements Serializable {

  public SampleLimits {
    if (maxSampleBytes <= 0) {
      throw new IllegalArgumentException(
          "Invalid maxSampleBytes: " + maxSampleBytes + " (must be > 0)");
    }
    if (numClasses < 0) {
      throw new IllegalArgumentException(
          "Invalid numClasses: " + numClasses + " (must be >= 0; 0 = unknown)");
    }
  }
}
