package dev.spindle.spark.shard;

import java.io.BufferedInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * Shard files by name, and how each kind is counted. Stateless; any thread.
 *
 * <ul>
 *   <li>{@code .tar}, and compressed tars ({@link TarCompression}: {@code .tar.gz}, {@code .tgz},
 *       {@code .tar.xz}, {@code .txz}, {@code .tar.bz2}, {@code .tbz2}, {@code .tbz}, {@code
 *       .tar.zst}, {@code .tzst}): a WebDataset tar, counted by walking its headers (a compressed
 *       one is decompressed on the way);
 *   <li>{@code .parquet}: a Parquet file, counted from its footer's row groups alone, after its
 *       schema was checked for the image and label columns;
 *   <li>torchvision's {@code IMG_EXTENSIONS} ({@link FolderImages}): a file of an image folder
 *       tree.
 * </ul>
 */
public final class ShardFiles {
  private ShardFiles() {}

  /** The kind of shard a file of this name is ({@code IMAGE_FOLDER} for an image), or null. */
  public static ShardFormat formatOf(String fileName) {
    String lower = fileName.toLowerCase(Locale.ROOT);
    if (TarCompression.of(lower) != null) {
      return ShardFormat.TAR;
    }
    if (lower.endsWith(".parquet")) {
      return ShardFormat.PARQUET;
    }
    return FolderImages.isImage(fileName) ? ShardFormat.IMAGE_FOLDER : null;
  }

  /**
   * Counting of tar or Parquet shard files: each file's size, modification time and samples, or why
   * it is refused.
   */
  public static FileCounting counting(ShardFormat format, ParquetColumns columns) {
    return counting(format, columns, null);
  }

  /**
   * {@link #counting(ShardFormat, ParquetColumns)} that also writes each uncompressed tar's member
   * index at {@code indexes} (null: none), from the same walk of its headers ({@link TarIndex}); a
   * tar that gets none says why ({@link FileCount#notIndexed()}).
   */
  public static FileCounting counting(
      ShardFormat format, ParquetColumns columns, TarIndexes indexes) {
    if (format == ShardFormat.IMAGE_FOLDER) {
      throw new IllegalArgumentException("Image folder shards are not counted file by file");
    }
    return (uri, conf) -> {
      try {
        FileStatus status = status(uri, conf);
        if (format != ShardFormat.TAR) {
          long rows = ParquetFiles.countRows(status, conf, columns);
          return new FileCount(uri, status.getLen(), status.getModificationTime(), rows, null);
        }
        TarShardReader.Walk walk = walkTar(status, conf);
        String notIndexed =
            indexes == null
                ? null
                : TarCompression.compressed(uri)
                    ? "a compressed tar has no random access"
                    : TarIndexFiles.write(indexes, uri, status, walk, conf);
        return new FileCount(
            uri, status.getLen(), status.getModificationTime(), walk.samples(), null, notIndexed);
      } catch (ShardRefusedException e) {
        return FileCount.refused(uri, e.getMessage());
      }
    };
  }

  private static FileStatus status(String uri, Configuration conf) throws IOException {
    Path path = new Path(uri);
    FileStatus status;
    try {
      status = path.getFileSystem(conf).getFileStatus(path);
    } catch (FileNotFoundException e) {
      throw new ShardRefusedException(uri + " does not exist");
    }
    if (!status.isFile()) {
      throw new ShardRefusedException(uri + " is a folder, not a shard file");
    }
    return status;
  }

  /**
   * The archive bytes of the tar shard {@code uri}, decompressed when its name says it is
   * compressed; reading a damaged compressed stream throws an {@link IOException} that names it.
   * The caller closes it.
   */
  public static InputStream tarBytes(String uri, Configuration conf) throws IOException {
    Path path = new Path(uri);
    InputStream raw = path.getFileSystem(conf).open(path, 1 << 16);
    return TarCompression.forShard(raw, uri);
  }

  /** Counts the samples of one tar shard by reading its headers (content is skipped). */
  private static TarShardReader.Walk walkTar(FileStatus status, Configuration conf)
      throws IOException {
    String uri = status.getPath().toString();
    InputStream raw = status.getPath().getFileSystem(conf).open(status.getPath(), 1 << 16);
    try (InputStream in =
        TarCompression.of(uri) == TarCompression.NONE
            ? raw
            : new BufferedInputStream(TarCompression.forShard(raw, uri), 1 << 16)) {
      return TarShardReader.walk(in, uri);
    }
  }
}
