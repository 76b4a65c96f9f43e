package dev.spindle.spark.sink;

import dev.spindle.spark.shard.PartChecks;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;

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
  private final CrcOutputFile file;
  private final ParquetWriter<Integer> writer;
  private final StoredIndexRange indices = new StoredIndexRange();
  private long rows;
  private boolean closed;

  ParquetFileSink(Path path, Configuration conf, int[] shape) throws IOException {
    this(path, conf, shape, List.of());
  }

  /** A sink of batches with {@code extras}, the Arrow columns after {@code index}. */
  ParquetFileSink(Path path, Configuration conf, int[] shape, List<Field> extras)
      throws IOException {
    this.path = path;
    this.support = new PixelRowWriteSupport(shape, extras);
    try {
      this.file = new CrcOutputFile(HadoopOutputFile.fromPath(path, conf));
      this.writer =
          new Builder(file, support)
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
    indices.add(root);
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

  /** The whole file's checksum (no per-batch ones: a Parquet file has no record batches). */
  @Override
  public PartChecks checks() {
    if (!closed) {
      throw new IllegalStateException(path + " is still being written");
    }
    return new PartChecks(file.crc(), -1, indices.first(), indices.last());
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

  /** The file parquet-mr writes, through a stream that checksums what it writes. */
  private static final class CrcOutputFile implements OutputFile {
    private final OutputFile file;
    private CrcOutputStream out;

    CrcOutputFile(OutputFile file) {
      this.file = file;
    }

    @Override
    public PositionOutputStream create(long blockSizeHint) throws IOException {
      out = new CrcOutputStream(file.create(blockSizeHint));
      return out;
    }

    @Override
    public PositionOutputStream createOrOverwrite(long blockSizeHint) throws IOException {
      out = new CrcOutputStream(file.createOrOverwrite(blockSizeHint));
      return out;
    }

    @Override
    public boolean supportsBlockSize() {
      return file.supportsBlockSize();
    }

    @Override
    public long defaultBlockSize() {
      return file.defaultBlockSize();
    }

    @Override
    public String getPath() {
      return file.getPath();
    }

    long crc() {
      return out.fileCrc();
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
