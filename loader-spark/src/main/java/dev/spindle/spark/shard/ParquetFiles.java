package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.hadoop.ParquetInputFormat;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ColumnPath;
import org.apache.parquet.hadoop.util.HadoopCodecs;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.InputFile;

/**
 * Opening Parquet shards and counting their rows from the footer alone, after checking what the
 * footer claims against the file (row counts, the column chunks read). Stateless; any thread.
 */
final class ParquetFiles {
  private ParquetFiles() {}

  /**
   * Opens a Parquet file and reads its footer (nothing else), with the read options of {@code conf}
   * (parquet-mr's {@code parquet.*} keys, e.g. vectored reads). Page checksums, where the writer
   * stored them, are verified unless {@code parquet.page.verify-checksum.enabled=false}: a corrupt
   * page is a damaged row group, not silently wrong image bytes. A page over {@link
   * PageSizeLimit}'s bound for {@code limits} damages its row group too.
   *
   * @throws FileNotFoundException when it does not exist
   * @throws ShardRefusedException when its footer cannot be read (not Parquet, truncated, corrupt)
   */
  static WatchedInputFile.Reader open(String uri, Configuration conf, SampleLimits limits)
      throws IOException {
    Path path = new Path(uri);
    FileStatus status = path.getFileSystem(conf).getFileStatus(path);
    return open(status, conf, limits);
  }

  private static WatchedInputFile.Reader open(
      FileStatus status, Configuration conf, SampleLimits limits) throws IOException {
    return open(
        HadoopInputFile.fromStatus(status, conf),
        options(conf, status.getPath(), limits),
        status.getPath().toString());
  }

  /**
   * The read options of {@code conf}, with page checksums verified unless turned off and pages
   * bounded by {@link PageSizeLimit} (a page may hold a sample of {@code limits}).
   */
  static ParquetReadOptions options(Configuration conf, Path path, SampleLimits limits) {
    return HadoopReadOptions.builder(conf, path)
        .usePageChecksumVerification(
            conf.getBoolean(ParquetInputFormat.PAGE_VERIFY_CHECKSUM_ENABLED, true))
        .withCodecFactory(
            PageSizeLimit.wrap(HadoopCodecs.newFactory(conf, 0), limits.maxSampleBytes()))
        .build();
  }

  /**
   * Opens {@code file} (called {@code name} in messages) and reads its footer; the Hadoop paths
   * above come here, and so does the fuzz target, with the file's bytes in memory.
   *
   * @throws ShardRefusedException when its footer cannot be read (not Parquet, truncated, corrupt)
   *     or declares row counts it cannot hold ({@link #checkRowCounts})
   */
  static WatchedInputFile.Reader open(InputFile file, ParquetReadOptions options, String name)
      throws IOException {
    WatchedInputFile.Reader reader;
    try {
      reader = new WatchedInputFile.Reader(new WatchedInputFile(file), options);
    } catch (FileNotFoundException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new ShardRefusedException(
          name
              + ": cannot read its Parquet footer ("
              + e.getMessage()
              + "); the file is not Parquet, truncated or corrupt",
          e);
    }
    try {
      checkRowCounts(reader, name);
      return reader;
    } catch (ShardRefusedException e) {
      reader.close();
      throw e;
    }
  }

  /**
   * A footer's row counts must be counts of a shard: none negative, no more rows in all than the
   * file has bytes, and at most {@link Integer#MAX_VALUE} (positions within a shard are ints).
   * Every row claimed becomes a sample, read or quarantined, so a footer claiming billions of rows
   * made reading a small file take as long as the claim (found by fuzzing). Parquet can encode a
   * row in under a byte (runs of nulls or of one repeated value), but a shard of images cannot: a
   * file with more rows than bytes is taken for a corrupt one.
   */
  private static void checkRowCounts(WatchedInputFile.Reader reader, String name)
      throws ShardRefusedException {
    long total = 0;
    List<BlockMetaData> groups = reader.getRowGroups();
    for (int g = 0; g < groups.size(); g++) {
      long rows = groups.get(g).getRowCount();
      if (rows < 0 || rows > reader.length() - total) {
        throw new ShardRefusedException(
            name
                + ": its Parquet footer declares "
                + rows
                + " rows in row group "
                + g
                + (rows < 0 ? "" : ", more rows than the file has bytes (" + reader.length() + ")")
                + "; the file is corrupt");
      }
      total += rows;
    }
    if (total > Integer.MAX_VALUE) {
      throw new ShardRefusedException(
          name
              + ": its Parquet footer declares "
              + total
              + " rows; a shard holds at most "
              + Integer.MAX_VALUE
              + " (split the file)");
    }
  }

