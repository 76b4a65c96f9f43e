package dev.spindle.spark.sql;

import dev.spindle.spark.plan.ReadPlan;
import dev.spindle.spark.samples.ShardSamples;
import dev.spindle.spark.shard.Sample;
import dev.spindle.spark.shard.SampleLimits;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;

/**
 * The samples of a {@link MixInputPartition} in plan order: per chunk of {@value #CHUNK} planned
 * positions, only the planned samples of each shard are read ({@link ReadPlan}: each shard opened
 * once per chunk, at the planned positions), then handed out in plan order; a sample planned twice
 * (a source repeated by the epoch's rule) is read once and handed out at both places. A planned
 * sample its shard does not yield becomes a sample with a problem ({@link Sample#unread}),
 * quarantined downstream. A storage error fails the task naming the shard. Pulled by the path's
 * reading thread only; the counters may be read by any thread.
 */
final class MixedSamples implements PartSamples {
  /** Planned positions read at once: bounds the samples held before the path takes them. */
  static final int CHUNK = 1024;

  private final MixInputPartition part;
  private final Configuration conf;
  private final SampleLimits limits;
  private final long[] offsets;
  private final long[] indices; // the partition's planned catalog indices, in plan order
  private Sample[] chunk;
  private int chunkStart;
  private int next;
  private volatile long bytesRead;
  private volatile long samples;

  MixedSamples(MixInputPartition part, Configuration conf, SampleLimits limits) {
    this.part = part;
    this.conf = conf;
    this.limits = limits;
    this.offsets = part.catalog().offsets();
    this.indices = part.plan().rank(0).indices(part.from(), part.to());
  }

  @Override
  public boolean hasNext() {
    if (chunk != null && next < chunk.length) {
      return true;
    }
    int start = chunk == null ? 0 : chunkStart + chunk.length;
    if (start >= indices.length) {
      return false;
    }
    chunkStart = start;
    chunk = read(ReadPlan.of(offsets, indices, start, Math.min(CHUNK, indices.length - start)));
    next = 0;
    return true;
  }

  @Override
  public ShardSamples.Located next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Sample s = chunk[next];
    chunk[next] = null; // handed on: the chunk does not keep it alive beside the next chunk read
    long index = indices[chunkStart + next++];
    bytesRead += s.image() == null ? 0 : s.image().length;
    samples++;
    return new ShardSamples.Located(s, index);
  }

  private Sample[] read(ReadPlan plan) {
    Sample[] out = new Sample[plan.outputSize()];
    for (ReadPlan.ShardRead r : plan.shards()) {
      Shard shard = part.catalog().shards().get(r.shard());
      try (ShardReader reader = ShardReader.open(shard, conf, limits, r.positions())) {
        readShard(shard, r, reader, out);
      } catch (IOException | RuntimeException e) {
        throw new UncheckedIOException(
            new IOException(
                "Failed reading shard " + shard.displayName() + ": " + e.getMessage(), e));
      }
    }
    int[] repeats = plan.repeatSlots();
    int[] sources = plan.repeatSources();
    for (int i = 0; i < repeats.length; i++) {
      out[repeats[i]] = out[sources[i]];
    }
    return out;
  }

  private static void readShard(
      Shard shard, ReadPlan.ShardRead r, ShardReader reader, Sample[] out) {
    int[] positions = r.positions();
    int i = 0;
    while (reader.hasNext() && i < positions.length) {
      Sample s = reader.next();
      for (; i < positions.length && positions[i] < s.position(); i++) {
        out[r.slots()[i]] = Sample.unread(shard, positions[i], null);
      }
      if (i < positions.length && positions[i] == s.position()) {
        out[r.slots()[i++]] = s;
      }
    }
    for (; i < positions.length; i++) {
      out[r.slots()[i]] = Sample.unread(shard, positions[i], reader.damage());
    }
  }

  @Override
  public long bytesRead() {
    return bytesRead;
  }

  @Override
  public long samples() {
    return samples;
  }

  /** Nothing stays open between chunks: each shard reader is closed once its chunk is read. */
  @Override
  public void close() {
    chunk = null;
  }
}
