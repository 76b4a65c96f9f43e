package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetInputFormat;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.util.HadoopCodecs;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.InputFile;

/** Opening Parquet shards and counting their rows from the footer alone. Stateless; any thread. */
final class ParquetFiles {
  private ParquetFiles() {}

  /**
   * Opens a Parquet file and reads its footer (nothing else), with the read options of {@code
   * conf} (parquet-mr's {@code parquet.*} keys, e.g. vectored reads). Page checksums, where the
   * writer stored them, are verified unless {@code parquet.page.verify-checksum.enabled=false}: a
   * corrupt page is a damaged row group, not silently wrong image bytes. A page over {@link PageSizeLimit}'s bound for {@code limits} damages its row group too.
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

  private static WatchedInputFile.Reader open(FileStatus status, Configuration conf,
      SampleLimits limits) throws IOException {
    return open(HadoopInputFile.fromStatus(status, conf), options(conf, status.getPath(), limits),
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
        .withCodecFactory(PageSizeLimit.wrap(HadoopCodecs.newFactory(conf, 0),
            limits.maxSampleBytes()))
        .build();
  }

  /**
   * Opens {@code file} (called {@code name} in messages) and reads its footer; the Hadoop paths
   * above come here, and so does the fuzz target, with the file's bytes in memory.
   *
   * @throws ShardRefusedException when its footer cannot be read (not Parquet, truncated, corrupt)
   */
  static WatchedInputFile.Reader open(InputFile file, ParquetReadOptions options, String name)
      throws IOException {
    WatchedInputFile.Reader reader;
    try {
      reader = new WatchedInputFile.Reader(new WatchedInputFile(file), options);
    } catch (FileNotFoundException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new ShardRefusedException(name + ": cannot read its Parquet footer ("
          + e.getMessage() + "); the file is not Parquet, truncated or corrupt", e);
    }
    try {
      checkRowCounts(reader, name);
      return reader;
    } catch (ShardRefusedException e) {
      reader.close();
      throw e;
    }
  }

  /** A footer's row counts must be counts: none negative, their sum a long. */
  private static void checkRowCounts(ParquetFileReader reader, String name)
      throws ShardRefusedException {
    long total = 0;
    List<BlockMetaData> groups = reader.getRowGroups();
    for (int g = 0; g < groups.size(); g++) {
      long rows = groups.get(g).getRowCount();
      if (rows < 0 || rows > Long.MAX_VALUE - total) {
        throw new ShardRefusedException(name + ": its Parquet footer declares " + rows
            + " rows in row group " + g + (rows < 0 ? "" : " (over 2^63 in all)")
            + "; the file is corrupt");
      }
      total += rows;
    }
  }

  /**
   * The rows of a Parquet file, from its footer's row groups (no page is read), after checking
   * that its schema has the {@code columns} with usable types.
   */
  static long countRows(FileStatus status, Configuration conf, ParquetColumns columns)
      throws IOException {
    return countRows(open(status, conf, new SampleLimits(1, 0)), columns,
        status.getPath().toString());
  }

  /** {@link #countRows(FileStatus, Configuration, ParquetColumns)} of an open file; closes it. */
  static long countRows(ParquetFileReader opened, ParquetColumns columns, String name)
      throws IOException {
    try (ParquetFileReader file = opened) {
      ParquetLayout.resolve(file.getFileMetaData().getSchema(), columns, name);
      return file.getRecordCount();
    }
  }
}
