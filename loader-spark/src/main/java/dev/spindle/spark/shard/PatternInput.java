package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A brace-pattern input ({@code /data/train-{000000..001281}.tar}) and the shard files it names,
 * found without listing any folder. Immutable; built on the driver.
 *
 * @param input the pattern with its folder part (before the first brace) qualified: the manifest's
 *     input
 * @param uris the named files, qualified and sorted: the shards in canonical order
 * @param format {@link ShardFormat#TAR} or {@link ShardFormat#PARQUET}: all names are of one kind
 */
public record PatternInput(String input, List<String> uris, ShardFormat format) {

  public PatternInput {
    uris = List.copyOf(uris);
  }

  /**
   * Expands a brace pattern ({@link BracePattern}).
   *
   * @throws IllegalArgumentException naming the pattern when it is malformed, names too many files,
   *     names a file that is no tar or Parquet shard, names both kinds, or a name twice
   */
  public static PatternInput expand(String pattern, Configuration conf) throws IOException {
    BracePattern parsed = BracePattern.parse(pattern);
    int dirEnd = folderEnd(parsed);
    String base = base(parsed, conf);
    List<String> uris = new ArrayList<>((int) parsed.size());
    ShardFormat format = null;
    for (String name : parsed.expand()) {
      format = formatOf(pattern, name, format);
      uris.add(base + name.substring(dirEnd));
    }
    uris.sort(null);
    for (int i = 1; i < uris.size(); i++) {
      if (uris.get(i).equals(uris.get(i - 1))) {
        throw new IllegalArgumentException(
            "Brace pattern \"" + pattern + "\" names " + uris.get(i) + " twice");
      }
    }
    return new PatternInput(base + pattern.substring(dirEnd), uris, format);
  }

  /**
   * The pattern as a manifest records it ({@link #input()}), without expanding it.
   *
   * @throws IllegalArgumentException naming the pattern when it is malformed or too large
   */
  public static String locate(String pattern, Configuration conf) throws IOException {
    BracePattern parsed = BracePattern.parse(pattern);
    return base(parsed, conf) + pattern.substring(folderEnd(parsed));
  }

  /** Where the folder part ends: after the last '/' before the first group. */
  private static int folderEnd(BracePattern parsed) {
    return parsed.literalPrefix().lastIndexOf('/') + 1;
  }

  /** The folder part, qualified, with a trailing '/'. */
  private static String base(BracePattern parsed, Configuration conf) throws IOException {
    int dirEnd = folderEnd(parsed);
    Path dir = new Path(dirEnd == 0 ? "." : parsed.literalPrefix().substring(0, dirEnd));
    FileSystem fs = dir.getFileSystem(conf);
    String base = (dirEnd == 0 ? fs.getWorkingDirectory() : fs.makeQualified(dir)).toString();
    return base.endsWith("/") ? base : base + "/";
  }

  private static ShardFormat formatOf(String pattern, String name, ShardFormat before) {
    ShardFormat format = ShardFiles.formatOf(name);
    if (format != ShardFormat.TAR && format != ShardFormat.PARQUET) {
      throw new IllegalArgumentException(
          "Brace pattern \""
              + pattern
              + "\" names "
              + name
              + (TarCompression.isUnreadableTar(name)
                  ? ", a tar compressed in a way Spindle does not read"
                  : ", which is not a shard file")
              + " (tar shards: "
              + TarCompression.suffixList()
              + "; or .parquet)");
    }
    if (before != null && before != format) {
      throw new IllegalArgumentException(
          "Brace pattern \""
              + pattern
              + "\" names both tar and"
              + " Parquet shards ("
              + name
              + "); a data set's shards are of one kind");
    }
    return format;
  }
}
