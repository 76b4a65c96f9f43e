package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.FolderEntry;
import dev.spindle.spark.shard.FolderTree;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;

/**
 * The manifest of an image folder tree ({@link FolderTree}: torchvision's classes and samples, in
 * its order), cut into shards of {@code folderShardFiles} files. Driver; stateless.
 */
final class FolderManifest {
  private FolderManifest() {}

  static Manifest build(String rootUri, FolderTree tree, int folderShardFiles) {
    List<Shard> shards = new ArrayList<>();
    List<FolderEntry> run = new ArrayList<>();
    long bytes = 0;
    long mtime = 0;
    for (int i = 0; i < tree.images().size(); i++) {
      FileStatus f = tree.images().get(i);
      run.add(new FolderEntry(tree.paths().get(i), tree.labels().get(i)));
      bytes += f.getLen();
      mtime = Math.max(mtime, f.getModificationTime());
      if (run.size() == folderShardFiles) {
        shards.add(new Shard(rootUri, ShardFormat.IMAGE_FOLDER, bytes, mtime, run.size(), run));
        run = new ArrayList<>();
        bytes = 0;
        mtime = 0;
      }
    }
    if (!run.isEmpty()) {
      shards.add(new Shard(rootUri, ShardFormat.IMAGE_FOLDER, bytes, mtime, run.size(), run));
    }
    return new Manifest(rootUri, shards, tree.classNames());
  }
}
