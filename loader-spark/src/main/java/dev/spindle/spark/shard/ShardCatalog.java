package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Lists the shards under an input URI through the Hadoop FileSystem API and builds the {@link
 * Manifest}. Runs on the driver. Accepted layouts: one {@code .tar} file, a tree holding {@code
 * .tar} shards (WebDataset), or a class-per-folder tree {@code ROOT/<class>/<image>}. Files and
 * folders whose names start with {@code _} or {@code .} are ignored.
 */
public final class ShardCatalog {

  /** Counts the samples of tar shards, e.g. in parallel on a cluster. Results in input order. */
  @FunctionalInterface
  public interface TarCounter {
    long[] count(List<String> tarUris) throws IOException;
  }

  private final Configuration conf;
  private final int folderShardFiles;
  private List<InputListing.Skipped> skipped = List.of();

  /**
   * @param folderShardFiles how many files of an image-folder tree make one shard
   */
  public ShardCatalog(Configuration conf, int folderShardFiles) {
    if (folderShardFiles <= 0) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.folderShardFiles: " + folderShardFiles + " (must be > 0)");
    }
    this.conf = conf;
    this.folderShardFiles = folderShardFiles;
  }

  /** What the last {@link #list} passed over under its input (links followed twice, broken). */
  public List<InputListing.Skipped> skipped() {
    return skipped;
  }

  /** Lists and counts the shards under {@code input}. */
  public Manifest list(String input, TarCounter counter) throws IOException {
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
      if (!isTar(status.getPath().getName())) {
        throw new IOException("Input " + input + " is a file but not a .tar shard");
      }
      return tarManifest(rootUri, List.of(status), counter);
    }
    List<FileStatus> tars = new ArrayList<>();
    List<FileStatus> images = new ArrayList<>();
    InputListing.Listing listing = InputListing.list(fs, status.getPath());
    skipped = listing.skipped();
    for (FileStatus file : listing.files()) {
      if (isTar(file.getPath().getName())) {
        tars.add(file);
      } else if (WebDatasetKeys.isImageFile(file.getPath().getName())) {
        images.add(file);
      }
    }
    if (!tars.isEmpty()) {
      tars.sort(Comparator.comparing(f -> f.getPath().toString()));
      return tarManifest(rootUri, tars, counter);
    }
    if (!images.isEmpty()) {
      return folderManifest(status.getPath(), rootUri, images);
    }
    throw new IOException(
        "No shards under "
            + input
            + ": expected .tar shards (WebDataset: KEY.jpg + KEY.cls) or an image folder tree"
            + " ROOT/<class>/<image>.jpg|png");
  }

  private Manifest tarManifest(String rootUri, List<FileStatus> tars, TarCounter counter)
      throws IOException {
    List<String> uris = tars.stream().map(f -> f.getPath().toString()).toList();
    long[] counts = counter.count(uris);
    List<Shard> shards = new ArrayList<>(tars.size());
    for (int i = 0; i < tars.size(); i++) {
      FileStatus f = tars.get(i);
      shards.add(
          new Shard(uris.get(i), ShardFormat.TAR, f.getLen(), f.getModificationTime(), counts[i], List.of()));
    }
    return new Manifest(rootUri, shards, List.of());
  }

  private Manifest folderManifest(Path root, String rootUri, List<FileStatus> images)
      throws IOException {
    TreeMap<String, List<FileStatus>> byClass = new TreeMap<>();
    for (FileStatus image : images) {
      String relative = InputListing.relative(root, image.getPath());
      String[] parts = relative.split("/");
      if (parts.length != 2) {
        throw new IOException(
            String.format(
                "Unknown image folder layout under %s: found %s; expected ROOT/<class>/<image>"
                    + " (one class folder level, images inside it)",
                rootUri, relative));
      }
      byClass.computeIfAbsent(parts[0], c -> new ArrayList<>()).add(image);
    }
    List<String> classNames = new ArrayList<>(byClass.keySet());
    List<Shard> shards = new ArrayList<>();
    List<FolderEntry> run = new ArrayList<>();
    long bytes = 0;
    long mtime = 0;
    for (int label = 0; label < classNames.size(); label++) {
      List<FileStatus> files = byClass.get(classNames.get(label));
      files.sort(Comparator.comparing(f -> f.getPath().getName()));
      for (FileStatus f : files) {
        run.add(new FolderEntry(classNames.get(label) + "/" + f.getPath().getName(), label));
        bytes += f.getLen();
        mtime = Math.max(mtime, f.getModificationTime());
        if (run.size() == folderShardFiles) {
          shards.add(new Shard(rootUri, ShardFormat.IMAGE_FOLDER, bytes, mtime, run.size(), run));
          run = new ArrayList<>();
          bytes = 0;
          mtime = 0;
        }
      }
    }
    if (!run.isEmpty()) {
      shards.add(new Shard(rootUri, ShardFormat.IMAGE_FOLDER, bytes, mtime, run.size(), run));
    }
    return new Manifest(rootUri, shards, classNames);
  }

  /** Counts the samples of one tar shard by reading its headers (content is skipped). */
  public static long countTar(String uri, Configuration conf) throws IOException {
    Path path = new Path(uri);
    try (InputStream in = path.getFileSystem(conf).open(path, 1 << 16)) {
      return TarShardReader.countSamples(in, uri);
    }
  }

  private static boolean isTar(String name) {
    return name.toLowerCase(Locale.ROOT).endsWith(".tar");
  }
}
