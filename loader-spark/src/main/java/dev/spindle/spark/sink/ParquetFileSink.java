package dev.spindle.spark.sink;

import java.io.IOException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.io.OutputFile;

/**
 * Writes the record batches of one {@link VectorSchemaRoot} in {@link
 * dev.spindle.spark.batch.BatchSchema}'s layout to a Parquet file ({@link OutputFormat#PARQUET},
 * schema in {@link PixelRowWriteSupport}); the contract is {@link BatchFileSink}'s. Snappy
 * compression; row groups of {@code parquet.block.size} from the Hadoop configuration, 64 MiB when
 * unset (parquet-mr holds a row group in heap memory until it is flushed, so this bounds a task's
 * heap use); no dictionary and no min/max statistics for the pixel column.
 */
final class ParquetFileSink implements BatchFileSink {
  static final long DEFAULT_ROW_GROUP_BYTES = 64L << 20;

  private final Path path;
  private final PixelRowWriteSupport support;
  private final ParquetWriter<Integer> writer;
  private long rows;
  private boolean closed;

  ParquetFileSink(Path path, Configuration conf, int[] shape) throws IOException {
    this.path = path;
    this.support = new PixelRowWriteSupport(shape);
    try {
      this.writer =
          new Builder(HadoopOutputFile.fromPath(path, conf), support)
              .withConf(conf)
              .withWriteMode(ParquetFileWriter.Mode.CREATE)
              .withCompressionCodec(CompressionCodecName.SNAPPY)
              .withRowGroupSize(conf.getLong("parquet.block.size", DEFAULT_ROW_GROUP_BYTES))
              .withDictionaryEncoding(PixelRowWriteSupport.IMAGE, false)
              .withStatisticsEnabled(PixelRowWriteSupport.IMAGE, false)
              .build();
    } catch (IOException e) {
      throw BatchFileSink.failed(path, e);
    }
  }

  @Override
  public void write(VectorSchemaRoot root) throws IOException {
    support.bind(root);
    try {
      for (int r = 0; r < root.getRowCount(); r++) {
        writer.write(r);
      }
    } catch (IOException e) {
      throw BatchFileSink.failed(path, e);
    } finally {
      support.bind(null);
    }
    rows += root.getRowCount();
  }

  @Override
  public Path path() {
    return path;
  }

  @Override
  public long rows() {
    return rows;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      writer.close();
    } catch (IOException e) {
      throw BatchFileSink.failed(path, e);
    }
  }

  /** parquet-mr's builder, handing it the write support. */
  private static final class Builder extends ParquetWriter.Builder<Integer, Builder> {
    private final WriteSupport<Integer> support;

    Builder(OutputFile file, WriteSupport<Integer> support) {
      super(file);
      this.support = support;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<Integer> getWriteSupport(Configuration conf) {
      return support;
    }
  }
}
