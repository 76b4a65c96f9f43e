package dev.spindle.spark.plan;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.shard.Shard;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * One Spark partition's share of a whole-dataset pass ({@code preprocess}, the {@code spindle}
 * DataSource): consecutive whole shards, with the dataset index of each one's first sample.
 * Immutable; shipped to executors.
 *
 * @param partition the partition's number, from 0
 * @param shards its shards, in manifest order
 * @param offsets the dataset index of each shard's first sample
 */
public record ShardGroup(int partition, List<Shard> shards, long[] offsets)
    implements Serializable {

  public ShardGroup {
    shards = List.copyOf(shards);
    offsets = offsets.clone();
    if (offsets.length != shards.size()) {
      throw new IllegalArgumentException(
          "Shard group "
              + partition
              + ": "
              + shards.size()
              + " shards but "
              + offsets.length
              + " offsets");
    }
  }

  @Override
  public long[] offsets() {
    return offsets.clone();
  }

  /** Samples its shards hold, as the manifest counted them. */
  public long samples() {
    return shards.stream().mapToLong(Shard::samples).sum();
  }

  /**
   * The manifest's shards in order, grouped into partitions of at most {@code maxBytes} each (a
   * shard larger than that is a partition of its own): a 1,000-shard input of small shards is
   * 1,000/k tasks, never one, and never a shard split between two.
   */
  public static List<ShardGroup> plan(Manifest manifest, long maxBytes) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException(
          "Invalid partition size: " + maxBytes + " bytes (must be > 0)");
    }
    long[] offsets = manifest.offsets();
    List<ShardGroup> groups = new ArrayList<>();
    List<Shard> group = new ArrayList<>();
    List<Long> groupOffsets = new ArrayList<>();
    long bytes = 0;
    for (int i = 0; i < manifest.shards().size(); i++) {
      Shard shard = manifest.shards().get(i);
      if (!group.isEmpty() && bytes + shard.bytes() > maxBytes) {
        groups.add(of(groups.size(), group, groupOffsets));
        group = new ArrayList<>();
        groupOffsets = new ArrayList<>();
        bytes = 0;
      }
      group.add(shard);
      groupOffsets.add(offsets[i]);
      bytes += shard.bytes();
    }
    if (!group.isEmpty()) {
      groups.add(of(groups.size(), group, groupOffsets));
    }
    return groups;
  }

  private static ShardGroup of(int partition, List<Shard> shards, List<Long> offsets) {
    return new ShardGroup(partition, shards, offsets.stream().mapToLong(Long::longValue).toArray());
  }
}
