package dev.spindle.spark.sql;

import dev.spindle.spark.samples.BatchImages;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.StructType;

/**
 * The logical scan: the columns Spark asked for (every sample is still read, decoded and checked:
 * which columns a query selects never changes which samples it sees) and the metrics it reports.
 * Its one {@link SpindleBatch} is made on first use and kept, so that the physical plans Spark
 * makes of this scan (adaptive execution plans a query again) share one manifest, one partition
 * plan and one scan id. Driver threads.
 */
final class SpindleScan implements Scan {
  private final ScanSettings settings;
  private final StructType schema;
  private SpindleBatch batch;

  SpindleScan(ScanSettings settings, StructType schema) {
    this.settings = settings;
    this.schema = schema;
  }

  @Override
  public StructType readSchema() {
    return schema;
  }

  @Override
  public String description() {
    BatchImages images = settings.sample().images();
    if (!settings.images()) {
      return "spindle "
          + settings.input()
          + " [no image: "
          + settings.sample().limits().fields()
          + "]";
    }
    String shown = images.decodes() ? images.transforms() : "stored: " + images.transforms();
    return "spindle "
        + settings.input()
        + (settings.decode()
            ? " [" + shown + "]"
            : images.decodes() ? " [encoded]" : " [stored, raw]");
  }

  @Override
  public synchronized Batch toBatch() {
    if (batch == null) {
      batch = new SpindleBatch(settings, schema);
    }
    return batch;
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return ScanMetrics.all();
  }
}
