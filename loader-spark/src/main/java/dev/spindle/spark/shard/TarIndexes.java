package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * Where the member indexes ({@link TarIndex}) of a manifest's tar shards live: one file per shard,
 * {@code ROOT/<the shard's path below BASE>.idx} ({@code ROOT/<its file name>.idx} for a shard that
 * is the input itself). Beside the manifest cache: {@code DIR/_spindle_index/} for {@code
 * DIR/_spindle_manifest.json}, {@code FILE.index/} for {@code --manifest FILE}. Immutable; shipped
 * to the counting tasks, which write the files, and to the tasks that read shards.
 *
 * <p>A mixture's catalog (several inputs laid end to end) chains the inputs' locations: a shard is
 * looked up in the first whose base holds it ({@link #chain}).
 *
 * @param root the folder of the index files (a Hadoop URI)
 * @param base the manifest's base ({@code Manifest.base()}): shard paths below it name the files
 * @param next the next input's locations, for a mixture's catalog; null for one input
 */
public record TarIndexes(String root, String base, TarIndexes next) implements Serializable {

  /** The locations of one input's indexes. */
  public TarIndexes(String root, String base) {
    this(root, base, null);
  }

  /** The inputs' locations chained, nulls (inputs without tar shards) left out; null if none. */
  public static TarIndexes chain(java.util.List<TarIndexes> inputs) {
    TarIndexes chained = null;
    for (int i = inputs.size() - 1; i >= 0; i--) {
      TarIndexes t = inputs.get(i);
      if (t != null) {
        chained = new TarIndexes(t.root(), t.base(), chained);
      }
    }
    return chained;
  }

  /** The link of the chain whose base holds {@code uri}, or this one when none does. */
  public TarIndexes covering(String uri) {
    for (TarIndexes t = this; t != null; t = t.next) {
      if (t.ownFileOf(uri) != null) {
        return t;
      }
    }
    return this;
  }

  /** The index file of the shard {@code uri}, or null for a shard outside every base. */
  public String fileOf(String uri) {
    String own = ownFileOf(uri);
    return own != null || next == null ? own : next.fileOf(uri);
  }

  private String ownFileOf(String uri) {
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
