package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFiles;
import dev.spindle.spark.shard.ShardFormat;
import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Why an input holds no samples at all: for each tar shard that counted none, what its bytes are —
 * empty, all zeros (end-of-archive blocks only, or a file overwritten with zeros), or a valid
 * archive without a member that belongs to a sample. Blocks of zeros do not end what is read
 * (archives written one after another into one file read as one), so data behind them is read or is
 * damage, and damage is a sample: a shard that counted none holds no data. A compressed shard is
 * described by its decompressed archive. Driver; runs only on that failure.
 */
public final class EmptyShards {
  private static final long SCAN_LIMIT = 64L << 20;
  private static final int LISTED = 10;

  private EmptyShards() {}

  /** The job's error: the input, then one line per shard (the first ten) saying what it holds. */
  public static String message(String input, Manifest manifest, Configuration conf) {
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
      try (InputStream in = ShardFiles.tarBytes(shard.uri(), conf)) {
        return describe(in, length);
      }
    } catch (IOException e) {
      return "cannot be read to say why: " + e.getMessage();
    }
  }

  private static String describe(InputStream in, long length) throws IOException {
    long offset = 0;
    byte[] buf = new byte[1 << 16];
    while (offset < SCAN_LIMIT) {
      int r = in.read(buf);
      if (r < 0) {
        return "only zero bytes ("
            + offset
            + "): an empty archive, or a file overwritten with zeros";
      }
      for (int i = 0; i < r; i++) {
        if (buf[i] != 0) {
          return "no sample: a readable tar archive ("
              + length
              + " bytes) whose entries are only directories, links, other entries that are not"
              + " files, or members that belong to no sample (names starting with '.', such as"
              + " macOS's ._* files; __MACOSX/; WebDataset's __…__ metadata)";
        }
      }
      offset += r;
    }
    return "its first " + offset + " bytes are zeros";
  }
}
