package dev.spindle.spark.serve;

import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.pipeline.PipelineFailure;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.progress.TaskProgress;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.PathSpec;
import dev.spindle.spark.samples.SamplePath;
import dev.spindle.spark.shard.HadoopConf;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.TaskContext;
import org.apache.spark.broadcast.Broadcast;

/**
 * The executor side of {@code feed}: the shared sample path ({@link SamplePath}) over the task's
 * planned rows, with a consumer (the verifier, a feeder or the trainer bridge) as its sink:
 *
 * <pre>
 *  source "read" (I/O pool: RowSource, planned samples only)
 *       each batch's first row claims the batch it is decoded into (BatchTargets: a slot of the
 *       rank's feeder ring, waiting while it is full; else a pooled Arrow batch)
 *    ─► pipe "decode" (the executor-wide CPU pool, SampleSettings.decodesInFlight of this task's
 *       rows at once, input order): each image decoded straight into its row of that batch; a bad
 *       sample stays in place as a row with a problem; a preprocess output's stored pixels are
 *       checked and copied into the row (that path's one host copy)
 *    ─► aggregate "batch" (batchSize rows: exactly one planned batch)
 *    ─► task thread: FeedRun stands in for bad rows, sets labels, keys, indices and weights,
 *       delivers (a slot is published: no copy anywhere after the decode)
 * </pre>
 *
 * Progress counts each row as it leaves the decode stage (the path's statistics thread reports it),
 * not only once its whole batch was delivered.
 *
 * <p>One instance per epoch, shipped to executors; {@link #run} is called on a Spark task thread.
 */
public final class FeedTask implements Serializable {
  private final String runId;
  final Inputs inputs;
  private final FeedSettings settings;
  private final HadoopConf conf;
  private final ProgressCounters progress;

  /** Where a task finds its epoch's plan and manifest: a broadcast, or one it computed. */
  public interface Inputs extends Serializable {
    FeedInputs value();
  }

  public FeedTask(
      String runId, Broadcast<FeedInputs> inputs, FeedSettings settings, HadoopConf conf) {
    this(runId, inputs, settings, conf, null);
  }

  public FeedTask(
      String runId,
      Broadcast<FeedInputs> inputs,
      FeedSettings settings,
      HadoopConf conf,
      ProgressCounters progress) {
    this(runId, (Inputs) inputs::value, settings, conf, progress);
  }

  public FeedTask(String runId, Inputs inputs, FeedSettings settings, HadoopConf conf) {
    this(runId, inputs, settings, conf, null);
  }

  /** {@code progress}: the job's counters, or null when no one watches. */
  public FeedTask(
      String runId,
      Inputs inputs,
      FeedSettings settings,
      HadoopConf conf,
      ProgressCounters progress) {
    this.runId = runId;
    this.inputs = inputs;
    this.settings = settings;
    this.conf = conf;
    this.progress = progress;
  }

  FeedSettings settings() {
    return settings;
  }

  public TaskOutcome run(List<FeedSlice> slices) throws IOException, InterruptedException {
    return run(slices, FeederConsumer.forTask(new VerifyingConsumer(inputs.value().plan())), runId);
  }

  /**
   * Produces {@code slices} into {@code consumer}.
   *
   * @param scope batches handed over under the same scope in this JVM are not handed over again
   *     ({@link DeliveryRegistry}): the run id, or a narrower one when a retry must deliver again
   */
  public TaskOutcome run(List<FeedSlice> slices, BatchConsumer consumer, String scope)
      throws IOException, InterruptedException {
    return run(slices, consumer, scope, null, null);
  }

  /**
   * The rows of {@code slices} with their first group of samples read now, on the calling thread
   * ({@code spark.spindle.feed.readBatches} batches' worth): {@code train} reads an epoch's first
   * group while the previous epoch's last rows decode, so that its decode starts as soon as the
   * previous one ends. Hand it to {@link #run(List, BatchConsumer, String, ReadAhead, Runnable)}; a
   * storage error is thrown here (unchecked), as that run would throw it.
   */
  public ReadAhead readAhead(List<FeedSlice> slices) {
    RowSource source = new RowSource(inputs.value(), slices, settings, conf.get());
    source.hasNext(); // reads the first group
    return new ReadAhead(source);
  }