  /**
   * The layout of {@code columns} in an open file ({@link ParquetLayout#resolve}), its column
   * chunks checked ({@link #checkChunks}): counting and reading both resolve with this.
   */
  static ParquetLayout layout(WatchedInputFile.Reader file, ParquetColumns columns, String name)
      throws ShardRefusedException {
    ParquetLayout layout = ParquetLayout.resolve(file.getFileMetaData().getSchema(), columns, name);
    checkChunks(file, layout.read(), name);
    return layout;
  }

  /**
   * The footer's column chunks of {@code columns} (the ones a reader reads) must lie within the
   * file and hold one value per row of their row group. parquet-mr allocates a chunk's declared
   * length before reading it, so a footer placing a chunk past the end of a small file allocated
   * what it declared. The image and label columns are not repeated (see {@link ParquetLayout}), so
   * each row, null or not, is one value; a repeated column (a declared field's list, {@link
   * ParquetFields}) holds at least one entry per row, an empty or null list included; a footer
   * whose row count exceeds what its chunks hold is corrupt (see {@link #checkRowCounts}).
   */
  static void checkChunks(WatchedInputFile.Reader file, List<ColumnDescriptor> columns, String name)
      throws ShardRefusedException {
    Set<ColumnPath> read = new HashSet<>();
    Set<ColumnPath> repeated = new HashSet<>();
    columns.forEach(c -> read.add(ColumnPath.get(c.getPath())));
    columns.stream()
        .filter(c -> c.getMaxRepetitionLevel() > 0)
        .forEach(c -> repeated.add(ColumnPath.get(c.getPath())));
    List<BlockMetaData> groups = file.getRowGroups();
    for (int g = 0; g < groups.size(); g++) {
      for (ColumnChunkMetaData chunk : groups.get(g).getColumns()) {
        if (read.contains(chunk.getPath())) {
          checkChunk(
              chunk,
              "column '" + chunk.getPath().toDotString() + "' of row group " + g,
              groups.get(g).getRowCount(),
              repeated.contains(chunk.getPath()),
              file.length(),
              name);
        }
      }
    }
  }

  private static void checkChunk(
      ColumnChunkMetaData chunk, String what, long rows, boolean repeated, long length, String name)
      throws ShardRefusedException {
    long start = chunk.getStartingPos();
    long size = chunk.getTotalSize();
    if (start < 0 || size < 0 || size > length - start) {
      throw new ShardRefusedException(
          name
              + ": "
              + what
              + " declares "
              + size
              + " bytes from byte "
              + start
              + ", past the end of the file ("
              + length
              + " bytes); the file is corrupt");
    }
    if (repeated ? chunk.getValueCount() < rows : chunk.getValueCount() != rows) {
      throw new ShardRefusedException(
          name
              + ": "
              + what
              + " declares "
              + chunk.getValueCount()
              + " values for the row group's "
              + rows
              + " rows; the file is corrupt");
    }
  }

  /**
   * The rows of a Parquet file, from its footer's row groups (no page is read), after checking that
   * its schema has the {@code columns} with usable types.
   */
  static long countRows(FileStatus status, Configuration conf, ParquetColumns columns)
      throws IOException {
    return countRows(
        open(status, conf, new SampleLimits(1, 0)), columns, status.getPath().toString());
  }

  /** {@link #countRows(FileStatus, Configuration, ParquetColumns)} of an open file; closes it. */
  static long countRows(WatchedInputFile.Reader opened, ParquetColumns columns, String name)
      throws IOException {
    try (WatchedInputFile.Reader file = opened) {
      layout(file, columns, name);
      return file.getRecordCount();
    }
  }
}
