package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.format.DataPageHeaderV2;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ColumnPath;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.internal.filter2.columnindex.ColumnIndexStore;
import org.apache.parquet.internal.filter2.columnindex.RowRanges;
import org.apache.parquet.io.ParquetDecodingException;
import org.apache.parquet.io.SeekableInputStream;

/**
 * Checks the page headers of the column chunks parquet-mr is about to read, before it reads them:
 * parquet-mr allocates what a header declares first. For the last column chunk of a read, its
 * workaround for chunks too short ({@code ParquetFileReader.WorkaroundChunk.readAsBytesInput})
 * allocates a page's declared compressed size less what the chunk holds, so a 394-byte file
 * declaring a page of 2,000,000,000 bytes allocated that much (found by fuzzing). A page that
 * reaches past its chunk's end by more than {@link #SLACK} (or past the file's end), a v2 page
 * whose level lengths exceed it, or a negative value count damages the row group: {@link
 * ParquetDecodingException}, which {@link ParquetRows} turns into the row group's damage. The
 * footer's chunks were checked when the file was opened ({@link ParquetFiles#checkChunks}): within
 * the file, one value a row.
 *
 * <p>Cost: one page header read (a seek and a few dozen bytes) per page parquet-mr reads, on a
 * stream of the reader's own ({@link WatchedInputFile.Reader#headerStream}); no page is read twice.
 * A header is decoded within its chunk's bytes ({@link BoundedThrift}), so that its own strings
 * (statistics) cannot declare more. A storage failure while reading a header is rethrown as the
 * IOException it is. One thread.
 */
final class PageHeaderCheck {
  /**
   * How far past its chunk's declared end a page may reach: the chunks parquet-mr wrote before
   * 1.2.9 (2013) lack the bytes of their dictionary page header, which its workaround reads on (its
   * own bound on a header is 8 KiB). This is all the workaround may allocate.
   */
  static final int SLACK = 8192;

  private PageHeaderCheck() {}

  /** Checks every page of row group {@code g}'s chunks of {@code columns}, read whole. */
  static void wholeChunks(WatchedInputFile.Reader file, int g, List<ColumnDescriptor> columns)
      throws IOException {
    for (ColumnChunkMetaData chunk : chunks(file, g, columns)) {
      long end = chunk.getStartingPos() + chunk.getTotalSize(); // within the file: checked
      long limit = Math.min(end + SLACK, file.length());
      long pos = chunk.getStartingPos();
      // the pages parquet-mr reads: until their values reach the chunk's (ParquetFileReader.Chunk)
      for (long values = 0; values < chunk.getValueCount(); ) {
        if (pos >= end) {
          throw damage(
              chunk,
              pos,
              "starts at or past its column chunk's end (byte "
                  + end
                  + ") with "
                  + values
                  + " of its "
                  + chunk.getValueCount()
                  + " values read");
        }
        Header h = read(file, chunk, pos, end);
        long size = h.header.getCompressed_page_size(); // not negative: read refuses that
        if (size > limit - h.end) {
          throw damage(
              chunk,
              pos,
              "declares " + size + " bytes, past its column chunk's end (byte " + end + ")");
        }
        values += values(h.header, chunk, pos);
        pos = h.end + size;
      }
    }
  }

  /**
   * Checks the pages of row group {@code g}'s chunks of {@code columns} that {@code
   * ParquetFileReader.readFilteredRowGroup} reads for {@code ranges} (those of each column's offset
   * index that overlap them, and a dictionary page before the first). parquet-mr reads them back to
   * back from the byte ranges the offset index gives, so each must fill its range exactly, header
   * and body; a dictionary page, the bytes from the chunk's start to the first page. False when
   * they do not: the caller reads the whole row group instead, as for a file without an offset
   * index (and checks it with {@link #wholeChunks}).
   */
  static boolean filtered(
      WatchedInputFile.Reader file,
      int g,
      List<ColumnDescriptor> columns,
      ColumnIndexStore indexes,
      RowRanges ranges)
      throws IOException {
    long rows = file.getRowGroups().get(g).getRowCount();
    for (ColumnChunkMetaData chunk : chunks(file, g, columns)) {
      OffsetIndex index = indexes.getOffsetIndex(chunk.getPath());
      if (index.getPageCount() == 0) {
        return false;
      }
      long first = index.getOffset(0);
      if (chunk.getStartingPos() < first
          && !fills(file, chunk, chunk.getStartingPos(), first - chunk.getStartingPos(), true)) {
        return false;
      }
      for (int i = 0; i < index.getPageCount(); i++) {
        if (ranges.isOverlapping(index.getFirstRowIndex(i), index.getLastRowIndex(i, rows))
            && !fills(file, chunk, index.getOffset(i), index.getCompressedPageSize(i), false)) {
          return false;
        }
      }
    }
    return true;
  }