  /**
   * Rows whose first group was read ahead ({@link #readAhead}), for one run of the same slices
   * (another run, e.g. of a leg the trainer resumes elsewhere, reads its own).
   */
  public static final class ReadAhead {
    private RowSource source;

    private ReadAhead(RowSource source) {
      this.source = source;
    }

    /** The rows, if they are {@code slices}' and not taken yet. */
    private synchronized RowSource take(List<FeedSlice> slices) {
      RowSource s = source;
      if (s == null || !s.slices().equals(slices)) {
        return null;
      }
      source = null;
      return s;
    }
  }

  /**
   * {@link #run(List, BatchConsumer, String)} from rows read ahead ({@code first}, may be null),
   * running {@code whenRead} (may be null) on the source thread once the last group of samples was
   * read: the reads are over, the last rows decode.
   */
  public TaskOutcome run(
      List<FeedSlice> slices,
      BatchConsumer consumer,
      String scope,
      ReadAhead first,
      Runnable whenRead)
      throws IOException, InterruptedException {
    FeedInputs in = inputs.value();
    TaskContext ctx = TaskContext.get();
    String owner =
        "feed-p"
            + (ctx == null ? 0 : ctx.partitionId())
            + "-a"
            + (ctx == null ? 0 : ctx.taskAttemptId());
    BatchImages images = settings.sample().images();
    int batchSize = in.plan().spec().batchSize();
    BatchConsumer delivered = ConsumerHook.wrap(consumer);
    try (BufferAllocator allocator =
            ExecutorAllocator.child(owner, settings.sample().arrowLimit());
        BatchTargets targets =
            new BatchTargets(
                delivered,
                allocator,
                settings.hasImage() ? images : null, // null: batches without an image column
                batchSize,
                settings.sample().extras())) {
      RowSource ahead = first == null ? null : first.take(slices);
      RowSource source =
          (ahead != null ? ahead : new RowSource(in, slices, settings, conf.get()))
              .into(targets, whenRead);
      FeedRun run = new FeedRun(scope, settings, targets, delivered, in.plan(), slices);
      PathSpec spec = pathSpec(owner, settings, batchSize, SamplePath.cpuThreads());
      TaskProgress tracker = new TaskProgress(progress, consumer.stageName());
      SamplePath.Progress live =
          (produced, bad, stats) ->
              tracker.update(produced, source.bytesIn(), bad, () -> stats, false);
      long samples = 0;
      try (SamplePath<Row> path = SamplePath.start(spec, source, allocator, live)) {
        for (List<Decoded<Row>> rows = path.next(); rows != null; rows = path.next()) {
          try {
            run.produce(in.plan().rank(rows.get(0).item().rank()), rows);
          } finally {
            rows.forEach(Decoded::close);
          }
          samples += rows.size();
          tracker.update(samples, source.bytesIn(), run.quarantined(), path::stats, false);
        }
        tracker.update(samples, source.bytesIn(), run.quarantined(), path::stats, true);
        return run.outcome(
            source.samplesRead(),
            source.bytesIn(),
            path.imagesDecoded(),
            source.copiedBytes() + path.hostCopyBytes(),
            source.io(),
            source.cacheCounts());
      } catch (PipelineFailure f) {
        Throwable cause = f.getCause() != null ? f.getCause() : f;
        throw new IOException(cause.getMessage(), cause);
      }
    }
  }

  /**
   * The sample path of a feed (or train) task on a pool of {@code poolThreads}: bad samples kept in
   * place, {@link dev.spindle.spark.samples.SampleSettings#decodesInFlight} rows decoding at once.
   */
  static PathSpec pathSpec(String owner, FeedSettings settings, int batchSize, int poolThreads) {
    return PathSpec.keeping(
        owner,
        settings.hasImage() ? settings.sample().images() : null, // null: nothing decoded
        batchSize,
        settings.sample().decodesInFlight(poolThreads));
  }
}
