package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Finds the shards of an input and builds the {@link Manifest}. Runs on the driver. Accepted
 * inputs: a {@code preprocess} output folder (its {@code _manifest.json} lists the shards and their
 * rows: {@link PreprocessedInput}; nothing is listed or counted); one shard file ({@code .tar},
 * {@code .tar.gz}, {@code .tgz}, {@code .parquet}); a tree holding tar shards (WebDataset) or
 * Parquet files, listed through the Hadoop FileSystem API; a class-per-folder tree {@code
 * ROOT/<class>/<image>}; or a brace pattern naming shard files ({@link PatternInput}; nothing is
 * listed, and a named file that does not exist is an error). When a tree holds tar shards, its
 * other files are ignored; without tars, so are the images beside Parquet files; tar and Parquet
 * shards together are refused. Files and folders whose names start with {@code _} or {@code .} are
 * ignored. Tar and Parquet shards are counted by a {@link Counter}; a shard that cannot be used at
 * all (missing, a Parquet footer or schema that cannot be used) fails the listing with an error
 * that names it.
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

  /** What the last {@link #list} passed over under its input (links followed twice, broken). */
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

  /** Lists and counts the shards of {@code input}. */
  public Manifest list(String input, Counter counter) throws IOException {
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
                + " is a file but not a shard (.tar, .tar.gz,"
                + " .tgz or .parquet)"
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
    skipped = listing.skipped();
    return treeManifest(input, status.getPath(), rootUri, listing.files(), counter);
  }

  private Manifest treeManifest(
      String input, Path root, String rootUri, List<FileStatus> files, Counter counter)
      throws IOException {
    Map<ShardFormat, List<FileStatus>> byFormat = new EnumMap<>(ShardFormat.class);
    for (FileStatus file : files) {
      ShardFormat format = ShardFiles.formatOf(file.getPath().getName());
      if (format != null) {
        byFormat.computeIfAbsent(format, f -> new ArrayList<>()).add(file);
      }
    }
    List<FileStatus> tars = byFormat.getOrDefault(ShardFormat.TAR, List.of());
    List<FileStatus> parquets = byFormat.getOrDefault(ShardFormat.PARQUET, List.of());
    if (!tars.isEmpty() && !parquets.isEmpty()) {
      throw new IOException(
          "Input "
              + input
              + " holds both tar shards ("
              + tars.get(0).getPath()
              + ", …) and Parquet shards ("
              + parquets.get(0).getPath()
              + ", …); a data set's shards"
              + " are of one kind: point the input at one of them");
    }
    if (!tars.isEmpty() || !parquets.isEmpty()) {
      ShardFormat format = tars.isEmpty() ? ShardFormat.PARQUET : ShardFormat.TAR;
      List<String> uris =
          (tars.isEmpty() ? parquets : tars)
              .stream().map(f -> f.getPath().toString()).sorted().toList();
      return fileManifest(rootUri, uris, format, counter);
    }
    if (byFormat.containsKey(ShardFormat.IMAGE_FOLDER)) {
      return FolderManifest.build(
          root, rootUri, byFormat.get(ShardFormat.IMAGE_FOLDER), folderShardFiles);
    }
    throw new IOException(
        "No shards under "
            + input
            + ": expected .tar shards (WebDataset:"
            + " KEY.jpg + KEY.cls; also .tar.gz, .tgz), .parquet files (columns "
            + columns.image()
            + ", "
            + columns.label()
            + "), an image folder tree"
            + " ROOT/<class>/<image>.jpg|png or a preprocess output (its "
            + PreprocessedInput.MANIFEST
            + ")");
  }

  private Manifest fileManifest(
      String input, List<String> uris, ShardFormat format, Counter counter) throws IOException {
    List<FileCount> counts = counter.count(uris, ShardFiles.counting(format, columns));
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
    return new Manifest(input, shards, List.of());
  }
}
