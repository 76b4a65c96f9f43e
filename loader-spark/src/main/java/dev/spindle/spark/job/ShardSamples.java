package dev.spindle.spark.job;

import dev.spindle.spark.shard.Sample;
import dev.spindle.spark.shard.SampleLimits;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;

/**
 * The samples of a partition's shards, in order, each with its dataset index: the pipeline's
 * source. Runs on one I/O pool thread. A damaged tar's damage is one of its samples, with a
 * problem, quarantined downstream; a shard whose storage fails fails the iteration with an error
 * naming it (the task fails and Spark retries it).
 */
final class ShardSamples implements Iterator<ShardSamples.Located> {

  /** A sample with its dataset index. */
  record Located(Sample sample, long index) {
    String id() {
      return SampleId.of(sample.shard(), sample.key(), index);
    }

    long bytes() {
      return sample.image() == null ? 64 : sample.image().length;
    }
  }

  private final List<Shard> shards;
  private final long[] offsets;
  private final Configuration conf;
  private final SampleLimits limits;
  private int current = -1;
  private ShardReader reader;
  private volatile long bytesRead;
  private volatile long samples;

  ShardSamples(List<Shard> shards, long[] offsets, Configuration conf, SampleLimits limits) {
    this.shards = shards;
    this.offsets = offsets;
    this.conf = conf;
    this.limits = limits;
  }

  @Override
  public boolean hasNext() {
    try {
      while (reader == null || !reader.hasNext()) {
        if (!advance()) {
          return false;
        }
      }
      return true;
    } catch (IOException | UncheckedIOException e) {
      throw new UncheckedIOException(
          new IOException("Failed reading shard " + shards.get(current).displayName() + ": " + e.getMessage(), e));
    }
  }

  @Override
  public Located next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Sample s = reader.next();
    bytesRead += s.image() == null ? 0 : s.image().length;
    samples++;
    return new Located(s, offsets[current] + s.position());
  }

  private boolean advance() throws IOException {
    if (reader != null) {
      reader.close();
      reader = null;
    }
    if (current + 1 >= shards.size()) {
      return false;
    }
    current++;
    reader = ShardReader.open(shards.get(current), conf, limits);
    return true;
  }

  /** Closes the open reader; safe to call twice. */
  void close() throws IOException {
    if (reader != null) {
      reader.close();
      reader = null;
    }
  }

  long bytesRead() {
    return bytesRead;
  }

  long samples() {
    return samples;
  }
}
