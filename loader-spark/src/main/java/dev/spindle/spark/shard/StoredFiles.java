package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.zip.CRC32C;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The checks that a {@code preprocess} output's part file still is the file its {@code
 * _manifest.json} committed: same size, same rows, the columns {@code preprocess} writes, and the
 * checksums the manifest records ({@link PartChecks}). Done by the readers when they open it, on
 * the executor (the driver reads nothing but the manifest). A mismatch is an {@link IOException}
 * naming the file and both values: the task fails, and so does the job once Spark gave up retrying
 * it. Stateless; any thread.
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

  /**
   * Checks the whole file's CRC-32C against the manifest's, reading it once from start to end (1
   * MiB at a time); nothing when the manifest records none.
   */
  static void requireFileCrc(Shard shard, FileStatus status, Configuration conf)
      throws IOException {
    if (shard.checks() == null) {
      return;
    }
    CRC32C crc = new CRC32C();
    byte[] buffer = new byte[1 << 20];
    try (InputStream in = openSelfChecked(shard, status, conf)) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        crc.update(buffer, 0, n);
      }
    }
    if (crc.getValue() != shard.checks().crc32c()) {
      throw mismatch(
          shard.uri(),
          "its CRC-32C is "
              + PartChecks.hex(crc.getValue())
              + ", the manifest lists "
              + PartChecks.hex(shard.checks().crc32c()));
    }
  }

  /**
   * Opens a part file for a reader that checks what it reads against the manifest's checksums (the
   * manifest records them: {@code shard.checks()} is set): on a {@link ChecksumFileSystem}
   * (Hadoop's local file system, {@code file:}) through the raw file system beneath it, as its
   * {@code .crc} side file would check the same bytes a second time, 512 bytes at a time ({@code
   * FSInputChecker.verifySums}, most of the CPU of feeding a preprocess output); on any other file
   * system, and for a manifest without checksums, as the file system opens it. Never changes the
   * shared {@link FileSystem} instance (no {@code setVerifyChecksum}).
   */
  static FSDataInputStream openSelfChecked(Shard shard, FileStatus status, Configuration conf)
      throws IOException {
    FileSystem fs = status.getPath().getFileSystem(conf);
    if (shard.checks() != null && fs instanceof ChecksumFileSystem checked) {
      fs = checked.getRawFileSystem();
    }
    return fs.open(status.getPath());
  }

  /**
   * Each record batch's CRC-32C as an Arrow file's footer lists them ({@link
   * PartChecks#BATCH_CRCS}), after checking that list against the manifest's {@code
   * batches_crc32c}; null when the manifest records none.
   */
  static long[] batchCrcs(Shard shard, Map<String, String> footer, int batches) throws IOException {
    if (shard.checks() == null) {
      return null;
    }
    String list = footer == null ? null : footer.get(PartChecks.BATCH_CRCS);
    if (list == null) {
      throw mismatch(
          shard.uri(),
          "its footer has no "
              + PartChecks.BATCH_CRCS
              + ", the manifest lists batches_crc32c "
              + PartChecks.hex(shard.checks().batchesCrc32c()));
    }
    long found = PartChecks.crcOfList(list);
    if (found != shard.checks().batchesCrc32c() || list.length() != 8 * batches) {
      throw mismatch(
          shard.uri(),
          "its record batches' checksums ("
              + batches
              + " batches, "
              + PartChecks.BATCH_CRCS
              + " in its footer) hash to "
              + PartChecks.hex(found)
              + ", the manifest lists batches_crc32c "
              + PartChecks.hex(shard.checks().batchesCrc32c()));
    }
    long[] crcs = new long[batches];
    for (int b = 0; b < batches; b++) {
      crcs[b] = PartChecks.parseHex(list.substring(8 * b, 8 * b + 8));
    }
    return crcs;
  }

  static IOException mismatch(String uri, String what) {
    return mismatch(uri, what, (Throwable) null);
  }

  static IOException mismatch(String uri, String what, Throwable cause) {
    return new IOException(message(uri, what, REPLACED), cause);
  }

  /** A mismatch with its own guess at the cause. */
  static IOException mismatch(String uri, String what, String question) {
    return new IOException(message(uri, what, question));
  }

  private static final String REPLACED =
      "was it changed or replaced after preprocess committed it?";

  private static String message(String uri, String what, String question) {
    return uri
        + " no longer matches the _manifest.json" // PreprocessedInput.MANIFEST, in a package above
        + " that lists it: "
        + what
        + " ("
        + question
        + ")";
  }
}
