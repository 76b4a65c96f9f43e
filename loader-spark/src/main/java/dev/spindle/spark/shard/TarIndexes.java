package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * Where the member indexes ({@link TarIndex}) of a manifest's tar shards live: one file per shard,
 * {@code ROOT/<the shard's path below BASE>.idx} ({@code ROOT/<its file name>.idx} for a shard that
 * is the input itself). Beside the manifest cache: {@code DIR/_spindle_index/} for {@code
 * DIR/_spindle_manifest.json}, {@code FILE.index/} for {@code --manifest FILE}. Immutable; shipped
 * to the counting tasks, which write the files, and to the tasks that read shards.
 *
 * @param root the folder of the index files (a Hadoop URI)
 * @param base the manifest's base ({@code Manifest.base()}): shard paths below it name the files
 */
public record TarIndexes(String root, String base) implements Serializable {

  /** The index file of the shard {@code uri}, or null for a shard outside {@link #base}. */
  public String fileOf(String uri) {
    String relative;
    if (uri.equals(base)) {
      relative = uri.substring(uri.lastIndexOf('/') + 1);
    } else {
      String prefix = base.endsWith("/") ? base : base + "/";
      if (!uri.startsWith(prefix) || uri.length() == prefix.length()) {
        return null;
      }
      relative = uri.substring(prefix.length());
    }
    return (root.endsWith("/") ? root : root + "/") + relative + ".idx";
  }
}
