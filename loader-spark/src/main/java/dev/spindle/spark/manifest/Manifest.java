package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import dev.spindle.spark.shard.StoredImages;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * The shards of a dataset in their canonical order (sorted by path), with per-shard sample counts.
 * A sample's dataset index is {@code offset(shard) + position in shard}; everything downstream
 * (epoch plans, Arrow {@code index} column) is derived from this numbering.
 *
 * @param input the URI that was listed (qualified), or the brace pattern that was expanded (its
 *     folder part qualified)
 * @param shards shards in canonical order
 * @param classNames class names by label, for class-per-folder trees and {@code preprocess} outputs
 *     that recorded them; empty when labels come from the data itself (tar {@code .cls} entries)
 * @param stored for a {@code preprocess} output ({@link PreprocessedInput}), what its rows hold:
 *     every shard is then one of its part files ({@link ShardFormat#decoded()}); null for encoded
 *     inputs
 */
public record Manifest(
    String input, List<Shard> shards, List<String> classNames, StoredImages stored)
    implements Serializable {

  public Manifest {
    shards = List.copyOf(shards);
    classNames = List.copyOf(classNames);
    for (Shard s : shards) {
      if (s.format().decoded() != (stored != null)) {
        throw new IllegalArgumentException(
            "Invalid manifest of "
                + input
                + ": "
                + s.uri()
                + " is a "
                + s.format()
                + " shard, but the manifest "
                + (stored == null ? "records no stored images" : "is a preprocess output's"));
      }
    }
  }

  /** The manifest of an encoded input (no stored images). */
  public Manifest(String input, List<Shard> shards, List<String> classNames) {
    this(input, shards, classNames, null);
  }

  /** Total samples over all shards. */
  public long totalSamples() {
    long total = 0;
    for (Shard s : shards) {
      total += s.samples();
    }
    return total;
  }

  /** Total bytes over all shards. */
  public long totalBytes() {
    long total = 0;
    for (Shard s : shards) {
      total += s.bytes();
    }
    return total;
  }

  /**
   * Where shard paths are relative to: the input itself (a folder, or a single shard file), or for
   * a brace pattern the folder before its first brace, with a trailing '/'.
   */
  public String base() {
    int brace = input.indexOf('{');
    return brace < 0 ? input : input.substring(0, input.lastIndexOf('/', brace) + 1);
  }

  /**
   * {@code uri}'s path below {@link #base()} ({@code ""} for the base itself), or null when it is
   * not below it.
   */
  public String relative(String uri) {
    String base = base();
    if (uri.equals(base)) {
      return "";
    }
    String prefix = base.endsWith("/") ? base : base + "/";
    return uri.startsWith(prefix) && uri.length() > prefix.length()
        ? uri.substring(prefix.length())
        : null;
  }

  /** The URI of a path below {@link #base()}: the inverse of {@link #relative}. */
  public String resolve(String relativePath) {
    String base = base();
    if (relativePath.isEmpty()) {
      return base;
    }
    return base.endsWith("/") ? base + relativePath : base + "/" + relativePath;
  }

  /**
   * The same shards, found under another input: each shard below {@link #base()} moves below {@code
   * other}'s base (a copied or moved data set); a shard outside it keeps its URI.
   */
  public Manifest rebased(String otherInput) {
    Manifest other = new Manifest(otherInput, List.of(), classNames, stored);
    List<Shard> moved = new ArrayList<>(shards.size());
    for (Shard s : shards) {
      String rel = relative(s.uri());
      moved.add(
          new Shard(
              rel == null ? s.uri() : other.resolve(rel),
              s.format(),
              s.bytes(),
              s.modificationTime(),
              s.samples(),
              s.entries(),
              s.columns(),
              s.checks()));
    }
    return new Manifest(otherInput, moved, classNames, stored);
  }

  /** Dataset index of the first sample of every shard; one more entry holds the total. */
  public long[] offsets() {
    long[] offsets = new long[shards.size() + 1];
    for (int i = 0; i < shards.size(); i++) {
      offsets[i + 1] = offsets[i] + shards.get(i).samples();
    }
    return offsets;
  }
}
