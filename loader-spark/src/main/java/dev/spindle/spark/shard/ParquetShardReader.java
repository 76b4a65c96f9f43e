package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * Reads a Parquet shard row by row: row {@code N} (counted from 0 over the whole file) is sample
 * {@code N}, key {@code <file name>#N}. Only the image and label columns are read ({@link
 * ParquetLayout}; not one the job's declared fields leave out), and the columns of the job's extra
 * fields ({@link ParquetFields}); row groups without a wanted row are never read, and within a row
 * group only the pages that hold one ({@link ParquetRows}). A null image or label, an image over
 * {@code spark.spindle.maxSampleBytes} or a label outside {@link LabelRule} makes a sample with a
 * problem; so does every wanted row of a row group whose pages cannot be decoded (from the failing
 * row on), while the next row groups are read as usual. A storage error fails the reader ({@link
 * UncheckedIOException} naming the shard). One thread.
 */
final class ParquetShardReader implements ShardReader {
  private final Shard shard;
  private final String fileName;
  private final ParquetRows rows;
  private final ParquetLayout layout;
  private final SampleLimits limits;
  private final ParquetFields fields;

  private ParquetShardReader(
      Shard shard,
      ParquetRows rows,
      ParquetLayout layout,
      ParquetFields fields,
      SampleLimits limits) {
    this.shard = shard;
    this.fields = fields;
    this.fileName = new Path(shard.uri()).getName();
    this.rows = rows;
    this.layout = layout;
    this.limits = limits;
  }

  /** A reader of only the rows at {@code positions} (strictly increasing), or all if null. */
  static ParquetShardReader open(
      Shard shard, Configuration conf, SampleLimits limits, int[] positions) throws IOException {
    return open(shard, ParquetFiles.open(shard.uri(), conf, limits), limits, positions);
  }

  /** {@link #open(Shard, Configuration, SampleLimits, int[])} on a file already open; owns it. */
  static ParquetShardReader open(
      Shard shard, WatchedInputFile.Reader file, SampleLimits limits, int[] positions)
      throws IOException {
    try {
      ParquetLayout layout = ParquetFiles.layout(file, shard.columns(), shard.uri());
      ParquetFields fields =
          ParquetFields.resolve(
              file.getFileMetaData().getSchema(), limits.fields().extras(), shard.uri());
      MessageType projection = projection(layout.schema(), fields);
      file.setRequestedSchema(projection);
      List<ColumnDescriptor> columns = layout.read();
      int first = columns.size(); // the extra fields' columns follow the image and label
      fields.leaves().forEach(l -> columns.add(projection.getColumnDescription(l.getPath())));
      ParquetFiles.checkChunks(file, columns.subList(first, columns.size()), shard.uri());
      ParquetRows rows = new ParquetRows(shard.uri(), file, projection, columns, positions);
      return new ParquetShardReader(shard, rows, layout, fields, limits);
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
  }

  /**
   * The image and label columns' projection with the extra fields' columns added (a column that is
   * already there is not added twice).
   */
  private static MessageType projection(MessageType base, ParquetFields fields) {
    List<Type> all = new ArrayList<>(base.getFields());
    for (Type t : fields.columns()) {
      if (!base.containsField(t.getName())
          && all.stream().noneMatch(a -> a.getName().equals(t.getName()))) {
        all.add(t);
      }
    }
    return new MessageType(base.getName(), all);
  }

  @Override
  public boolean hasNext() {
    return rows.hasNext();
  }

  @Override
  public Sample next() {
    long row = rows.next();
    SampleBuilder sample = new SampleBuilder(shard.uri(), fileName + "#" + row, row, limits);
    ParquetRowGroup group = rows.at(row);
    if (group != null) {
      try {
        fill(group, sample, row);
      } catch (RuntimeException e) {
        rows.damaged(row, e);
      }
    }
    return rows.damage() != null ? sample.problem(rows.damage()).build() : sample.build();
  }

  private void fill(ParquetRowGroup group, SampleBuilder sample, long row) {
    int column = 0; // the row group's columns: layout.read(), then the extra fields'
    if (layout.image() != null) {
      image(group, sample, row, column++);
    }
    if (layout.label() != null) {
      label(group, sample, row, column++);
    }
    for (int i = 0; i < fields.fields().size(); i++) {
      field(group, sample, row, i, column + i);
    }
  }

  private void image(ParquetRowGroup group, SampleBuilder sample, long row, int column) {
    String imageColumn = String.join(".", layout.image().getPath());
    Binary image = group.binary(column);
    if (image == null) {
      sample.problem("the image is null (column '" + imageColumn + "', row " + row + ")");
    } else if (image.length() > limits.maxSampleBytes()) {
      sample.problem(
          String.format(
              "image is %d bytes, over spark.spindle.maxSampleBytes=%d",
              image.length(), limits.maxSampleBytes()));
    } else {
      sample.imageValue(image.getBytes(), imageColumn + " of row " + row);
    }
  }

  private void label(ParquetRowGroup group, SampleBuilder sample, long row, int column) {
    String labelColumn = " (column '" + shard.columns().label() + "', row " + row + ")";
    if (group.isNull(column)) {
      sample.problem("the label is null" + labelColumn);
    } else {
      long label = layout.labelRaw(group.reader(column));
      sample.label(layout.labelNumber(label), "label " + layout.labelText(label) + labelColumn);
    }
  }

  /** Extra field {@code i} of the row (row group column {@code column}): a null is the problem. */
  private void field(ParquetRowGroup group, SampleBuilder sample, long row, int i, int column) {
    FieldSpec f = fields.fields().get(i);
    String where = " (field '" + f.name() + "', column '" + f.source() + "', row " + row + ")";
    try {
      Object value = fields.value(i, group, column, limits.maxFieldBytes());
      if (value == null) {
        sample.problem("the value is null" + where);
      } else {
        sample.fieldValue(i, value);
      }
    } catch (IllegalArgumentException e) {
      sample.problem(e.getMessage() + where);
    }
  }

  @Override
  public void close() throws IOException {
    rows.close();
  }
}
