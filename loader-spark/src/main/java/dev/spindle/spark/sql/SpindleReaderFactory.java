package dev.spindle.spark.sql;

import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.shard.HadoopConf;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Makes the columnar reader of each partition, on the executor; the scan reads columnar batches
 * only (Spark converts them to rows where a plan needs rows). Immutable; serialized to executors.
 */
final class SpindleReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  private final ScanSettings settings;
  private final StructType schema;
  private final String scanId;
  private final HadoopConf conf;
  private final ProgressCounters progress;

  SpindleReaderFactory(
      ScanSettings settings,
      StructType schema,
      String scanId,
      HadoopConf conf,
      ProgressCounters progress) {
    this.settings = settings;
    this.schema = schema;
    this.scanId = scanId;
    this.conf = conf;
    this.progress = progress;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new SpindlePartitionReader(
        (ScanPart) partition, settings, schema, scanId, conf.get(), progress);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException(
        "The spindle data source reads columnar batches only (supportColumnarReads is true)");
  }
}
