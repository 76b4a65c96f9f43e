package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.schema.MessageType;

/**
 * Walks the rows a Parquet shard reader yields: every row of the file, or only wanted positions,
 * opening each row group that holds one ({@link ParquetRowGroup}: only the pages holding wanted
 * rows) and skipping the others. A row group whose pages cannot be read or decoded is damaged from
 * the failing row on ({@link #damage()}), and the next row groups are read as usual; so is one
 * whose pages the footer places past the end of the file, one whose page headers declare more than
 * their column chunks hold ({@link PageHeaderCheck}, before parquet-mr allocates it), or whose
 * pages parquet-mr refuses with an IOException while the storage did not fail ({@link
 * WatchedInputFile}). A storage error is an {@link UncheckedIOException} naming the shard. Owns the
 * file; one thread.
 *
 * <p>Calling pattern: {@link #next()} gives a row; {@link #at} positions the row group on it, or
 * returns null when the row group is damaged; {@link #damaged} records a failure while the row was
 * read.
 */
final class ParquetRows implements AutoCloseable {
  private final String uri;
  private final WatchedInputFile.Reader file;
  private final MessageType schema;
  private final List<ColumnDescriptor> columns;
  private final long[] starts; // the first row of each row group, then the file's row count
  private final int[] wanted; // rows to read, strictly increasing; null = every row
  private int nextWanted;
  private long nextRow;
  private boolean closed;
  private int groupIndex = -1;
  private ParquetRowGroup group;
  private String groupDamage; // why the current row group's remaining rows cannot be read

  ParquetRows(
      String uri,
      WatchedInputFile.Reader file,
      MessageType schema,
      List<ColumnDescriptor> columns,
      int[] wanted) {
    this.uri = uri;
    this.file = file;
    this.schema = schema;
    this.columns = columns;
    this.wanted = wanted;
    this.starts = new long[file.getRowGroups().size() + 1];
    for (int g = 0; g < file.getRowGroups().size(); g++) {
      starts[g + 1] = starts[g] + file.getRowGroups().get(g).getRowCount();
    }
  }

  /** Rows in the file, from its footer. */
  long rowCount() {
    return starts[starts.length - 1];
  }

  boolean hasNext() {
    return !closed && nextPosition() < rowCount();
  }

  /** The next row to read. */
  long next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more rows in " + uri);
    }
    long row = nextPosition();
    if (wanted == null) {
      nextRow++;
    } else {
      nextWanted++;
    }
    return row;
  }

  private long nextPosition() {
    if (wanted == null) {
      return nextRow;
    }
    return nextWanted < wanted.length ? wanted[nextWanted] : Long.MAX_VALUE;
  }

  /**
   * The row group holding {@code row} (the row {@link #next()} just gave), positioned on it; null
   * when that row group is damaged from this row on.
   */
  ParquetRowGroup at(long row) {
    int g = groupOf(row);
    if (g != groupIndex) {
      openGroup(g);
    }
    if (groupDamage == null) {
      try {
        group.seek(row - starts[g]);
      } catch (RuntimeException e) {
        damaged(row, e);
      }
    }
    return groupDamage == null ? group : null;
  }

  /**
   * Records that {@code row}'s values could not be decoded: its row group is damaged from it on.
   */
  void damaged(long row, RuntimeException e) {
    groupDamage = group(groupIndex) + " cannot be decoded from row " + row + " on: " + e;
  }

  /** Why the current row group's rows cannot be read, or null. */
  String damage() {
    return groupDamage;
  }

  /** The row group holding {@code row}. */
  private int groupOf(long row) {
    int i = Arrays.binarySearch(starts, row);
    int g = i >= 0 ? i : -i - 2;
    while (starts[g + 1] == starts[g]) { // empty row groups share their start with the next
      g++;
    }
    return g;
  }

  private void openGroup(int g) {
    closeGroup();
    groupIndex = g;
    groupDamage = null;
    try {
      group = ParquetRowGroup.read(file, g, schema, columns, wantedIn(g));
    } catch (EOFException e) { // the footer places the group's pages past the end of the file
      groupDamage =
          group(g)
              + " cannot be read: its pages run past the end of the file ("
              + e.getMessage()
              + ")";
    } catch (IOException e) {
      if (file.storageFailure() == null) { // parquet-mr's own: the content is not what it says
        groupDamage = group(g) + " cannot be read: " + e.getMessage();
        return;
      }
      throw new UncheckedIOException(
          "Failed reading row group " + g + " of Parquet shard " + uri + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      groupDamage = group(g) + " cannot be read: " + e;
    }
  }

  private String group(int g) {
    return "row group " + g + " (rows " + starts[g] + "–" + (starts[g + 1] - 1) + ")";
  }

  /** The wanted rows of row group {@code g} within it, or null to read the whole group. */
  private long[] wantedIn(int g) {
    if (wanted == null) {
      return null;
    }
    int from = nextWanted - 1; // the row being read is the first wanted one of the group
    int to = from;
    while (to < wanted.length && wanted[to] < starts[g + 1]) {
      to++;
    }
    if (to - from == starts[g + 1] - starts[g]) {
      return null;
    }
    long[] rows = new long[to - from];
    for (int i = from; i < to; i++) {
      rows[i - from] = wanted[i] - starts[g];
    }
    return rows;
  }

  private void closeGroup() {
    if (group != null) {
      group.close();
      group = null;
    }
  }

  /** Releases the row group read and closes the file; idempotent. */
  @Override
  public void close() throws IOException {
    if (!closed) {
      closed = true;
      try {
        closeGroup();
      } finally {
        file.close();
      }
    }
  }
}
