package dev.spindle.spark.shard;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * The manifest of a class-per-folder image tree {@code ROOT/<class>/<image>}: classes in sorted
 * order (a class's label is its index), files sorted by name within a class, cut into shards of
 * {@code folderShardFiles} files. Driver; stateless.
 */
final class FolderManifest {
  private FolderManifest() {}

  static Manifest build(Path root, String rootUri, List<FileStatus> images, int folderShardFiles)
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
}
