package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldType;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.PrimitiveIterator;
import java.util.stream.LongStream;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ColumnPath;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.internal.filter2.columnindex.ColumnIndexStore;
import org.apache.parquet.internal.filter2.columnindex.RowRanges;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;

/**
 * The projected columns of one row group, read for some of its rows. Only the projected columns are
 * read. When only some rows are wanted and the file has offset indexes (Parquet's page index, which
 * parquet-mr, Spark and DuckDB write), only the pages of the first column (the image, the large
 * one) holding a wanted row are read, with the other columns' pages that overlap them ({@link
 * ParquetFileReader#readFilteredRowGroup}); rows inside those pages that are not wanted are skipped
 * value by value without being copied. Without offset indexes the row group's column chunks are
 * read whole. One thread.
 *
 * <p>Calling pattern: {@link #seek(long)} to a row at or after the current one, then read each
 * column at most once per row ({@link #binary}, {@link #reader}); {@link #close()} releases the
 * pages read.
 */
final class ParquetRowGroup implements AutoCloseable {
  private final List<ColumnDescriptor> columns;
  private final PageReadStore pages;
  private final ColumnReader[] readers;
  private final PrimitiveIterator.OfLong rows; // the rows the readers visit, in order
  private final long rowCount;
  private final MessageType schema;
  private final boolean[] advanced; // a list column already consumed its current row's values
  private long current;

  private ParquetRowGroup(
      MessageType schema,
      List<ColumnDescriptor> columns,
      PageReadStore pages,
      long rowCount,
      String createdBy) {
    this.columns = List.copyOf(columns);
    this.schema = schema;
    this.advanced = new boolean[columns.size()];
    this.pages = pages;
    ColumnReadStoreImpl store =
        new ColumnReadStoreImpl(
            pages, new GroupRecordConverter(schema).getRootConverter(), schema, createdBy);
    this.readers = columns.stream().map(store::getColumnReader).toArray(ColumnReader[]::new);
    this.rowCount = rowCount; // of the whole row group: a filtered store counts its ranges only
    this.rows = pages.getRowIndexes().orElseGet(() -> LongStream.range(0, rowCount).iterator());
    this.current = rows.hasNext() ? rows.nextLong() : rowCount;
  }

  /**
   * Reads the pages of row group {@code index} of {@code schema}'s {@code columns} that hold the
   * {@code wanted} rows (sorted, within the row group), or the whole group when {@code wanted} is
   * null.
   */
  static ParquetRowGroup read(
      WatchedInputFile.Reader file,
      int index,
      MessageType schema,
      List<ColumnDescriptor> columns,
      long[] wanted)
      throws IOException {
    RowRanges ranges = wanted == null ? null : pagesHolding(file, index, columns, wanted);
    PageReadStore pages;
    if (ranges != null) {
      pages = file.readFilteredRowGroup(index, ranges);
    } else {
      PageHeaderCheck.wholeChunks(file, index, columns);
      pages = file.readRowGroup(index);
    }
    return new ParquetRowGroup(
        schema,
        columns,
        pages,
        file.getRowGroups().get(index).getRowCount(),
        file.getFileMetaData().getCreatedBy());
  }

  /**
   * The rows of the first column's pages that hold a wanted row; null without an index, when those
   * pages hold every row, or when the pages read for them are not what the index says ({@link
   * PageHeaderCheck#filtered}): the whole row group is read then.
   */
  private static RowRanges pagesHolding(
      WatchedInputFile.Reader file, int index, List<ColumnDescriptor> columns, long[] wanted)
      throws IOException {
    long rowCount = file.getRowGroups().get(index).getRowCount();
    ColumnIndexStore indexes = file.getColumnIndexStore(index);
    OffsetIndex pages;
    try {
      pages = indexes.getOffsetIndex(ColumnPath.get(columns.get(0).getPath()));
      for (ColumnDescriptor c : columns) {
        indexes.getOffsetIndex(ColumnPath.get(c.getPath()));
      }
    } catch (ColumnIndexStore.MissingOffsetIndexException e) {
      return null;
    }
    int[] holding = new int[pages.getPageCount()];
    int n = 0;
    int page = 0;
    for (long row : wanted) {
      while (page + 1 < pages.getPageCount() && pages.getFirstRowIndex(page + 1) <= row) {
        page++;
      }
      if (n == 0 || holding[n - 1] != page) {
        holding[n++] = page;
      }
    }
    RowRanges ranges = RowRanges.create(rowCount, Arrays.stream(holding, 0, n).iterator(), pages);
    return ranges.rowCount() < rowCount
            && PageHeaderCheck.filtered(file, index, columns, indexes, ranges)
        ? ranges
        : null;
  }

