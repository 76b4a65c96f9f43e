package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.Arrays;
import java.util.PrimitiveIterator;
import java.util.stream.LongStream;
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

/**
 * The image and label columns of one row group, read for some of its rows. Only the two projected
 * columns are read. When only some rows are wanted and the file has offset indexes (Parquet's page
 * index, which parquet-mr, Spark and DuckDB write), only the image pages holding a wanted row are
 * read, with the label pages that overlap them ({@link ParquetFileReader#readFilteredRowGroup});
 * rows inside those pages that are not wanted are skipped value by value without being copied.
 * Without offset indexes the row group's two column chunks are read whole. One thread.
 *
 * <p>Calling pattern: {@link #seek(long)} to a row at or after the current one, then {@link
 * #image()} and {@link #label()} (each at most once per row); {@link #close()} releases the
 * pages read.
 */
final class ParquetRowGroup implements AutoCloseable {
  private final ParquetLayout layout;
  private final PageReadStore pages;
  private final ColumnReader image;
  private final ColumnReader label;
  private final PrimitiveIterator.OfLong rows; // the rows the readers visit, in order
  private final long rowCount;
  private long current;

  private ParquetRowGroup(ParquetLayout layout, PageReadStore pages, long rowCount,
      String createdBy) {
    this.layout = layout;
    this.pages = pages;
    ColumnReadStoreImpl store = new ColumnReadStoreImpl(pages,
        new GroupRecordConverter(layout.schema()).getRootConverter(), layout.schema(), createdBy);
    this.image = store.getColumnReader(layout.image());
    this.label = store.getColumnReader(layout.label());
    this.rowCount = rowCount; // of the whole row group: a filtered store counts its ranges only
    this.rows = pages.getRowIndexes().orElseGet(() -> LongStream.range(0, rowCount).iterator());
    this.current = rows.hasNext() ? rows.nextLong() : rowCount;
  }

  /**
   * Reads the pages of row group {@code index} that hold the {@code wanted} rows (sorted, within
   * the row group), or the whole group when {@code wanted} is null.
   */
  static ParquetRowGroup read(ParquetFileReader file, int index, ParquetLayout layout,
      long[] wanted) throws IOException {
    RowRanges ranges = wanted == null ? null : pagesHolding(file, index, layout, wanted);
    PageReadStore pages = ranges == null
        ? file.readRowGroup(index)
        : file.readFilteredRowGroup(index, ranges);
    return new ParquetRowGroup(layout, pages, file.getRowGroups().get(index).getRowCount(),
        file.getFileMetaData().getCreatedBy());
  }

  /** The rows of the image pages that hold a wanted row, or null when the file has no index. */
  private static RowRanges pagesHolding(ParquetFileReader file, int index, ParquetLayout layout,
      long[] wanted) {
    long rowCount = file.getRowGroups().get(index).getRowCount();
    ColumnIndexStore indexes = file.getColumnIndexStore(index);
    OffsetIndex pages;
    try {
      pages = indexes.getOffsetIndex(ColumnPath.get(layout.image().getPath()));
      indexes.getOffsetIndex(ColumnPath.get(layout.label().getPath()));
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
    return RowRanges.create(rowCount, Arrays.stream(holding, 0, n).iterator(), pages);
  }

  /**
   * Moves to {@code row} (within the row group; at or after the current row), skipping the rows
   * before it.
   *
   * @throws IllegalStateException when the row is behind, or not among the pages read
   */
  void seek(long row) {
    while (current < row) {
      skip(image, layout.image().getMaxDefinitionLevel());
      skip(label, layout.label().getMaxDefinitionLevel());
      current = rows.hasNext() ? rows.nextLong() : rowCount;
    }
    if (current != row) {
      throw new IllegalStateException("Row " + row + " of the row group was not read (at row "
          + current + ")");
    }
  }

  /** The current row's image bytes (valid until the next {@link #seek}), or null when null. */
  Binary image() {
    if (image.getCurrentDefinitionLevel() < layout.image().getMaxDefinitionLevel()) {
      return null;
    }
    return image.getBinary();
  }

  /** The current row's label as stored ({@link ParquetLayout#labelRaw}), or null when null. */
  Long label() {
    if (label.getCurrentDefinitionLevel() < layout.label().getMaxDefinitionLevel()) {
      return null;
    }
    return layout.labelRaw(label);
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