  /** True when a page of the kind wanted fills {@code length} bytes from {@code pos} exactly. */
  private static boolean fills(
      WatchedInputFile.Reader file,
      ColumnChunkMetaData chunk,
      long pos,
      long length,
      boolean dictionary)
      throws IOException {
    long end = chunk.getStartingPos() + chunk.getTotalSize();
    if (pos < chunk.getStartingPos() || length <= 0 || length > end - pos) {
      return false;
    }
    Header h;
    try {
      h = read(file, chunk, pos, pos + length);
      values(h.header, chunk, pos);
    } catch (ParquetDecodingException e) {
      return false;
    }
    PageType type = h.header.getType();
    boolean kind =
        dictionary
            ? type == PageType.DICTIONARY_PAGE
            : type == PageType.DATA_PAGE || type == PageType.DATA_PAGE_V2;
    return kind && h.end + h.header.getCompressed_page_size() == pos + length;
  }

  /** The data values a page header declares (0 for other pages), checked. */
  private static long values(PageHeader h, ColumnChunkMetaData chunk, long pos) {
    long values = 0;
    if (h.getType() == PageType.DATA_PAGE) {
      if (!h.isSetData_page_header()) {
        throw damage(chunk, pos, "is a data page without its data page header");
      }
      values = h.getData_page_header().getNum_values();
    } else if (h.getType() == PageType.DATA_PAGE_V2) {
      if (!h.isSetData_page_header_v2()) {
        throw damage(chunk, pos, "is a v2 data page without its data page header");
      }
      DataPageHeaderV2 v2 = h.getData_page_header_v2();
      long levels =
          (long) v2.getRepetition_levels_byte_length() + v2.getDefinition_levels_byte_length();
      if (v2.getRepetition_levels_byte_length() < 0
          || v2.getDefinition_levels_byte_length() < 0
          || levels > h.getCompressed_page_size()) {
        throw damage(
            chunk,
            pos,
            "declares levels of "
                + v2.getRepetition_levels_byte_length()
                + " and "
                + v2.getDefinition_levels_byte_length()
                + " bytes in a page of "
                + h.getCompressed_page_size());
      }
      values = v2.getNum_values();
    }
    if (values < 0) {
      throw damage(chunk, pos, "declares " + values + " values");
    }
    return values;
  }

  private record Header(PageHeader header, long end) {}

  /**
   * The page header at {@code pos}, read from no further than {@code end} (a header lies within its
   * chunk), and where it ends.
   */
  private static Header read(
      WatchedInputFile.Reader file, ColumnChunkMetaData chunk, long pos, long end)
      throws IOException {
    SeekableInputStream in = file.headerStream();
    in.seek(pos);
    Bounded bounded = new Bounded(in, end - pos);
    PageHeader header;
    try {
      header =
          BoundedThrift.read(
              bounded, (int) Math.min(end - pos, Integer.MAX_VALUE), new PageHeader());
    } catch (IOException e) {
      if (file.storageFailure() != null) {
        throw e;
      }
      throw damage(chunk, pos, "cannot be decoded: " + e.getMessage(), e);
    }
    if (header.getCompressed_page_size() < 0 || header.getUncompressed_page_size() < 0) {
      throw damage(
          chunk,
          pos,
          "declares "
              + header.getCompressed_page_size()
              + " bytes ("
              + header.getUncompressed_page_size()
              + " uncompressed)");
    }
    return new Header(header, pos + bounded.consumed);
  }

  /** The footer's chunks of {@code columns} in row group {@code g}, in the file's order. */
  private static List<ColumnChunkMetaData> chunks(
      WatchedInputFile.Reader file, int g, List<ColumnDescriptor> columns) {
    Set<ColumnPath> read = new HashSet<>();
    columns.forEach(c -> read.add(ColumnPath.get(c.getPath())));
    List<ColumnChunkMetaData> chunks = new ArrayList<>();
    for (ColumnChunkMetaData chunk : file.getRowGroups().get(g).getColumns()) {
      if (read.contains(chunk.getPath())) {
        chunks.add(chunk);
      }
    }
    return chunks;
  }

  private static ParquetDecodingException damage(ColumnChunkMetaData chunk, long pos, String what) {
    return damage(chunk, pos, what, null);
  }

  private static ParquetDecodingException damage(
      ColumnChunkMetaData chunk, long pos, String what, Throwable cause) {
    return new ParquetDecodingException(
        "column '" + chunk.getPath().toDotString() + "': the page at byte " + pos + " " + what,
        cause);
  }

  /** At most {@code left} bytes of a stream, counting those its reader took. */
  private static final class Bounded extends InputStream {
    private final InputStream in;
    private long left;
    private long consumed;

    Bounded(InputStream in, long left) {
      this.in = in;
      this.left = left;
    }

    @Override
    public int read() throws IOException {
      if (left <= 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        left--;
        consumed++;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (left <= 0) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
        consumed += n;
      }
      return n;
    }
  }
}