  /**
   * Moves to {@code row} (within the row group; at or after the current row), skipping the rows
   * before it.
   *
   * @throws IllegalStateException when the row is behind, or not among the pages read
   */
  void seek(long row) {
    while (current < row) {
      for (int c = 0; c < readers.length; c++) {
        if (advanced[c]) {
          advanced[c] = false; // its values were read, up to this row's first
        } else {
          skip(readers[c], columns.get(c));
        }
      }
      current = rows.hasNext() ? rows.nextLong() : rowCount;
    }
    if (current != row) {
      throw new IllegalStateException(
          "Row " + row + " of the row group was not read (at row " + current + ")");
    }
  }

  /** True when column {@code c} of the current row is null. */
  boolean isNull(int c) {
    return readers[c].getCurrentDefinitionLevel() < columns.get(c).getMaxDefinitionLevel();
  }

  /** Column {@code c}'s bytes in the current row (valid until the next {@link #seek}), or null. */
  Binary binary(int c) {
    return isNull(c) ? null : readers[c].getBinary();
  }

  /** Column {@code c}'s reader, at the current row's value (check {@link #isNull} first). */
  ColumnReader reader(int c) {
    return readers[c];
  }

  @Override
  public void close() {
    pages.close();
  }

  /** Skips the current row's values of a column: one, or a repeated column's every one. */
  private static void skip(ColumnReader reader, ColumnDescriptor column) {
    boolean repeated = column.getMaxRepetitionLevel() > 0;
    do {
      if (reader.getCurrentDefinitionLevel() == column.getMaxDefinitionLevel()) {
        reader.skip();
      }
      reader.consume();
    } while (repeated && reader.getCurrentRepetitionLevel() > 0);
  }

  /**
   * Repeated column {@code c}'s values in the current row as a list of {@code type} ({@code int[]},
   * {@code long[]}, {@code float[]}); null when the row's list is null. Reads the column once per
   * row: its values are consumed, up to the next row's first.
   *
   * @throws IllegalArgumentException for a null element, or a list over {@code maxBytes}
   */
  Object list(int c, FieldType type, int maxBytes) {
    ColumnReader r = readers[c];
    ColumnDescriptor d = columns.get(c);
    int repeatedLevel = repeatedDefinitionLevel(d);
    int first = r.getCurrentDefinitionLevel();
    ListValues values = new ListValues(type, d.getPrimitiveType().getPrimitiveTypeName());
    boolean nullElement = false;
    do {
      int level = r.getCurrentDefinitionLevel();
      if (level == d.getMaxDefinitionLevel()) {
        values.add(r);
      } else if (level >= repeatedLevel) {
        nullElement = true;
      }
      r.consume();
    } while (r.getCurrentRepetitionLevel() > 0);
    advanced[c] = true;
    if (first < repeatedLevel - 1) {
      return null;
    }
    if (nullElement) {
      throw new IllegalArgumentException("the list holds a null element");
    }
    if ((long) values.size() * type.width() > maxBytes) {
      throw new IllegalArgumentException(
          values.size()
              + " elements ("
              + (long) values.size() * type.width()
              + " bytes), over spark.spindle.fields.maxBytes="
              + maxBytes);
    }
    return values.array();
  }

  /** The definition level at which the column's repeated node (the list's entry) is present. */
  private int repeatedDefinitionLevel(ColumnDescriptor d) {
    String[] path = d.getPath();
    for (int n = path.length; n > 0; n--) {
      String[] prefix = Arrays.copyOf(path, n);
      if (schema.getType(prefix).isRepetition(org.apache.parquet.schema.Type.Repetition.REPEATED)) {
        return schema.getMaxDefinitionLevel(prefix);
      }
    }
    throw new IllegalStateException("Column " + Arrays.toString(path) + " is not repeated");
  }
}
