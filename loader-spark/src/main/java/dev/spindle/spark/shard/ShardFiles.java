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
 *   <li>{@code .tar}, {@code .tar.gz}, {@code .tgz}: a WebDataset tar, counted by walking its
 *       headers (a compressed one is decompressed on the way);
 *   <li>{@code .parquet}: a Parquet file, counted from its footer's row groups alone, after its
 *       schema was checked for the image and label columns;
 *   <li>torchvision's {@code ImageFolder} extensions ({@code .jpg}, {@code .png}, {@code .webp},
 *       ...: {@code WebDatasetKeys.IMAGE_EXTENSIONS}): a file of an image folder tree.
 * </ul>
 */
public final class ShardFiles {
  private ShardFiles() {}

  /** The kind of shard a file of this name is ({@code IMAGE_FOLDER} for an image), or null. */
  public static ShardFormat formatOf(String fileName) {
    String lower = fileName.toLowerCase(Locale.ROOT);
    if (lower.endsWith(".tar") || GzipStream.isGzipTar(lower)) {
      return ShardFormat.TAR;
    }
    if (lower.endsWith(".parquet")) {
      return ShardFormat.PARQUET;
    }
    return WebDatasetKeys.isImageFile(fileName) ? ShardFormat.IMAGE_FOLDER : null;
  }

  /**
   * Counting of tar or Parquet shard files: each file's size, modification time and samples, or why
   * it is refused.
   */
  public static FileCounting counting(ShardFormat format, ParquetColumns columns) {
    if (format == ShardFormat.IMAGE_FOLDER) {
      throw new IllegalArgumentException("Image folder shards are not counted file by file");
    }
    return (uri, conf) -> {
      try {
        FileStatus status = status(uri, conf);
        long samples =
            format == ShardFormat.TAR
                ? countTar(status, conf)
                : ParquetFiles.countRows(status, conf, columns);
        return new FileCount(uri, status.getLen(), status.getModificationTime(), samples, null);
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

  /** Counts the samples of one tar shard by reading its headers (content is skipped). */
  private static long countTar(FileStatus status, Configuration conf) throws IOException {
    String uri = status.getPath().toString();
    InputStream raw = status.getPath().getFileSystem(conf).open(status.getPath(), 1 << 16);
    try (InputStream in =
        GzipStream.isGzipTar(uri)
            ? new BufferedInputStream(GzipStream.forShard(raw, uri), 1 << 16)
            : raw) {
      return TarShardReader.countSamples(in, uri);
    }
  }
}
