package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * The checks that a {@code preprocess} output's part file still is the file its {@code
 * _manifest.json} committed: same size, same rows, the columns {@code preprocess} writes. Done by
 * the readers when they open it, on the executor (the driver reads nothing but the manifest). A
 * mismatch is an {@link IOException} naming the file and both values: the task fails, and so does
 * the job once Spark gave up retrying it. Stateless; any thread.
 */
final class StoredFiles {
  private StoredFiles() {}

  /** The file's status, after checking its size against the manifest's. */
  static FileStatus requireSize(Shard shard, Configuration conf) throws IOException {
    Path path = new Path(shard.uri());
    FileStatus status;
    try {
      status = path.getFileSystem(conf).getFileStatus(path);
    } catch (FileNotFoundException e) {
      throw mismatch(shard.uri(), "it does not exist");
    }
    if (status.getLen() != shard.bytes()) {
      throw mismatch(
          shard.uri(), "it is " + status.getLen() + " bytes, the manifest lists " + shard.bytes());
    }
    return status;
  }

  /** Checks the rows the file holds against the manifest's count. */
  static void requireRows(Shard shard, long rows) throws IOException {
    if (rows != shard.samples()) {
      throw mismatch(
          shard.uri(), "it holds " + rows + " rows, the manifest lists " + shard.samples());
    }
  }

  static IOException mismatch(String uri, String what) {
    return mismatch(uri, what, null);
  }

  static IOException mismatch(String uri, String what, Throwable cause) {
    return new IOException(
        uri
            + " no longer matches the "
            + PreprocessedInput.MANIFEST
            + " that lists it: "
            + what
            + " (was it changed or replaced after preprocess committed"
            + " it?)",
        cause);
  }
}
