package dev.spindle.spark.shard;

import java.io.Serializable;
import java.util.List;

/**
 * The shards of a dataset in their canonical order (sorted by path), with per-shard sample counts.
 * A sample's dataset index is {@code offset(shard) + position in shard}; everything downstream
 * (epoch plans, Arrow {@code index} column) is derived from this numbering.
 *
 * @param input the URI that was listed
 * @param shards shards in canonical order
 * @param classNames class names by label, for class-per-folder trees; empty when labels come from
 *     the data itself (tar {@code .cls} entries)
 */
public record Manifest(String input, List<Shard> shards, List<String> classNames)
    implements Serializable {

  public Manifest {
    shards = List.copyOf(shards);
    classNames = List.copyOf(classNames);
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

  /** Dataset index of the first sample of every shard; one more entry holds the total. */
  public long[] offsets() {
    long[] offsets = new long[shards.size() + 1];
    for (int i = 0; i < shards.size(); i++) {
      offsets[i + 1] = offsets[i] + shards.get(i).samples();
    }
    return offsets;
  }
}
