package dev.spindle.spark.job;

import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.image.ImageException;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.pipeline.ExecutorPools;
import dev.spindle.spark.pipeline.Order;
import dev.spindle.spark.pipeline.Pipeline;
import dev.spindle.spark.pipeline.PipelineFailure;
import dev.spindle.spark.pipeline.PipelineIterator;
import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.pipeline.QuarantineEntry;
import dev.spindle.spark.pipeline.Remainder;
import dev.spindle.spark.shard.Sample;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.sink.BatchFileSink;
import dev.spindle.spark.sink.CommittedFile;
import dev.spindle.spark.sink.OutputCommitter;
import java.io.IOException;
import java.io.Serializable;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.hadoop.fs.Path;
import org.apache.spark.TaskContext;

/**
 * The executor side of {@code preprocess}, on the thread pipeline:
 *
 * <pre>
 *  source "read" (I/O pool)  ─► pipe "decode" (CPU pool, input order)  ─► aggregate "batch"  ─► task thread
 *  ShardSamples: samples of     decode + resize + crop into a pixel        batchSize rows        copy rows into the
 *  the partition's shards       buffer; bad samples quarantined                                 Arrow batch, append
 * </pre>
 *
 * Bad samples are quarantined (shard, key, index, reason) by the pipeline against the task's
 * share of the failure budget; past it the task stops early and the driver fails the job. One
 * instance per job, shipped to executors; {@link #run} is called on a Spark task thread.
 */
final class PreprocessTask implements Serializable {
  /** One partition's work: shards in order, with the dataset index of each shard's first sample. */
  record Spec(int partition, List<Shard> shards, long[] offsets) implements Serializable {}

  /** A decoded sample: its row's pixels in a buffer the pipeline closes if it drops the item. */
  private record Decoded(Sample sample, long index, ArrowBuf pixels) implements AutoCloseable {
    @Override
    public void close() {
      pixels.close();
    }
  }

  private final String jobTemporary;
  private final PreprocessSettings settings;
  private final HadoopConf conf;

  PreprocessTask(String jobTemporary, PreprocessSettings settings, HadoopConf conf) {
    this.jobTemporary = jobTemporary;
    this.settings = settings;
    this.conf = conf;
  }

  TaskResult run(Spec spec) throws IOException {
    TaskContext ctx = TaskContext.get();
    long attempt = ctx == null ? 0 : ctx.taskAttemptId();
    Path file = OutputCommitter.attemptFile(
        jobTemporary, spec.partition(), attempt, settings.format());
    ImageTransform transform = settings.transform();
    String owner = "preprocess-p" + spec.partition() + "-a" + attempt;
    ShardSamples source =
        new ShardSamples(spec.shards(), spec.offsets(), conf.get(), settings.limits());
    try (BufferAllocator allocator = ExecutorAllocator.child(owner, settings.arrowLimit());
        ImageBatch batch = new ImageBatch(allocator, transform.height(), transform.width(),
            transform.channels(), settings.batchSize());
        BatchFileSink sink = settings.format().open(file, conf.get(), batch.root(),
            new int[] {transform.height(), transform.width(), transform.channels()})) {
      Outcome outcome = pump(pipeline(source, transform, allocator, owner), batch, sink);
      sink.close();
      long bytes = file.getFileSystem(conf.get()).getFileStatus(file).getLen();
      List<QuarantineRecord> quarantined = outcome.quarantine.stream()
          .map(q -> SampleId.record(q.key(), q.reason())).toList();
      return new TaskResult(
          new CommittedFile(spec.partition(), file.toString(), sink.rows(), bytes),
          source.samples(), quarantined.size(), quarantined,
          source.bytesRead(), outcome.firstBatchEpochMs, outcome.stats, outcome.budgetExceeded);
    } finally {
      source.close();
    }
  }

  private Pipeline<List<Decoded>> pipeline(
      ShardSamples source, ImageTransform transform, BufferAllocator allocator, String owner) {
    ExecutorPools pools = ExecutorPools.shared();
    return Pipeline.source("read", source)
        .keyedBy(ShardSamples.Located::id)
        .sizedBy(ShardSamples.Located::bytes)
        // in input order a finished image waits for every earlier one: a few slots per thread
        // keep a thread from idling behind a slower image (see EngineLoader.inFlight)
        .pipe("decode", located -> decode(located, transform, allocator),
            4 * pools.cpuThreads(), Order.INPUT)
        .sizedBy(d -> d.pixels().capacity())
        .aggregate("batch", settings.batchSize(), Remainder.KEEP)
        .failureBudget("decode", settings.budget().toPipelineBudget())
        .pools(pools)
        .named(owner)
        .build();
  }

  private static Decoded decode(
      ShardSamples.Located located, ImageTransform transform, BufferAllocator allocator)
      throws ImageException {
    Sample s = located.sample();
    if (!s.usable()) {
      throw new ImageException(s.problem());
    }
    ArrowBuf pixels = allocator.buffer(transform.outputBytes());
    try {
      transform.apply(s.image(), 0, s.image().length, located.index(), pixels, 0);
      return new Decoded(s, located.index(), pixels);
    } catch (ImageException e) {
      pixels.close();
      throw new ImageException("cannot decode " + s.imageName() + ": " + e.getMessage(), e);
    } catch (RuntimeException | Error e) {
      pixels.close();
      throw e;
    }
  }

  /** What the consumer saw. */
  private record Outcome(
      List<QuarantineEntry> quarantine, PipelineStats stats, long firstBatchEpochMs,
      boolean budgetExceeded) {}

  /** Consumes the pipeline on the task thread: every batch of rows is appended to the file. */
  private Outcome pump(Pipeline<List<Decoded>> pipeline, ImageBatch batch, BatchFileSink sink)
      throws IOException {
    PipelineIterator<List<Decoded>> it = pipeline.start();
    long firstBatch = 0;
    boolean exceeded = false;
    try {
      while (it.hasNext()) {
        List<Decoded> rows = it.next();
        try {
          write(rows, batch, sink);
        } finally {
          rows.forEach(Decoded::close);
        }
        firstBatch = firstBatch == 0 ? System.currentTimeMillis() : firstBatch;
      }
    } catch (PipelineFailure f) {
      if (f.stage().equals("read") || f.getCause() instanceof Error) {
        throw new IOException(f.getMessage(), f.getCause() != null ? f.getCause() : f);
      }
      exceeded = true; // the decode stage ran out of its failure budget
    } finally {
      it.close();
    }
    return new Outcome(it.quarantine(), it.stats(), firstBatch, exceeded);
  }

  private static void write(List<Decoded> rows, ImageBatch batch, BatchFileSink sink)
      throws IOException {
    for (int r = 0; r < rows.size(); r++) {
      Decoded d = rows.get(r);
      batch.imageData().setBytes(r * batch.rowBytes(), d.pixels(), 0, batch.rowBytes());
      batch.setRow(r, d.sample().label(), d.sample().key(), d.index());
    }
    batch.seal(rows.size());
    sink.write(batch.root());
    batch.reset();
  }
}
