package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.api.Binary;

/**
 * Reads a Parquet shard row by row: row {@code N} (counted from 0 over the whole file) is sample
 * {@code N}, key {@code <file name>#N}. Only the image and label columns are read ({@link
 * ParquetLayout}); row groups without a wanted row are never read, and within a row group only
 * the pages that hold one ({@link ParquetRowGroup}). A null image or label, an image over {@code
 * spark.spindle.maxSampleBytes} or a label outside {@link LabelRule} makes a sample with a problem;
 * so does every wanted row of a row group whose pages cannot be decoded (from the failing row on),
 * while the next row groups are read as usual. A storage error fails the reader ({@link
 * UncheckedIOException} naming the shard). One thread.
 */
final class ParquetShardReader implements ShardReader {
  private final Shard shard;
  private final String fileName;
  private final ParquetFileReader file;
  private final ParquetLayout layout;
  private final SampleLimits limits;
  private final long[] starts; // the first row of each row group, then the file's row count
  private final int[] wanted; // rows to read, strictly increasing; null = every row
  private int nextWanted;
  private long nextRow;
  private boolean closed;
  private int groupIndex = -1;
  private ParquetRowGroup group;
  private String groupDamage; // why the current row group's remaining rows cannot be read

  private ParquetShardReader(Shard shard, ParquetFileReader file, ParquetLayout layout,
      SampleLimits limits, int[] wanted) {
    this.shard = shard;
    this.fileName = new Path(shard.uri()).getName();
    this.file = file;
    this.layout = layout;
    this.limits = limits;
    this.wanted = wanted;
    this.starts = new long[file.getRowGroups().size() + 1];
    for (int g = 0; g < file.getRowGroups().size(); g++) {
      starts[g + 1] = starts[g] + file.getRowGroups().get(g).getRowCount();
    }
  }

  /** A reader of only the rows at {@code positions} (strictly increasing), or all if null. */
  static ParquetShardReader open(Shard shard, Configuration conf, SampleLimits limits,
      int[] positions) throws IOException {
    ParquetFileReader file = ParquetFiles.open(shard.uri(), conf);
    try {
      ParquetLayout layout = ParquetLayout.resolve(
          file.getFileMetaData().getSchema(), shard.columns(), shard.uri());
      file.setRequestedSchema(layout.schema());
      return new ParquetShardReader(shard, file, layout, limits, positions);
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
  }

  @Override
  public boolean hasNext() {
    return !closed && nextPosition() < starts[starts.length - 1];
  }

  @Override
  public Sample next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more samples in " + shard.uri());
    }
    long row = nextPosition();
    if (wanted == null) {
      nextRow++;
    } else {
      nextWanted++;
    }
    return read(row);
  }

  private long nextPosition() {
    if (wanted == null) {
      return nextRow;
    }
    return nextWanted < wanted.length ? wanted[nextWanted] : Long.MAX_VALUE;
  }

  private Sample read(long row) {
    int g = groupOf(row);
    if (g != groupIndex) {
      openGroup(g);
    }
    SampleBuilder sample = new SampleBuilder(shard.uri(), fileName + "#" + row, row, limits);
    if (groupDamage == null) {
      try {
        group.seek(row - starts[g]);
        fill(sample, row);
      } catch (RuntimeException e) {
        groupDamage = group(g) + " cannot be decoded from row " + row + " on: " + e;
      }
    }
    return groupDamage != null ? sample.problem(groupDamage).build() : sample.build();
  }

  private void fill(SampleBuilder sample, long row) {
    String imageColumn = String.join(".", layout.image().getPath());
    Binary image = group.image();
    if (image == null) {
      sample.problem("the image is null (column '" + imageColumn + "', row " + row + ")");
    } else if (image.length() > limits.maxSampleBytes()) {
      sample.problem(String.format("image is %d bytes, over spark.spindle.maxSampleBytes=%d",
          image.length(), limits.maxSampleBytes()));
    } else {
      sample.image(image.getBytes(), imageColumn + " of row " + row);
    }
    Long label = group.label();
    String labelColumn = " (column '" + shard.columns().label() + "', row " + row + ")";
    if (label == null) {
      sample.problem("the label is null" + labelColumn);
    } else {
      sample.label(layout.labelNumber(label),
          "label " + layout.labelText(label) + labelColumn);
    }
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
      group = ParquetRowGroup.read(file, g, layout, wantedIn(g));
    } catch (IOException e) {
      throw new UncheckedIOException("Failed reading row group " + g + " of Parquet shard "
          + shard.uri() + ": " + e.getMessage(), e);
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
