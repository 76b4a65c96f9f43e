package dev.spindle.spark.sql;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The scan's metrics, shown on its node in the Spark UI's SQL tab (summed over tasks): {@code
 * images} delivered, {@code quarantined} samples, encoded {@code bytesRead}, and {@code decodeTime}
 * (milliseconds spent decoding and transforming, summed over decode threads). Spark instantiates
 * the metric classes by name on the driver to aggregate task values, so they are public with a
 * public no-argument constructor. Stateless.
 */
public final class ScanMetrics {
  static final String IMAGES = "images";
  static final String QUARANTINED = "quarantined";
  static final String BYTES_READ = "bytesRead";
  static final String DECODE_TIME = "decodeTime";

  private ScanMetrics() {}

  /** What {@code Scan.supportedCustomMetrics} declares. */
  static CustomMetric[] all() {
    return new CustomMetric[] {new Images(), new Quarantined(), new BytesRead(), new DecodeTime()};
  }

  /** One task's values, in the order of {@link #all()}. */
  static CustomTaskMetric[] values(long images, long quarantined, long bytesRead, long decodeMs) {
    return new CustomTaskMetric[] {
      new Value(IMAGES, images),
      new Value(QUARANTINED, quarantined),
      new Value(BYTES_READ, bytesRead),
      new Value(DECODE_TIME, decodeMs)
    };
  }

  /** A task's value of one metric. */
  private record Value(String name, long value) implements CustomTaskMetric {}

  /** Images the scan delivered. */
  public static final class Images extends CustomSumMetric {
    @Override
    public String name() {
      return IMAGES;
    }

    @Override
    public String description() {
      return "images read";
    }
  }

  /** Samples quarantined (listed under the quarantine option's URI when given). */
  public static final class Quarantined extends CustomSumMetric {
    @Override
    public String name() {
      return QUARANTINED;
    }

    @Override
    public String description() {
      return "samples quarantined";
    }
  }

  /** Encoded image bytes read from the shards. */
  public static final class BytesRead extends CustomSumMetric {
    @Override
    public String name() {
      return BYTES_READ;
    }

    @Override
    public String description() {
      return "encoded bytes read";
    }
  }

  /** Decode and transform time, summed over the decode threads. */
  public static final class DecodeTime extends CustomSumMetric {
    @Override
    public String name() {
      return DECODE_TIME;
    }

    @Override
    public String description() {
      return "decode time (ms, all threads)";
    }
  }
}
