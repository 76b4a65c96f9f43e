package dev.spindle.spark.shard;

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
  private long current;

  private ParquetRowGroup(
      MessageType schema,
      List<ColumnDescriptor> columns,
      PageReadStore pages,
      long rowCount,
      String createdBy) {
    this.columns = List.copyOf(columns);
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
        skip(readers[c], columns.get(c).getMaxDefinitionLevel());
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

  private static void skip(ColumnReader reader, int maxDefinitionLevel) {
    if (reader.getCurrentDefinitionLevel() == maxDefinitionLevel) {
      reader.skip();
    }
    reader.consume();
  }
}
