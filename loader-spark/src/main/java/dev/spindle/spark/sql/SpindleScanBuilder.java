package dev.spindle.spark.sql;

import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.StructType;

/** Builds the scan, keeping only the columns a query needs. One thread; driver. */
final class SpindleScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns {
  private final ScanSettings settings;
  private StructType schema;

  SpindleScanBuilder(ScanSettings settings) {
    this.settings = settings;
    this.schema = ScanSchema.of(settings);
  }

  @Override
  public void pruneColumns(StructType required) {
    this.schema = required;
  }

  @Override
  public Scan build() {
    return new SpindleScan(settings, schema);
  }
}
