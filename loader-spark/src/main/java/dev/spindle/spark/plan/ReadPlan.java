package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a reader must read to produce one slice of a plan (a rank's batches, or a partition's run of
 * them), decoding nothing else: per shard, the sorted positions of the samples to read, and the
 * output slot each lands in. A sample that occurs more than once in the slice (padding) is read
 * once; its later slots are listed as repeats, to be filled by copying the first.
 *
 * <p>Immutable and serializable; arrays it returns are owned by the plan and must not be modified.
 * A reader walks each shard from start to end, skips every sample whose position is not the next
 * one listed, and hands the decoded sample to its slot.
 */
public final class ReadPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * The reads from one shard.
   *
   * @param shard the shard's index in the manifest
   * @param positions positions within the shard, strictly increasing
   * @param slots {@code slots[i]} is the output slot of the sample at {@code positions[i]}
   */
  public record ShardRead(int shard, int[] positions, int[] slots) implements Serializable {}

  private final List<ShardRead> shards;
  private final int outputSize;
  private final int[] repeatSlots;
  private final int[] repeatSources;

  private ReadPlan(List<ShardRead> shards, int outputSize, int[] repeatSlots, int[] repeatSources) {
    this.shards = List.copyOf(shards);
    this.outputSize = outputSize;
    this.repeatSlots = repeatSlots;
    this.repeatSources = repeatSources;
  }

  /**
   * The read plan of {@code sequence[from, from + length)}; output slot {@code i} is {@code
   * sequence[from + i]}.
   *
   * @param offsets {@code Manifest.offsets()}
   */
  public static ReadPlan of(long[] offsets, long[] sequence, int from, int length) {
    long total = offsets[offsets.length - 1];
    long[] keys = new long[length];
    for (int i = 0; i < length; i++) {
      long index = sequence[from + i];
      if (index < 0 || index >= total) {
        throw new IllegalArgumentException(
            "Invalid sample index " + index + " (the manifest has " + total + " samples)");
      }
      keys[i] = index << 32 | i;
    }
    Arrays.sort(keys);
    return fromSortedKeys(offsets, keys);
  }

  private static ReadPlan fromSortedKeys(long[] offsets, long[] keys) {
    List<ShardRead> reads = new ArrayList<>();
    int[] positions = new int[keys.length];
    int[] slots = new int[keys.length];
    int[] repeatSlots = new int[keys.length];
    int[] repeatSources = new int[keys.length];
    int unique = 0;
    int repeats = 0;
    int shard = 0;
    int shardStart = 0;
    long previous = -1;
    for (long key : keys) {
      long index = key >>> 32;
      int slot = (int) key;
      if (index == previous) {
        repeatSlots[repeats] = slot;
        repeatSources[repeats++] = slots[unique - 1];
        continue;
      }
      previous = index;
      if (index >= offsets[shard + 1]) {
        addShard(reads, shard, positions, slots, shardStart, unique);
        while (index >= offsets[shard + 1]) {
          shard++;
        }
        shardStart = unique;
      }
      positions[unique] = (int) (index - offsets[shard]);
      slots[unique++] = slot;
    }
    addShard(reads, shard, positions, slots, shardStart, unique);
    return new ReadPlan(
        reads,
        keys.length,
        Arrays.copyOf(repeatSlots, repeats),
        Arrays.copyOf(repeatSources, repeats));
  }

  private static void addShard(
      List<ShardRead> reads, int shard, int[] positions, int[] slots, int from, int to) {
    if (to > from) {
      reads.add(
          new ShardRead(
              shard, Arrays.copyOfRange(positions, from, to), Arrays.copyOfRange(slots, from, to)));
    }
  }

  /** The shards to read, in manifest order. */
  public List<ShardRead> shards() {
    return shards;
  }

  /** Slots in the output: the slice's length. */
  public int outputSize() {
    return outputSize;
  }

  /** Samples to decode: output slots minus repeats. */
  public int samplesToRead() {
    return outputSize - repeatSlots.length;
  }

  /** Output slots filled by copying another slot, in increasing order of their source index. */
  public int[] repeatSlots() {
    return repeatSlots;
  }

  /** {@code repeatSources()[i]} is the slot whose sample {@code repeatSlots()[i]} copies. */
  public int[] repeatSources() {
    return repeatSources;
  }
}
