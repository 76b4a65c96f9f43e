package dev.spindle.spark.shard;

import java.io.Serializable;
import java.util.List;

/**
 * One unit of input that a single reader walks from start to end: a tar file, a Parquet file, or a
 * run of files of an image folder tree. Immutable; safe to share between threads and to ship to
 * executors.
 *
 * @param uri the tar or Parquet file, or the folder tree's root, as a Hadoop FileSystem URI
 * @param format how the samples are stored
 * @param bytes total size on storage
 * @param modificationTime the newest modification time of its files, ms since the epoch
 * @param samples how many samples it holds (counted once, when the manifest was built)
 * @param entries for {@link ShardFormat#IMAGE_FOLDER}, its files in order; empty for other shards
 * @param columns for {@link ShardFormat#PARQUET}, the columns that hold image and label; null for
 *     other shards
 * @param checks for a {@code preprocess} output's part file, what its manifest records to check it
 *     against (checksums, stored indices); null for other shards and for a manifest written before
 *     those were recorded
 */
public record Shard(
    String uri,
    ShardFormat format,
    long bytes,
    long modificationTime,
    long samples,
    List<FolderEntry> entries,
    ParquetColumns columns,
    PartChecks checks)
    implements Serializable {

  public Shard {
    entries = List.copyOf(entries);
    if (samples < 0) {
      throw new IllegalArgumentException("Invalid sample count for " + uri + ": " + samples);
    }
    if (checks != null && !format.decoded()) {
      throw new IllegalArgumentException(
          "Invalid shard " + uri + ": a " + format + " has no checks");
    }
    if ((format == ShardFormat.PARQUET) != (columns != null)) {
      throw new IllegalArgumentException(
          "Invalid shard "
              + uri
              + ": a "
              + format
              + " shard "
              + (columns == null ? "needs" : "has no")
              + " Parquet columns");
    }
  }

  /** A shard without part checks (any but a checked part file of a preprocess output). */
  public Shard(
      String uri,
      ShardFormat format,
      long bytes,
      long modificationTime,
      long samples,
      List<FolderEntry> entries,
      ParquetColumns columns) {
    this(uri, format, bytes, modificationTime, samples, entries, columns, null);
  }

  /** A tar or image-folder shard (no Parquet columns). */
  public Shard(
      String uri,
      ShardFormat format,
      long bytes,
      long modificationTime,
      long samples,
      List<FolderEntry> entries) {
    this(uri, format, bytes, modificationTime, samples, entries, null, null);
  }

  /** A name for messages: the file's path, or the folder root with the first file of the run. */
  public String displayName() {
    return format != ShardFormat.IMAGE_FOLDER || entries.isEmpty()
        ? uri
        : uri + " [" + entries.get(0).path() + " … " + entries.size() + " files]";
  }
}
