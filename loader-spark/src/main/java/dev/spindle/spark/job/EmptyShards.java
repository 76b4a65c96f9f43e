package dev.spindle.spark.job;

import dev.spindle.spark.shard.Manifest;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Why an input holds no samples at all: for each {@code .tar} shard that counted none, what its
 * bytes are — empty, all zeros, an end-of-archive block with data behind it (corrupt: a reader
 * stops there), or a valid archive without regular files. Driver; runs only on that failure.
 */
final class EmptyShards {
  private static final int BLOCK = 512;
  private static final long SCAN_LIMIT = 64L << 20;
  private static final int LISTED = 10;

  private EmptyShards() {}

  /** The job's error: the input, then one line per shard (the first ten) saying what it holds. */
  static String message(String input, Manifest manifest, Configuration conf) {
    StringBuilder s =
        new StringBuilder(
            "No samples in "
                + input
                + ": all "
                + manifest.shards().size()
                + " shard(s) are empty or corrupt; none holds a sample:");
    manifest.shards().stream()
        .limit(LISTED)
        .forEach(
            shard ->
                s.append("\n  ").append(shard.uri()).append(": ").append(describe(shard, conf)));
    if (manifest.shards().size() > LISTED) {
      s.append("\n  … and ").append(manifest.shards().size() - LISTED).append(" more");
    }
    return s.toString();
  }

  static String describe(Shard shard, Configuration conf) {
    if (shard.format() != ShardFormat.TAR) {
      return "holds no images";
    }
    try {
      Path path = new Path(shard.uri());
      FileSystem fs = path.getFileSystem(conf);
      long length = fs.getFileStatus(path).getLen();
      if (length == 0) {
        return "an empty file (0 bytes), not a tar archive: a tar holds at least its"
            + " end-of-archive blocks (truncated, or never written?)";
      }
      try (InputStream in = fs.open(path, 1 << 16)) {
        return describe(in, length);
      }
    } catch (IOException e) {
      return "cannot be read to say why: " + e.getMessage();
    }
  }

  private static String describe(InputStream in, long length) throws IOException {
    byte[] block = new byte[BLOCK];
    int n = in.readNBytes(block, 0, BLOCK);
    if (!allZero(block, n)) {
      return "no sample: a readable tar archive ("
          + length
          + " bytes) whose entries are only"
          + " directories, links or other entries that are not files";
    }
    long offset = n;
    byte[] buf = new byte[1 << 16];
    while (offset < Math.min(length, SCAN_LIMIT)) {
      int r = in.read(buf);
      if (r < 0) {
        break;
      }
      for (int i = 0; i < r; i++) {
        if (buf[i] != 0) {
          return "corrupt: it starts with an end-of-archive block (512 zero bytes) but holds"
              + " data at byte "
              + (offset + i)
              + " of "
              + length
              + "; a tar reader stops at"
              + " that block, so nothing after it can be read";
        }
      }
      offset += r;
    }
    return offset >= length
        ? "only zero bytes (" + length + "): an empty archive, or a file overwritten with zeros"
        : "starts with an end-of-archive block; its first "
            + offset
            + " of "
            + length
            + " bytes are zeros";
  }

  private static boolean allZero(byte[] b, int n) {
    for (int i = 0; i < n; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return true;
  }
}
