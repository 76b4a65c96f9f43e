package dev.spindle.spark.preprocess;

import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.pipeline.PipelineFailure;
import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.plan.ShardGroup;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.progress.TaskProgress;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.PathSpec;
import dev.spindle.spark.samples.SamplePath;
import dev.spindle.spark.samples.ShardSamples;
import dev.spindle.spark.shard.HadoopConf;
import dev.spindle.spark.sink.BatchFileSink;
import dev.spindle.spark.sink.CommittedFile;
import dev.spindle.spark.sink.OutputCommitter;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.hadoop.fs.Path;
import org.apache.spark.TaskContext;

/**
 * The executor side of {@code preprocess}: the shared sample path ({@link SamplePath}) over the
 * partition's shards, with committed Arrow files as its sink:
 *
 * <pre>
 *  ShardSamples ─► SamplePath: read ─► decode (quarantine against the budget) ─► batch
 *               ─► task thread: SamplePath.fill ─► ImageBatch ─► BatchFileSink (attempt file)
 * </pre>
 *
 * Bad samples are quarantined (shard, key, index, reason) by the path against the task's share of
 * the failure budget; past it the task stops early and the driver fails the job. One instance per
 * job, shipped to executors; {@link #run} is called on a Spark task thread.
 */
final class PreprocessTask implements Serializable {
  private final String jobTemporary;
  private final PreprocessSettings settings;
  private final HadoopConf conf;
  private final ProgressCounters progress;

  PreprocessTask(
      String jobTemporary,
      PreprocessSettings settings,
      HadoopConf conf,
      ProgressCounters progress) {
    this.jobTemporary = jobTemporary;
    this.settings = settings;
    this.conf = conf;
    this.progress = progress;
  }

  TaskResult run(ShardGroup group) throws IOException {
    TaskContext ctx = TaskContext.get();
    long attempt = ctx == null ? 0 : ctx.taskAttemptId();
    Path file =
        OutputCommitter.attemptFile(jobTemporary, group.partition(), attempt, settings.format());
    BatchImages images = settings.sample().images();
    String owner = "preprocess-p" + group.partition() + "-a" + attempt;
    ShardSamples source =
        new ShardSamples(group.shards(), group.offsets(), conf.get(), settings.sample().limits());
    try (BufferAllocator allocator =
            ExecutorAllocator.child(owner, settings.sample().arrowLimit());
        ImageBatch batch = batch(settings, allocator);
        BatchFileSink sink =
            settings
                .format()
                .open(
                    file,
                    conf.get(),
                    batch.root(),
                    settings.hasImage()
                        ? new int[] {images.height(), images.width(), images.channels()}
                        : null)) {
      PathSpec spec = pathSpec(owner, settings, SamplePath.cpuThreads());
      Outcome outcome = pump(spec, source, allocator, batch, sink, new Progress(progress, source));
      sink.close();
      long bytes = file.getFileSystem(conf.get()).getFileStatus(file).getLen();
      return new TaskResult(
          new CommittedFile(group.partition(), file.toString(), sink.rows(), bytes, sink.checks()),
          source.samples(),
          outcome.quarantine.size(),
          outcome.quarantine,
          source.bytesRead(),
          outcome.firstBatchEpochMs,
          outcome.stats,
          outcome.budgetExceeded);
    } finally {
      source.close();
    }
  }

  /** The task's batch: without an image column when the samples have none. */
  private static ImageBatch batch(PreprocessSettings settings, BufferAllocator allocator) {
    BatchImages images = settings.sample().images();
    List<FieldSpec> extras = settings.sample().extras();
    return settings.hasImage()
        ? new ImageBatch(
            allocator,
            images.height(),
            images.width(),
            images.channels(),
            settings.batchSize(),
            extras)
        : ImageBatch.withoutImages(allocator, settings.batchSize(), extras);
  }

  /** What the consumer saw. */
  private record Outcome(
      List<QuarantineRecord> quarantine,
      PipelineStats stats,
      long firstBatchEpochMs,
      boolean budgetExceeded) {}

  /** Adds what the task did since the last call to the job's progress counters. */
  private static final class Progress {
    private final TaskProgress task;
    private final ShardSamples source;

    Progress(ProgressCounters counters, ShardSamples source) {
      this.task = new TaskProgress(counters);
      this.source = source;
    }

    void update(long rows, long quarantined, SamplePath<?> path, boolean last) {
      task.update(rows + quarantined, source.bytesRead(), quarantined, path::stats, last);
    }

    /** What the running path reports: samples as they leave the decode stage. */
    SamplePath.Progress live() {
      return (produced, bad, stats) ->
          task.update(produced, source.bytesRead(), bad, () -> stats, false);
    }
  }

  /** Consumes the path on the task thread: every batch of rows is appended to the file. */
  private static Outcome pump(
      PathSpec spec,
      ShardSamples source,
      BufferAllocator allocator,
      ImageBatch batch,
      BatchFileSink sink,
      Progress progress)
      throws IOException {
    long firstBatch = 0;
    boolean exceeded = false;
    SamplePath<ShardSamples.Located> path =
        SamplePath.start(spec, source, allocator, progress.live());
    try (path) {
      for (List<Decoded<ShardSamples.Located>> rows = path.next();
          rows != null;
          rows = path.next()) {
        try {
          SamplePath.fill(batch, rows);
          batch.seal(rows.size());
          sink.write(batch.root());
          batch.reset();
        } finally {
          rows.forEach(Decoded::close);
        }
        firstBatch = firstBatch == 0 ? System.currentTimeMillis() : firstBatch;
        progress.update(sink.rows(), path.quarantine().size(), path, false);
      }
    } catch (PipelineFailure f) {
      if (f.stage().equals(SamplePath.READ) || f.getCause() instanceof Error) {
        throw new IOException(f.getMessage(), f.getCause() != null ? f.getCause() : f);
      }
      exceeded = true; // the decode stage ran out of its failure budget
    }
    List<QuarantineRecord> quarantined = path.quarantined();
    progress.update(sink.rows(), quarantined.size(), path, true);
    return new Outcome(quarantined, path.stats(), firstBatch, exceeded);
  }

  /**
   * The sample path of a preprocess task on a pool of {@code poolThreads}: bad samples quarantined
   * against the budget, {@link dev.spindle.spark.samples.SampleSettings#decodesInFlight} rows
   * decoding at once.
   */
  static PathSpec pathSpec(String owner, PreprocessSettings settings, int poolThreads) {
    return PathSpec.quarantining(
        owner,
        settings.hasImage() ? settings.sample().images() : null, // null: nothing decoded
        settings.batchSize(),
        settings.sample().decodesInFlight(poolThreads),
        settings.sample().budget());
  }
}
