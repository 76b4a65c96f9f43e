package dev.spindle.spark.feed;

import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.plan.ReadPlan;
import dev.spindle.spark.shard.Sample;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardReader;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.TaskContext;
import org.apache.spark.broadcast.Broadcast;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor side of {@code feed}: produces the batches of its slices in plan order and hands
 * each to the consumer. Per group of {@code spark.spindle.feed.readBatches} batches it reads only
 * the planned samples (skipping the others at the index level, see
 * {@link ShardReader#open(Shard, org.apache.hadoop.conf.Configuration, int, int[])}), then
 * decodes each batch on the JVM's shared decode pool into one reusable Arrow batch. One instance
 * per epoch, shipped to executors; {@link #run} is called on a Spark task thread.
 */
final class FeedTask implements Serializable {
  private static final Logger LOG = LoggerFactory.getLogger(FeedTask.class);

  private final String runId;
  private final Broadcast<FeedInputs> inputs;
  private final FeedSettings settings;
  private final ShippedConf conf;

  FeedTask(String runId, Broadcast<FeedInputs> inputs, FeedSettings settings, ShippedConf conf) {
    this.runId = runId;
    this.inputs = inputs;
    this.settings = settings;
    this.conf = conf;
  }

  TaskOutcome run(List<FeedSlice> slices) throws IOException, InterruptedException {
    FeedInputs in = inputs.value();
    TaskContext ctx = TaskContext.get();
    String owner = "feed-p" + (ctx == null ? 0 : ctx.partitionId())
        + "-a" + (ctx == null ? 0 : ctx.taskAttemptId());
    ImageTransform transform = settings.transform();
    int batchSize = in.plan().spec().batchSize();
    try (BufferAllocator allocator = ExecutorAllocator.child(owner, settings.arrowLimit());
        ImageBatch batch = new ImageBatch(allocator, transform.height(), transform.width(),
            transform.channels(), batchSize)) {
      FeedRun run = new FeedRun(runId, settings, transform, batch,
          FeederConsumer.forTask(new VerifyingConsumer(in.plan())));
      for (FeedSlice slice : slices) {
        runSlice(run, in, slice);
      }
      return run.outcome();
    }
  }

  private void runSlice(FeedRun run, FeedInputs in, FeedSlice slice)
      throws IOException, InterruptedException {
    RankPlan rank = in.plan().rank(slice.rank());
    int batchSize = rank.batchSize();
    for (int g = slice.fromBatch(); g < slice.toBatch(); g += settings.readBatches()) {
      int end = Math.min(slice.toBatch(), g + settings.readBatches());
      Sample[] slots = read(run, in, rank.readPlan(in.offsets(), g, end));
      for (int k = g; k < end; k++) {
        run.produce(rank, k, slots, (k - g) * batchSize);
      }
    }
  }

  /** The encoded samples of one read plan, by output slot; repeats share one sample. */
  private Sample[] read(FeedRun run, FeedInputs in, ReadPlan plan) throws IOException {
    Sample[] slots = new Sample[plan.outputSize()];
    for (ReadPlan.ShardRead r : plan.shards()) {
      readShard(run, in.manifest().shards().get(r.shard()), r, slots);
    }
    int[] repeats = plan.repeatSlots();
    int[] sources = plan.repeatSources();
    for (int i = 0; i < repeats.length; i++) {
      slots[repeats[i]] = slots[sources[i]];
    }
    return slots;
  }

  private void readShard(FeedRun run, Shard shard, ReadPlan.ShardRead r, Sample[] slots)
      throws IOException {
    int[] positions = r.positions();
    int i = 0;
    try (ShardReader reader =
        ShardReader.open(shard, conf.get(), settings.maxSampleBytes(), positions)) {
      while (reader.hasNext()) {
        Sample s = reader.next();
        for (; i < positions.length && positions[i] < s.position(); i++) {
          slots[r.slots()[i]] = missing(shard, positions[i], null);
        }
        if (i < positions.length && positions[i] == s.position()) {
          slots[r.slots()[i++]] = s;
          run.countRead(s);
        }
      }
      for (; i < positions.length; i++) {
        slots[r.slots()[i]] = missing(shard, positions[i], reader.damage());
      }
    } catch (IOException | RuntimeException e) {
      LOG.error("Failed reading shard {}: {}", shard.displayName(), e.toString());
      throw new IOException(
          "Failed reading shard " + shard.displayName() + ": " + e.getMessage(), e);
    }
  }

  /** A planned sample the shard did not yield: it is quarantined, not silently dropped. */
  private static Sample missing(Shard shard, int position, String damage) {
    String reason = damage != null
        ? "shard damaged before this sample: " + damage
        : "the shard ended before sample " + position + " (the manifest counted "
            + shard.samples() + "); did it change since the manifest was written?";
    return new Sample(shard.uri(), "#" + position, position, null, null, null, reason);
  }
}
