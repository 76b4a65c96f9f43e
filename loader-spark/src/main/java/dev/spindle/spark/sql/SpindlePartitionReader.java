package dev.spindle.spark.sql;

import dev.spindle.spark.batch.ExecutorAllocator;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.pipeline.PipelineFailure;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.progress.TaskProgress;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.PathSpec;
import dev.spindle.spark.samples.SamplePath;
import dev.spindle.spark.samples.ShardSamples;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one partition (whole shards, or a stretch of a mixture's epoch plan: {@link ScanPart})
 * through the shared sample path into columnar batches:
 *
 * <pre>
 *  PartSamples ─► SamplePath (read ─► decode on the executor-wide pool ─► batch; bad samples
 *  quarantined against the budget) ─► next(): ScanColumns.fill ─► get(): one ColumnarBatch
 * </pre>
 *
 * <p><b>Ownership and reuse.</b> The reader owns a child of the executor's Arrow allocator, the
 * path and every vector; {@link #get()} returns the same {@link ColumnarBatch} each time, refilled
 * by {@link #next()}: it is valid until the next {@code next()} or {@link #close()}, and Spark must
 * not (and does not) close it. {@code close()} stops the path, releases the vectors and closes the
 * allocator, which fails loudly if anything leaked; it is idempotent.
 *
 * <p><b>Failures.</b> A storage error fails the task naming the shard (Spark retries it); past the
 * failure budget the task fails with one error listing the first causes. When the partition was
 * read to its end, its quarantine list is written under the {@code quarantine} URI, if set. Spark's
 * task thread only.
 */
final class SpindlePartitionReader implements PartitionReader<ColumnarBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(SpindlePartitionReader.class);
  private static final int CAUSES = 10;

  private final ScanPart part;
  private final ScanSettings settings;
  private final String scanId;
  private final Configuration conf;
  private final long attempt;
  private final BufferAllocator allocator;
  private final PartSamples source;
  private final ScanColumns columns;
  private final SamplePath<ShardSamples.Located> path;
  private final TaskProgress progress;
  private ColumnarBatch current;
  private long images;
  private boolean closed;

  SpindlePartitionReader(
      ScanPart part,
      ScanSettings settings,
      StructType schema,
      String scanId,
      Configuration conf,
      ProgressCounters progress) {
    this.part = part;
    this.progress = new TaskProgress(progress);
    this.settings = settings;
    this.scanId = scanId;
    this.conf = conf;
    TaskContext ctx = TaskContext.get();
    this.attempt = ctx == null ? 0 : ctx.taskAttemptId();
    String owner = "spindle-scan-" + scanId + "-p" + part.partition() + "-a" + attempt;
    this.allocator = ExecutorAllocator.child(owner, settings.sample().arrowLimit());
    this.source = part.open(conf, settings.sample().limits());
    try {
      this.columns = ScanColumns.create(settings, schema, allocator);
      if (part instanceof MixInputPartition mix) {
        columns.nameSources(mix.sourceNames());
      }
      this.path =
          SamplePath.start(
              spec(owner, settings, SamplePath.cpuThreads()),
              source,
              allocator,
              (produced, bad, stats) ->
                  this.progress.update(produced, this.source.bytesRead(), bad, () -> stats, false));
    } catch (RuntimeException | Error e) {
      closeQuietly();
      throw e;
    }
  }

  /**
   * The sample path of a scan task on a pool of {@code poolThreads}: bad samples quarantined,
   * {@link dev.spindle.spark.samples.SampleSettings#decodesInFlight} rows decoding at once.
   */
  static PathSpec spec(String owner, ScanSettings settings, int poolThreads) {
    return PathSpec.quarantining(
        owner,
        settings.decodes() ? settings.sample().images() : null,
        settings.batchSize(),
        settings.sample().decodesInFlight(poolThreads),
        settings.sample().budget());
  }

  @Override
  public boolean next() throws IOException {
    List<Decoded<ShardSamples.Located>> rows;
    try {
      rows = path.next();
    } catch (PipelineFailure f) {
      throw failed(f);
    }
    if (rows == null) {
      report(true);
      finish();
      return false;
    }
    try {
      current = columns.fill(rows);
      images += rows.size();
    } finally {
      rows.forEach(Decoded::close);
    }
    report(false);
    return true;
  }

  /** Adds what the partition did since the last call to its job's progress counters. */
  private void report(boolean last) {
    long quarantined = path.quarantine().size();
    progress.update(images + quarantined, source.bytesRead(), quarantined, path::stats, last);
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    return ScanMetrics.values(
        images, path.quarantine().size(), source.bytesRead(), path.decodeNanos() / 1_000_000);
  }

  /**
   * The partition was read to its end: judges its failure budget as {@code preprocess} judges a
   * job's (a fraction over at least {@code minSamples} samples), then lists what it quarantined.
   */
  private void finish() throws IOException {
    List<QuarantineRecord> quarantined = path.quarantined();
    if (settings.sample().budget().exceeded(quarantined.size(), source.samples())) {
      throw overBudget(null);
    }
    if (settings.quarantine() != null && !quarantined.isEmpty()) {
      QuarantineFiles.write(
          settings.quarantine(), scanId, part.partition(), attempt, quarantined, conf);
    }
  }

  private IOException failed(PipelineFailure f) {
    if (!SamplePath.stoppedByBudget(f)) {
      LOG.error(
          "Reading partition {} ({}) failed: {}",
          part.partition(),
          part.describe(),
          f.getMessage());
      return new IOException(f.getMessage(), f.getCause() != null ? f.getCause() : f);
    }
    return overBudget(f);
  }

  /** The one error of a partition past its failure budget, listing the first causes. */
  private IOException overBudget(PipelineFailure cause) {
    List<QuarantineRecord> quarantined = path.quarantined();
    StringBuilder msg =
        new StringBuilder(
            String.format(
                "Failure budget exceeded reading %s: %d of %d samples quarantined in partition %d"
                    + " (spark.spindle.maxFailures allows %s, judged per partition). First causes:",
                settings.input(),
                quarantined.size(),
                source.samples(),
                part.partition(),
                settings.sample().budget().describeForSamples()));
    quarantined.stream().limit(CAUSES).forEach(q -> msg.append("\n  ").append(q.describe()));
    return new IOException(msg.toString(), cause);
  }

  /** Stops the path, releases the vectors and closes the allocator; idempotent. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      path.close(); // the pipeline closes the source on its reading thread
    } finally {
      columns.close();
      allocator.close();
    }
  }

  /** Releases what a failed constructor had made; it is already failing. */
  private void closeQuietly() {
    closed = true;
    try {
      source.close();
      if (columns != null) {
        columns.close();
      }
    } catch (IOException | RuntimeException ignored) {
      // the constructor's failure is the one to report
    } finally {
      allocator.close();
    }
  }
}
