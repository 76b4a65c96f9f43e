package dev.spindle.spark.samples;

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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The planned samples of a partition's shards, in order, each with its dataset index: the
 * pipeline's source. Runs on one I/O pool thread; the counters may be read by any thread. A shard
 * yields exactly the number of samples the manifest planned for it: a planned sample it does not
 * yield (the shard changed since it was counted: it is shorter now, or damaged before that sample)
 * becomes a sample with a problem ({@link Sample#unread}), quarantined downstream like any bad
 * sample; samples past the planned count are not read. A shard whose storage fails fails the
 * iteration with an error naming it (the task fails and Spark retries it). The source of the sample
 * path ({@code dev.spindle.spark.samples}) for {@code preprocess} and the {@code spindle}
 * DataSource. As a pipeline's source it is closed by the pipeline, on its reading thread, when it
 * ends or the pipeline stops.
 */
public final class ShardSamples implements Iterator<ShardSamples.Located>, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShardSamples.class);

  /**
   * A sample with its dataset index: {@code offset(shard) + position}, or for a row of a preprocess
   * output the index it was stored with (its index in the dataset preprocess read), so that reading
   * or converting such an output keeps each row's index.
   */
  public record Located(Sample sample, long index) implements IndexedSample {
    @Override
    public String id() {
      return SampleId.of(sample.shard(), sample.key(), index);
    }

    @Override
    public long bytes() {
      return (sample.image() == null ? 64 : sample.image().length) + sample.fieldBytes();
    }
  }

  private final List<Shard> shards;
  private final long[] offsets;
  private final Configuration conf;
  private final SampleLimits limits;
  private int current = -1;
  private ShardReader reader;
  private long position; // the next planned position in the current shard
  private volatile long bytesRead;
  private volatile long samples;

  /**
   * @param shards the shards to read, in order
   * @param offsets the dataset index of each shard's first sample
   */
  public ShardSamples(List<Shard> shards, long[] offsets, Configuration conf, SampleLimits limits) {
    this.shards = shards;
    this.offsets = offsets;
    this.conf = conf;
    this.limits = limits;
  }

  @Override
  public boolean hasNext() {
    try {
      while (reader == null || position == shards.get(current).samples()) {
        if (!advance()) {
          return false;
        }
      }
      return true;
    } catch (IOException | UncheckedIOException e) {
      throw failed(e);
    }
  }

  @Override
  public Located next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Shard shard = shards.get(current);
    Sample s;
    try {
      s = reader.hasNext() ? reader.next() : Sample.unread(shard, position, reader.damage());
    } catch (UncheckedIOException e) {
      throw failed(e);
    }
    position++;
    bytesRead += s.image() == null ? 0 : s.image().length;
    samples++;
    return new Located(
        s, s.stored() != null ? s.stored().index() : offsets[current] + s.position());
  }

  private boolean advance() throws IOException {
    if (reader != null) {
      if (reader.hasNext()) {
        LOG.warn(
            "Shard {} holds more samples than the {} counted; it changed since it was"
                + " counted, and the rest of it is not read",
            shards.get(current).displayName(),
            shards.get(current).samples());
      }
      reader.close();
      reader = null;
    }
    if (current + 1 >= shards.size()) {
      return false;
    }
    current++;
    position = 0;
    reader = ShardReader.open(shards.get(current), conf, limits);
    return true;
  }

  private UncheckedIOException failed(Exception e) {
    return new UncheckedIOException(
        new IOException(
            "Failed reading shard " + shards.get(current).displayName() + ": " + e.getMessage(),
            e));
  }

  /** Closes the open reader; safe to call twice. */
  @Override
  public synchronized void close() throws IOException {
    if (reader != null) {
      reader.close();
      reader = null;
    }
  }

  /** Encoded image bytes read so far. */
  public long bytesRead() {
    return bytesRead;
  }

  /** Samples handed out: delivered or quarantined, each planned sample once. */
  public long samples() {
    return samples;
  }
}
