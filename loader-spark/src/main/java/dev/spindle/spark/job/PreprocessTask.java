package dev.spindle.spark.job;

import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.image.ImageException;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.shard.Sample;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardReader;
import dev.spindle.spark.sink.ArrowFileSink;
import dev.spindle.spark.sink.CommittedFile;
import dev.spindle.spark.sink.OutputCommitter;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.hadoop.fs.Path;
import org.apache.spark.TaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor side of {@code preprocess}: reads the shards of one partition, decodes and
 * transforms every sample on the JVM's shared decode pool straight into the rows of a reusable
 * Arrow batch, and appends full batches to this attempt's file under the job's temporary folder.
 * Bad samples are quarantined (shard, key, index, reason) and their rows closed up. One instance
 * per job, shipped to executors; {@link #run} is called on a Spark task thread.
 */
final class PreprocessTask implements Serializable {
  static final int MAX_LISTED = 100;
  private static final Logger LOG = LoggerFactory.getLogger(PreprocessTask.class);

  /** One partition's work: shards in order, with the dataset index of each shard's first sample. */
  record Spec(int partition, List<Shard> shards, long[] offsets) implements Serializable {}

  private final String jobTemporary;
  private final PreprocessSettings settings;
  private final HadoopConf conf;

  PreprocessTask(String jobTemporary, PreprocessSettings settings, HadoopConf conf) {
    this.jobTemporary = jobTemporary;
    this.settings = settings;
    this.conf = conf;
  }

  TaskResult run(Spec spec) throws IOException, InterruptedException {
    TaskContext ctx = TaskContext.get();
    long attempt = ctx == null ? 0 : ctx.taskAttemptId();
    Path file = OutputCommitter.attemptFile(jobTemporary, spec.partition(), attempt);
    ImageTransform transform = settings.transform();
    String owner = "preprocess-p" + spec.partition() + "-a" + attempt;
    try (BufferAllocator allocator = ExecutorAllocator.child(owner, settings.arrowLimit());
        ImageBatch batch =
            new ImageBatch(
                allocator, transform.height(), transform.width(), transform.channels(), settings.batchSize());
        ArrowFileSink sink = new ArrowFileSink(file, conf.get(), batch.root())) {
      Run run = new Run(transform, batch, sink);
      for (int i = 0; i < spec.shards().size() && !run.budgetExceeded; i++) {
        run.readShard(spec.shards().get(i), spec.offsets()[i]);
      }
      run.flush();
      sink.close();
      long bytes = file.getFileSystem(conf.get()).getFileStatus(file).getLen();
      CommittedFile committed = new CommittedFile(spec.partition(), file.toString(), sink.rows(), bytes);
      return new TaskResult(
          committed, run.samples, run.quarantined, run.listed, run.bytesIn,
          run.firstBatchEpochMs, run.decodeNanos, run.budgetExceeded);
    }
  }

  /** The state of one task attempt; confined to the task thread except the rows decoders fill. */
  private final class Run {
    private final ImageTransform transform;
    private final ImageBatch batch;
    private final ArrowFileSink sink;
    private final ExecutorService pool = DecodeThreads.get(settings.threads());
    private final List<Sample> pending = new ArrayList<>();
    private final List<Long> pendingIndex = new ArrayList<>();
    private final List<QuarantineRecord> listed = new ArrayList<>();
    private long samples;
    private long quarantined;
    private long bytesIn;
    private long firstBatchEpochMs;
    private long decodeNanos;
    private boolean budgetExceeded;

    Run(ImageTransform transform, ImageBatch batch, ArrowFileSink sink) {
      this.transform = transform;
      this.batch = batch;
      this.sink = sink;
    }

    void readShard(Shard shard, long offset) throws IOException, InterruptedException {
      try (ShardReader reader = ShardReader.open(shard, conf.get(), settings.maxSampleBytes())) {
        while (!budgetExceeded && reader.hasNext()) {
          Sample sample = reader.next();
          samples++;
          bytesIn += sample.image() == null ? 0 : sample.image().length;
          pending.add(sample);
          pendingIndex.add(offset + sample.position());
          if (pending.size() == batch.capacity()) {
            flush();
          }
        }
        if (reader.damage() != null) {
          quarantine(new QuarantineRecord(shard.displayName(), "(rest of shard)", -1,
              "shard damaged, remaining samples unreadable: " + reader.damage()));
        }
      } catch (IOException | RuntimeException e) {
        LOG.error("Failed reading shard {}: {}", shard.displayName(), e.toString());
        throw new IOException("Failed reading shard " + shard.displayName() + ": " + e.getMessage(), e);
      }
    }

    void flush() throws IOException, InterruptedException {
      if (pending.isEmpty()) {
        return;
      }
      String[] errors = decodeAll();
      int rows = 0;
      for (int j = 0; j < pending.size(); j++) {
        Sample s = pending.get(j);
        long index = pendingIndex.get(j);
        if (errors[j] != null) {
          quarantine(new QuarantineRecord(s.shard(), s.key(), index, errors[j]));
          continue;
        }
        batch.movePixels(j, rows);
        batch.setRow(rows++, s.label(), s.key(), index);
      }
      batch.seal(rows);
      sink.write(batch.root());
      batch.reset();
      if (firstBatchEpochMs == 0) {
        firstBatchEpochMs = System.currentTimeMillis();
      }
      pending.clear();
      pendingIndex.clear();
    }

    /** Decodes every usable pending sample into its row; returns per-row problems (null = ok). */
    private String[] decodeAll() throws InterruptedException {
      int n = pending.size();
      String[] errors = new String[n];
      long[] nanos = new long[n];
      List<Future<?>> futures = new ArrayList<>(n);
      for (int j = 0; j < n; j++) {
        Sample s = pending.get(j);
        if (!s.usable()) {
          errors[j] = s.problem();
          continue;
        }
        int row = j;
        long index = pendingIndex.get(j);
        futures.add(pool.submit(() -> decodeOne(s, index, row, errors, nanos)));
      }
      awaitAll(futures);
      for (long t : nanos) {
        decodeNanos += t;
      }
      return errors;
    }

    private void decodeOne(Sample s, long index, int row, String[] errors, long[] nanos) {
      long t0 = System.nanoTime();
      try {
        transform.apply(s.image(), 0, s.image().length, index, batch.imageData(), row * batch.rowBytes());
      } catch (ImageException e) {
        errors[row] = "cannot decode " + s.imageName() + ": " + e.getMessage();
      } catch (RuntimeException e) {
        errors[row] = "decoder failed on " + s.imageName() + ": " + e;
      }
      nanos[row] = System.nanoTime() - t0;
    }

    /**
     * Waits for every decode. On interruption (a killed task) the queued ones are cancelled and the
     * running ones still awaited: they write into this batch, which must outlive them.
     */
    private void awaitAll(List<Future<?>> futures) throws InterruptedException {
      InterruptedException interrupted = null;
      for (Future<?> f : futures) {
        while (true) {
          try {
            if (interrupted != null) {
              f.cancel(false);
            }
            if (!f.isCancelled()) {
              f.get();
            }
            break;
          } catch (InterruptedException e) {
            interrupted = e;
          } catch (ExecutionException e) {
            throw new IllegalStateException("Decode task failed unexpectedly", e.getCause());
          } catch (java.util.concurrent.CancellationException e) {
            break;
          }
        }
      }
      if (interrupted != null) {
        throw interrupted;
      }
    }

    private void quarantine(QuarantineRecord record) {
      quarantined++;
      if (listed.size() < MAX_LISTED) {
        listed.add(record);
      }
      if (quarantined <= 3) {
        LOG.warn("Quarantined {}", record.describe());
      }
      if (settings.budget().exceededEarly(quarantined)) {
        budgetExceeded = true;
      }
    }
  }
}
