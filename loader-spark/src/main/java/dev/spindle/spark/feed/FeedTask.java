package dev.spindle.spark.feed;

import dev.spindle.spark.job.HadoopConf;
import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.image.ImageException;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.pipeline.ExecutorPools;
import dev.spindle.spark.pipeline.Order;
import dev.spindle.spark.pipeline.Pipeline;
import dev.spindle.spark.pipeline.PipelineFailure;
import dev.spindle.spark.pipeline.PipelineIterator;
import dev.spindle.spark.pipeline.Remainder;
import dev.spindle.spark.shard.Sample;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.TaskContext;
import org.apache.spark.broadcast.Broadcast;

/**
 * The executor side of {@code feed}, on the pipeline engine:
 *
 * <pre>
 *  source "read" (I/O pool: RowSource, planned samples only)
 *    ─► pipe "decode" (the executor-wide CPU pool, at most spark.spindle.threads of this task's
 *       rows at once, input order)
 *    ─► aggregate "batch" (batchSize rows: exactly one planned batch)
 *    ─► task thread: FeedRun assembles the Arrow batch, stands in for bad rows, delivers
 * </pre>
 *
 * One instance per epoch, shipped to executors; {@link #run} is called on a Spark task thread.
 */
final class FeedTask implements Serializable {
  private final String runId;
  final Broadcast<FeedInputs> inputs;
  private final FeedSettings settings;
  private final HadoopConf conf;

  FeedTask(String runId, Broadcast<FeedInputs> inputs, FeedSettings settings, HadoopConf conf) {
    this.runId = runId;
    this.inputs = inputs;
    this.settings = settings;
    this.conf = conf;
  }

  FeedSettings settings() {
    return settings;
  }

  TaskOutcome run(List<FeedSlice> slices) throws IOException, InterruptedException {
    return run(slices, FeederConsumer.forTask(new VerifyingConsumer(inputs.value().plan())), runId);
  }

  /**
   * Produces {@code slices} into {@code consumer}.
   *
   * @param scope batches handed over under the same scope in this JVM are not handed over again
   *     ({@link DeliveryRegistry}): the run id, or a narrower one when a retry must deliver again
   */
  TaskOutcome run(List<FeedSlice> slices, BatchConsumer consumer, String scope)
      throws IOException, InterruptedException {
    FeedInputs in = inputs.value();
    TaskContext ctx = TaskContext.get();
    String owner = "feed-p" + (ctx == null ? 0 : ctx.partitionId())
        + "-a" + (ctx == null ? 0 : ctx.taskAttemptId());
    ImageTransform transform = settings.transform();
    int batchSize = in.plan().spec().batchSize();
    RowSource source = new RowSource(in, slices, settings, conf.get());
    try (BufferAllocator allocator = ExecutorAllocator.child(owner, settings.arrowLimit());
        ImageBatch batch = new ImageBatch(allocator, transform.height(), transform.width(),
            transform.channels(), batchSize)) {
      FeedRun run = new FeedRun(scope, settings, batch, consumer);
      try (PipelineIterator<List<Decoded>> it =
          pipeline(source, transform, allocator, owner, batchSize).start()) {
        while (it.hasNext()) {
          List<Decoded> rows = it.next();
          try {
            run.produce(in.plan().rank(rows.get(0).row().rank()), rows);
          } finally {
            rows.forEach(Decoded::close);
          }
        }
        return run.outcome(source.samplesRead(), source.bytesIn());
      } catch (PipelineFailure f) {
        Throwable cause = f.getCause() != null ? f.getCause() : f;
        throw new IOException(cause.getMessage(), cause);
      }
    }
  }

  private Pipeline<List<Decoded>> pipeline(RowSource source, ImageTransform transform,
      BufferAllocator allocator, String owner, int batchSize) {
    ExecutorPools pools = ExecutorPools.shared();
    int threads = settings.threads() > 0 ? settings.threads() : pools.cpuThreads();
    return Pipeline.source("read", source)
        .keyedBy(Row::describe)
        .sizedBy(Row::bytes)
        .pipe("decode", row -> decode(row, transform, allocator), threads, Order.INPUT)
        .sizedBy(Decoded::bytes)
        .aggregate("batch", batchSize, Remainder.KEEP)
        .pools(pools)
        .named(owner)
        .build();
  }

  /** Decodes one row; a sample that cannot be used becomes a {@link Decoded#bad} row. */
  private static Decoded decode(Row row, ImageTransform transform, BufferAllocator allocator) {
    Sample s = row.sample();
    if (!s.usable()) {
      return Decoded.bad(row, s.problem());
    }
    ArrowBuf pixels = allocator.buffer(transform.outputBytes());
    try {
      transform.apply(s.image(), 0, s.image().length, row.index(), pixels, 0);
      return Decoded.ok(row, pixels);
    } catch (ImageException e) {
      pixels.close();
      return Decoded.bad(row, "cannot decode " + s.imageName() + ": " + e.getMessage());
    } catch (RuntimeException e) {
      pixels.close();
      return Decoded.bad(row, "decoder failed on " + s.imageName() + ": " + e);
    } catch (Error e) {
      pixels.close();
      throw e;
    }
  }
}
