package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;

/**
 * Reads a Parquet part file of a {@code preprocess} output ({@link ShardFormat#DECODED_PARQUET}):
 * row {@code N} is sample {@code N}, its {@code image} the stored pixels, with its stored {@code
 * label}, {@code key} and {@code index} ({@link StoredRows}). Only those four columns are read; row
 * groups without a wanted row are never read, and within a row group only the pages holding one
 * ({@link ParquetRows}); page checksums are verified as for any Parquet shard, and a row group that
 * cannot be decoded quarantines its wanted rows from the failing one on. A file that no longer
 * matches the manifest (another size or row count, another schema) fails the open, naming it; so
 * does, when the file is read whole, a CRC-32C other than the manifest's (checked in a pass of its
 * own before the first row: parquet-mr reads the file out of order). Each row's stored index is
 * checked against where the manifest puts it ({@link StoredIndexCheck}). Reading only some rows, a
 * page's bytes are checked by Parquet's own page CRC, not against the manifest: a file replaced by
 * another of the same size and the same stored indices (another run over the same input) is seen
 * only by a whole read. One thread.
 */
final class DecodedParquetReader implements ShardReader {
  private long copied;
  private static final String[] COLUMNS = {"image", "label", "key", "index"};
  private static final PrimitiveTypeName[] TYPES = {
    PrimitiveTypeName.BINARY,
    PrimitiveTypeName.INT32,
    PrimitiveTypeName.BINARY,
    PrimitiveTypeName.INT64
  };

  private final Shard shard;
  private final String fileName;
  private final ParquetRows rows;
  private final SampleLimits limits;
  private final StoredIndexCheck indices;
  private final ParquetFields fields;
  private final int first; // the column of the image, or of the label in an output without images

  private DecodedParquetReader(
      Shard shard, ParquetRows rows, ParquetFields fields, SampleLimits limits) {
    this.first = limits.fields().hasImage() ? 0 : 1;
    this.shard = shard;
    this.fields = fields;
    this.fileName = new Path(shard.uri()).getName();
    this.rows = rows;
    this.limits = limits;
    this.indices = new StoredIndexCheck(shard);
  }

  /** A reader of only the rows at {@code positions} (strictly increasing), or all if null. */
  static DecodedParquetReader open(
      Shard shard, Configuration conf, SampleLimits limits, int[] positions) throws IOException {
    FileStatus status = StoredFiles.requireSize(shard, conf);
    if (positions == null) { // read whole: worth one more pass to check all of it first
      StoredFiles.requireFileCrc(shard, status, conf);
    }
    WatchedInputFile.Reader file = ParquetFiles.open(shard.uri(), conf, limits);
    try {
      MessageType schema = file.getFileMetaData().getSchema();
      int first = limits.fields().hasImage() ? 0 : 1; // an output without images has no 'image'
      MessageType base = project(schema, shard.uri(), first);
      ParquetFields fields = ParquetFields.resolve(schema, limits.fields().extras(), shard.uri());
      List<Type> all = new ArrayList<>(base.getFields());
      fields.columns().stream().filter(t -> !base.containsField(t.getName())).forEach(all::add);
      MessageType projection = new MessageType(schema.getName(), all);
      file.setRequestedSchema(projection);
      List<ColumnDescriptor> columns = new ArrayList<>();
      for (int c = first; c < COLUMNS.length; c++) {
        columns.add(projection.getColumnDescription(new String[] {COLUMNS[c]}));
      }
      fields.leaves().forEach(l -> columns.add(projection.getColumnDescription(l.getPath())));
      ParquetFiles.checkChunks(file, columns, shard.uri());
      ParquetRows rows = new ParquetRows(shard.uri(), file, projection, columns, positions);
      StoredFiles.requireRows(shard, rows.rowCount());
      return new DecodedParquetReader(shard, rows, fields, limits);
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
  }

  /**
   * The columns {@code first..3} of {@link #COLUMNS} in the file's schema (from {@code label} for a
   * job without images), or a refusal naming the file and the column.
   */
  private static MessageType project(MessageType schema, String uri, int first) throws IOException {
    List<Type> fields = new ArrayList<>();
    for (int c = first; c < COLUMNS.length; c++) {
      Type t = schema.containsField(COLUMNS[c]) ? schema.getType(COLUMNS[c]) : null;
      if (t == null
          || !t.isPrimitive()
          || t.isRepetition(Type.Repetition.REPEATED)
          || ((PrimitiveType) t).getPrimitiveTypeName() != TYPES[c]) {
        throw StoredFiles.mismatch(
            uri,
            "its column '"
                + COLUMNS[c]
                + "' is "
                + (t == null ? "missing" : "'" + t.toString().trim() + "'")
                + ", not "
                + TYPES[c]
                + " as preprocess writes it");
      }
      fields.add(t);
    }
    return new MessageType(schema.getName(), fields);
  }

  @Override
  public boolean hasNext() {
    return rows.hasNext();
  }

  /** Stored pixel bytes copied into the samples' arrays so far. */
  @Override
  public long copiedImageBytes() {
    return copied;
  }

  @Override
  public Sample next() {
    long row = rows.next();
    ParquetRowGroup group = rows.at(row);
    if (group != null) {
      Sample sample;
      try {
        sample = read(group, row);
      } catch (RuntimeException e) {
        rows.damaged(row, e);
        return StoredRows.damaged(shard, fileName, row, rows.damage(), limits);
      }
      if (sample.stored() != null) {
        indices.check(row, sample.stored().index()); // a misplaced file fails, not one row
      }
      copied += sample.image() == null ? 0 : sample.image().length;
      return sample;
    }
    return StoredRows.damaged(shard, fileName, row, rows.damage(), limits);
  }

  private Sample read(ParquetRowGroup group, long row) {
    int c = -first; // the columns read are COLUMNS[first..]
    Binary image = first == 0 ? group.binary(c) : null;
    Integer label = group.isNull(c + 1) ? null : group.reader(c + 1).getInteger();
    Binary key = group.binary(c + 2);
    Long index = group.isNull(c + 3) ? null : group.reader(c + 3).getLong();
    return StoredRows.sample(
        shard,
        fileName,
        row,
        key == null ? null : key.toStringUsingUTF8(),
        image == null ? -1 : image.length(),
        image == null ? null : image::getBytes,
        label,
        index,
        limits,
        b -> readFields(group, row, b));
  }

  /** The row's extra fields, columns 4.. of the row group: a null one is the sample's problem. */
  private void readFields(ParquetRowGroup group, long row, SampleBuilder b) {
    for (int i = 0; i < fields.fields().size(); i++) {
      String where =
          " (field '" + fields.fields().get(i).name() + "', row " + row + " of " + fileName + ")";
      try {
        Object v = fields.value(i, group, COLUMNS.length - first + i, limits.maxFieldBytes());
        if (v == null) {
          b.problem("the value is null" + where);
        } else {
          b.fieldValue(i, v);
        }
      } catch (IllegalArgumentException e) {
        b.problem(e.getMessage() + where);
      }
    }
  }

  @Override
  public void close() throws IOException {
    rows.close();
  }
}
