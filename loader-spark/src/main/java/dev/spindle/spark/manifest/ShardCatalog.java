package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.BracePattern;
import dev.spindle.spark.shard.FileCount;
import dev.spindle.spark.shard.FileCounting;
import dev.spindle.spark.shard.FolderImages;
import dev.spindle.spark.shard.InputListing;
import dev.spindle.spark.shard.InputTree;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.PatternInput;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFiles;
import dev.spindle.spark.shard.ShardFormat;
import dev.spindle.spark.shard.ShardRefusedException;
import dev.spindle.spark.shard.SkippedInputs;
import dev.spindle.spark.shard.TarCompression;
import dev.spindle.spark.shard.TarIndexes;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Finds the shards of an input and builds the {@link Manifest}. Runs on the driver. Accepted
 * inputs: a {@code preprocess} output folder (its {@code _manifest.json} lists the shards and their
 * rows: {@link PreprocessedInput}; nothing is listed or counted); one shard file (a tar, plain or
 * compressed as {@link TarCompression} reads it, or a {@code .parquet}); a tree holding tar shards
 * (WebDataset), Parquet files, or an image folder tree {@code ROOT/<class>/…/<image>} read as
 * torchvision's {@code ImageFolder} reads it, listed through the Hadoop FileSystem API ({@link
 * InputTree}: a tree is one of these layouts, or refused naming the files of each kind); or a brace
 * pattern naming shard files ({@link PatternInput}; nothing is listed, and a named file that does
 * not exist is an error). What a tree holds beside its data is listed in {@link #skipped()}. Tar
 * and Parquet shards are counted by a {@link Counter}; a shard that cannot be used at all (missing,
 * a Parquet footer or schema that cannot be used) fails the listing with an error that names it.
 */
public final class ShardCatalog {
  private static final int LISTED_REFUSALS = 10;

  /** Runs a {@link FileCounting} over shard files; results in input order. */
  @FunctionalInterface
  public interface Counter {
    List<FileCount> count(List<String> uris, FileCounting how) throws IOException;

    /** Counts on the calling thread, one file after the other. */
    static Counter onThisThread(Configuration conf) {
      return (uris, how) -> {
        List<FileCount> counts = new ArrayList<>(uris.size());
        for (String uri : uris) {
          counts.add(how.count(uri, conf));
        }
        return counts;
      };
    }
  }

  private final Configuration conf;
  private final int folderShardFiles;
  private final ParquetColumns columns;
  private List<InputListing.Skipped> skipped = List.of();
  private String indexRoot;
  private TarIndexes indexes;
  private String indexStatus;

  /** A catalog that reads Parquet shards' default columns ({@link ParquetColumns#DEFAULT}). */
  public ShardCatalog(Configuration conf, int folderShardFiles) {
    this(conf, folderShardFiles, ParquetColumns.DEFAULT);
  }

  /**
   * @param folderShardFiles how many files of an image-folder tree make one shard
   * @param columns the columns of Parquet shards that hold image and label
   */
  public ShardCatalog(Configuration conf, int folderShardFiles, ParquetColumns columns) {
    if (folderShardFiles <= 0) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.folderShardFiles: " + folderShardFiles + " (must be > 0)");
    }
    this.conf = conf;
    this.folderShardFiles = folderShardFiles;
    this.columns = columns;
  }

  /**
   * What the last {@link #list} passed over under its input, each with its reason: links followed
   * twice or broken, files of no shard's kind, an image folder's files that are no samples ({@link
   * InputTree}).
   */
  public List<InputListing.Skipped> skipped() {
    return skipped;
  }

  /**
   * Checks, before any work, that the input exists or, for a brace pattern, that it is well formed
   * (its files are checked when they are counted).
   */
  public static void requireInput(Configuration conf, String input) throws IOException {
    if (BracePattern.isPattern(input)) {
      BracePattern.parse(input);
      return;
    }
    Path path = new Path(input);
    if (!path.getFileSystem(conf).exists(path)) {
      throw new FileNotFoundException("Input does not exist: " + input);
    }
  }

  /**
   * Where the last {@link #list} wrote its tar shards' member indexes, or null when it wrote none
   * (not asked, or no tar shards).
   */
  public TarIndexes indexes() {
    return indexes;
  }

  /**
   * What the last {@link #list} did about member indexes: for how many tar shards of how many one
   * was written, and why the others got none; null when none was asked for or the input holds no
   * tar shards.
   */
  public String indexStatus() {
    return indexStatus;
  }

  /** Lists and counts the shards of {@code input}. */
  public Manifest list(String input, Counter counter) throws IOException {
    return list(input, counter, null);
  }

  /**
   * Lists and counts the shards of {@code input}; the counting writes each uncompressed tar shard's
   * member index under {@code indexRoot} (null: none).
   */
  public Manifest list(String input, Counter counter, String indexRoot) throws IOException {
    this.indexRoot = indexRoot;
    indexes = null;
    indexStatus = null;
    skipped = List.of();
    if (BracePattern.isPattern(input)) {
      PatternInput pattern = PatternInput.expand(input, conf);
      return fileManifest(pattern.input(), pattern.uris(), pattern.format(), counter);
    }
    Path root = new Path(input);
    FileSystem fs = root.getFileSystem(conf);
    FileStatus status;
    try {
      status = fs.getFileStatus(root);
    } catch (FileNotFoundException e) {
      throw new FileNotFoundException("Input does not exist: " + input);
    }
    String rootUri = status.getPath().toString();
    if (status.isFile()) {
      ShardFormat format = ShardFiles.formatOf(status.getPath().getName());
      if (format != ShardFormat.TAR && format != ShardFormat.PARQUET) {
        throw new IOException(
            "Input "
                + input
                + " is a file but not a shard ("
                + TarCompression.suffixList()
                + " or .parquet)"
                + (rootUri.endsWith(".arrow")
                    ? "; a preprocess output is read as its folder, the one holding "
                        + PreprocessedInput.MANIFEST
                    : ""));
      }
      return fileManifest(rootUri, List.of(rootUri), format, counter);
    }
    Manifest preprocessed = PreprocessedInput.read(fs, status.getPath());
    if (preprocessed != null) {
      return preprocessed;
    }
    InputListing.Listing listing = InputListing.list(fs, status.getPath());
    UncommittedOutput.refuse(input, status.getPath(), listing);
    return treeManifest(input, status.getPath(), rootUri, listing, counter);
  }

  private Manifest treeManifest(
      String input, Path root, String rootUri, InputListing.Listing listing, Counter counter)
      throws IOException {
    InputTree tree = InputTree.of(input, root, listing);
    if (tree == null) {
      skipped = listing.skipped();
      throw new IOException(
          "No shards under "
              + input
              + ": expected tar shards (WebDataset: KEY.jpg + KEY.cls; "
              + TarCompression.suffixList()
              + "), .parquet files (columns "
              + columns
              + "), an image folder tree ROOT/<class>/<image> (torchvision's ImageFolder: "
              + String.join(", ", FolderImages.EXTENSIONS)
              + ") or a preprocess output (its "
              + PreprocessedInput.MANIFEST
              + ")");
    }
    skipped = tree.skipped();
    SkippedInputs.log(input, skipped);
    if (tree.format() == ShardFormat.IMAGE_FOLDER) {
      return FolderManifest.build(rootUri, tree.folder(), folderShardFiles);
    }
    List<String> uris = tree.files().stream().map(f -> f.getPath().toString()).toList();
    return fileManifest(rootUri, uris, tree.format(), counter);
  }

  private Manifest fileManifest(
      String input, List<String> uris, ShardFormat format, Counter counter) throws IOException {
    TarIndexes where =
        indexRoot != null && format == ShardFormat.TAR
            ? new TarIndexes(indexRoot, new Manifest(input, List.of(), List.of()).base())
            : null;
    List<FileCount> counts = counter.count(uris, ShardFiles.counting(format, columns, where));
    List<String> refused = counts.stream().map(FileCount::refused).filter(r -> r != null).toList();
    if (!refused.isEmpty()) {
      throw new ShardRefusedException(
          refused.size()
              + " of "
              + uris.size()
              + " shards of "
              + input
              + " cannot be used: "
              + String.join("; ", refused.subList(0, Math.min(LISTED_REFUSALS, refused.size())))
              + (refused.size() > LISTED_REFUSALS ? "; …" : ""));
    }
    List<Shard> shards = new ArrayList<>(counts.size());
    for (FileCount c : counts) {
      shards.add(
          new Shard(
              c.uri(),
              format,
              c.bytes(),
              c.modificationTime(),
              c.samples(),
              List.of(),
              format == ShardFormat.PARQUET ? columns : null));
    }
    if (where != null) {
      indexed(where, counts);
    }
    return new Manifest(input, shards, List.of());
  }

  /** Records where the counting wrote indexes, and for how many shards. */
  private void indexed(TarIndexes where, List<FileCount> counts) {
    List<String> not = new ArrayList<>();
    for (FileCount c : counts) {
      if (c.notIndexed() != null) {
        not.add(c.uri() + ": " + c.notIndexed());
      }
    }
    indexes = not.size() < counts.size() ? where : null;
    indexStatus =
        "written for "
            + (counts.size() - not.size())
            + " of "
            + counts.size()
            + " tar shards"
            + (not.isEmpty()
                ? ""
                : "; none for "
                    + String.join("; ", not.subList(0, Math.min(LISTED_REFUSALS, not.size())))
                    + (not.size() > LISTED_REFUSALS ? "; …" : ""));
  }
}
