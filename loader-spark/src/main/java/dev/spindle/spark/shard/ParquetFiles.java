package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetInputFormat;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/** Opening Parquet shards and counting their rows from the footer alone. Stateless; any thread. */
final class ParquetFiles {
  private ParquetFiles() {}

  /**
   * Opens a Parquet file and reads its footer (nothing else), with the read options of {@code
   * conf} (parquet-mr's {@code parquet.*} keys, e.g. vectored reads). Page checksums, where the
   * writer stored them, are verified unless {@code parquet.page.verify-checksum.enabled=false}: a
   * corrupt page is a damaged row group, not silently wrong image bytes.
   *
   * @throws FileNotFoundException when it does not exist
   * @throws ShardRefusedException when its footer cannot be read (not Parquet, truncated, corrupt)
   */
  static ParquetFileReader open(String uri, Configuration conf) throws IOException {
    Path path = new Path(uri);
    FileStatus status = path.getFileSystem(conf).getFileStatus(path);
    return open(status, conf);
  }

  private static ParquetFileReader open(FileStatus status, Configuration conf)
      throws IOException {
    try {
      return ParquetFileReader.open(HadoopInputFile.fromStatus(status, conf),
          HadoopReadOptions.builder(conf, status.getPath())
              .usePageChecksumVerification(
                  conf.getBoolean(ParquetInputFormat.PAGE_VERIFY_CHECKSUM_ENABLED, true))
              .build());
    } catch (FileNotFoundException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new ShardRefusedException(status.getPath() + ": cannot read its Parquet footer ("
          + e.getMessage() + "); the file is not Parquet, truncated or corrupt", e);
    }
  }

  /**
   * The rows of a Parquet file, from its footer's row groups (no page is read), after checking
   * that its schema has the {@code columns} with usable types.
   */
  static long countRows(FileStatus status, Configuration conf, ParquetColumns columns)
      throws IOException {
    try (ParquetFileReader file = open(status, conf)) {
      ParquetLayout.resolve(file.getFileMetaData().getSchema(), columns,
          status.getPath().toString());
      return file.getRecordCount();
    }
  }
}
