package dev.spindle.spark.preprocess;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.manifest.ClusterShardCounter;
import dev.spindle.spark.manifest.EmptyShards;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ShardCatalog;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.metrics.QuarantineList;
import dev.spindle.spark.metrics.TaskTimeline;
import dev.spindle.spark.metrics.Timeline;
import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.pipeline.StatsMerge;
import dev.spindle.spark.plan.ShardGroup;
import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.shard.HadoopConf;
import dev.spindle.spark.shard.PartChecks;
import dev.spindle.spark.shard.SkippedInputs;
import dev.spindle.spark.sink.CommittedFile;
import dev.spindle.spark.sink.OutputCommitter;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code preprocess}: lists and counts the input's shards, runs one Spark task per shard (or group
 * of small shards) that decodes, resizes and centre-crops every image into Arrow IPC files, then
 * commits the output only if the job succeeded within its failure budget. Runs on the driver.
 */
public final class PreprocessJob {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final Logger LOG = LoggerFactory.getLogger(PreprocessJob.class);

  /** How long a failure path waits for the job's tasks to end before it aborts. */
  static final Duration ABORT_WAIT = Duration.ofSeconds(60);

  private PreprocessJob() {}

  /** Thrown when the job must fail as a whole (failure budget); its message lists first causes. */
  public static final class JobFailure extends RuntimeException {
    JobFailure(String message) {
      super(message);
    }
  }

  /**
   * Runs the job. The output is checked and locked before any Spark task runs; on every failure
   * path (a failed task, the failure budget, a killed stage) the job's temporary files are removed
   * and the output keeps what it held.
   */
  public static JobReport run(
      SparkSession spark, String input, String output, boolean overwrite, Map<String, String> conf)
      throws IOException {
    return run(spark, input, output, overwrite, Settings.read(conf));
  }

  /**
   * Runs the job with settings parsed before ({@link Settings#of} checked them). The output is
   * checked and locked before any Spark task runs, as {@link #run(SparkSession, String, String,
   * boolean, Map)} says.
   */
  public static JobReport run(
      SparkSession spark, String input, String output, boolean overwrite, Settings conf)
      throws IOException {
    long startNanos = System.nanoTime();
    long startMs = System.currentTimeMillis();
    PreprocessSettings settings = PreprocessSettings.from(conf);
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Configuration hadoop = spark.sparkContext().hadoopConfiguration();
    HadoopConf shipped = HadoopConf.of(spark.sparkContext());

    if (!conf.get(SpindleConfig.MIX).isEmpty()) {
      throw new IllegalArgumentException(
          "preprocess does not read mixtures (spark.spindle.mix is set): it writes every sample of"
              + " one input once, in manifest order, with no epoch order to mix; preprocess each"
              + " source on its own and mix the outputs with feed/train --mix");
    }
    // before the output is touched: a typo leaves no empty folder
    ShardCatalog.requireInput(hadoop, input);
    try (OutputCommitter committer =
        new OutputCommitter(
            output,
            hadoop,
            "preprocess " + input + " -> " + output,
            committerSettings(conf, overwrite))) {
      OutputCommitter.Recovery recovery = committer.setup();
      boolean submitted = false; // whether the job's Spark job was started
      try {
        ShardCatalog catalog =
            new ShardCatalog(hadoop, settings.folderShardFiles(), conf.parquetColumns());
        Manifest manifest = catalog.list(input, new ClusterShardCounter(jsc));
        if (manifest.totalSamples() == 0) {
          throw new IOException(EmptyShards.message(input, manifest, hadoop));
        }
        settings = settings.forInput(manifest, conf);
        List<ShardGroup> groups = ShardGroup.plan(manifest, settings.partitionBytes());
        PreprocessTask task =
            new PreprocessTask(
                committer.jobTemporaryUri(),
                settings,
                shipped,
                ProgressCounters.register(spark.sparkContext()));
        List<TaskResult> results;
        List<Timeline.Task> tasks;
        try (TaskTimeline timeline = TaskTimeline.attach(spark.sparkContext());
            JobLabel label =
                JobLabel.of(
                    spark.sparkContext(),
                    "spindle-" + committer.jobId(),
                    "preprocess",
                    description(input, manifest, groups.size()),
                    manifest.totalSamples())) {
          if (!settings.hasImage()) {
            label.withoutImages();
          }
          submitted = true;
          results = jsc.parallelize(groups, groups.size()).map(task::run).collect();
          List<TaskResult> done = results;
          tasks = timeline.tasks(groups.size(), TaskTimeline.WAIT_MS, p -> counts(done.get(p)));
        }
        Outcome outcome = Outcome.of(results);
        checkBudget(outcome, settings);
        List<CommittedFile> files = results.stream().map(TaskResult::file).toList();
        committer.commit(files, manifestJson(manifest, settings, files, outcome, committer));
        double wall = (System.nanoTime() - startNanos) / 1e9;
        JobReport report =
            report(
                input, hadoop, output, manifest, groups.size(), settings, outcome, wall, startMs);
        return report
            .put("master", spark.sparkContext().master())
            .put("input_skipped", SkippedInputs.reportList(catalog.skipped()))
            .put("input_skipped_total", catalog.skipped().size())
            .put("recovered", recoveryReport(recovery))
            .put("timeline", Timeline.of(startMs, tasks));
      } catch (Throwable t) {
        awaitTasks(spark.sparkContext(), "spindle-" + committer.jobId(), submitted, t);
        committer.abortAfter(t);
        throw t;
      }
    }
  }

  /**
   * Before an abort: the job's tasks that still run are cancelled and awaited (at most {@link
   * #ABORT_WAIT}), so none writes an attempt file after the abort deleted the job's folder. One
   * that outlives the wait leaves a file that the next job on this output removes.
   */
  private static void awaitTasks(
      SparkContext sc, String group, boolean submitted, Throwable failure) {
    try {
      if (!JobGroupTasks.cancelAndAwait(sc, group, submitted, ABORT_WAIT)) {
        LOG.warn(
            "Tasks of the failed job still ran after {} s; the next job on this output"
                + " removes what they write",
            ABORT_WAIT.toSeconds());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure.addSuppressed(e);
    } catch (RuntimeException e) {
      failure.addSuppressed(e); // a stopped context: no task runs any more
    }
  }

  private static Timeline.Counts counts(TaskResult r) {
    return new Timeline.Counts(r.samples(), r.file().rows(), r.bytesIn(), r.quarantined());
  }

  /** What the UI shows for the job: {@code preprocess s3a://bucket/in (1,024 shards)}. */
  static String description(String input, Manifest manifest, int tasks) {
    return String.format(
        java.util.Locale.ROOT,
        "preprocess %s (%,d shards, %,d samples, %,d tasks)",
        input,
        manifest.shards().size(),
        manifest.totalSamples(),
        tasks);
  }

  private static OutputCommitter.Settings committerSettings(Settings conf, boolean overwrite) {
    return new OutputCommitter.Settings(
        overwrite,
        Duration.ofSeconds(conf.get(SpindleConfig.OUTPUT_STALE_LOCK_SECONDS)),
        conf.get(SpindleConfig.OUTPUT_FORMAT));
  }

  /** What the job found left by dead jobs and removed, or null when nothing. */
  private static Map<String, Object> recoveryReport(OutputCommitter.Recovery r) {
    if (r.staleLock() == null && r.removed().isEmpty()) {
      return null;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("stale_lock", r.staleLock() == null ? null : r.staleLock().describe());
    m.put("stale_lock_reason", r.staleReason());
    m.put("removed", r.removed());
    return m;
  }

  /** The results of all tasks, summed. */
  private record Outcome(
      long samples,
      long rows,
      long quarantined,
      QuarantineList listed,
      long bytesIn,
      long firstBatchEpochMs,
      PipelineStats stats,
      boolean budgetExceeded) {
    static Outcome of(List<TaskResult> results) {
      long samples = 0, rows = 0, quarantined = 0, bytesIn = 0;
      long first = Long.MAX_VALUE;
      boolean exceeded = false;
      QuarantineList listed = new QuarantineList();
      for (TaskResult r : results) {
        samples += r.samples();
        rows += r.file().rows();
        quarantined += r.quarantined();
        bytesIn += r.bytesIn();
        exceeded |= r.budgetExceeded();
        if (r.firstBatchEpochMs() > 0) {
          first = Math.min(first, r.firstBatchEpochMs());
        }
        listed.addAll(r.quarantinedSamples());
      }
      PipelineStats stats =
          StatsMerge.merge("preprocess", results.stream().map(TaskResult::stats).toList());
      return new Outcome(
          samples,
          rows,
          quarantined,
          listed,
          bytesIn,
          first == Long.MAX_VALUE ? 0 : first,
          stats,
          exceeded);
    }
  }

  private static void checkBudget(Outcome o, PreprocessSettings settings) {
    if (!o.budgetExceeded() && !settings.sample().budget().exceeded(o.quarantined(), o.samples())) {
      return;
    }
    StringBuilder msg = new StringBuilder();
    msg.append(
        String.format(
            "Failure budget exceeded: %d of %d samples quarantined (spark.spindle.maxFailures allows %s)."
                + " Nothing was committed. First causes:",
            o.quarantined(), o.samples(), settings.sample().budget().describeForSamples()));
    o.listed().first().stream().limit(10).forEach(q -> msg.append("\n  ").append(q.describe()));
    throw new JobFailure(msg.toString());
  }

  private static String manifestJson(
      Manifest manifest,
      PreprocessSettings s,
      List<CommittedFile> files,
      Outcome o,
      OutputCommitter committer)
      throws IOException {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("format", s.format().manifestName());
    m.put("spindle_manifest_version", 1);
    List<Map<String, Object>> fileList = new ArrayList<>();
    for (CommittedFile f : files) {
      fileList.add(fileEntry(committer.finalName(f.partition()), f));
    }
    m.put("job", committer.jobId());
    m.put("files", fileList);
    m.put("rows", o.rows());
    List<Map<String, Object>> fields = new ArrayList<>();
    BatchImages t = s.hasImage() ? s.sample().images() : null; // null: samples without images
    Schema schema =
        t == null
            ? BatchSchema.withoutImage(List.of())
            : BatchSchema.of(t.height(), t.width(), t.channels());
    for (Field f : schema.getFields()) {
      Map<String, Object> field = new LinkedHashMap<>();
      field.put("name", f.getName());
      field.put("type", f.getType().toString());
      fields.add(field);
    }
    m.put("schema", fields);
    m.put("image_shape", t == null ? null : t.shape()); // null: read back as StoredImages.none()
    m.put("transforms", t == null ? null : t.transforms());
    m.put("class_names", manifest.classNames());
    Map<String, Object> in = new LinkedHashMap<>();
    in.put("uri", manifest.input());
    in.put("format", manifest.shards().get(0).format().name());
    in.put("shards", manifest.shards().size());
    in.put("samples", manifest.totalSamples());
    in.put("bytes", manifest.totalBytes());
    m.put("input", in);
    m.put("quarantined", o.quarantined());
    return JSON.writeValueAsString(m);
  }

  /**
   * One file of the manifest: its name, rows and size, and what readers check it by ({@code
   * shard.PartChecks}): {@code crc32c} (the whole file's CRC-32C, 8 hex digits), for Arrow {@code
   * batches_crc32c} (that of its footer's list of record batch checksums), and {@code first_index}
   * / {@code last_index} (the {@code index} column's range, -1 for a file without rows).
   */
  private static Map<String, Object> fileEntry(String name, CommittedFile f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("path", name);
    m.put("rows", f.rows());
    m.put("bytes", f.bytes());
    PartChecks c = f.checks();
    if (c == null) { // every sink reports them; a file without would be read unchecked
      return m;
    }
    m.put("crc32c", PartChecks.hex(c.crc32c()));
    if (c.batchesCrc32c() >= 0) {
      m.put("batches_crc32c", PartChecks.hex(c.batchesCrc32c()));
    }
    m.put("first_index", c.firstIndex());
    m.put("last_index", c.lastIndex());
    return m;
  }

  private static JobReport report(
      String input,
      Configuration hadoop,
      String output,
      Manifest manifest,
      int partitions,
      PreprocessSettings s,
      Outcome o,
      double wall,
      long startMs) {
    String qualified = new Path(output).toString();
    try {
      Path p = new Path(output);
      qualified = p.getFileSystem(hadoop).makeQualified(p).toString();
    } catch (IOException e) {
      // keep the path as given
    }
    JobReport report =
        new JobReport("preprocess")
            .put("input", input)
            .put("output", qualified)
            .put("images", o.rows())
            .put("samples", o.samples())
            .put("bytes_in", o.bytesIn())
            .put("wall_s", wall)
            .put("images_per_s", o.rows() / wall)
            .put("mb_per_s", o.bytesIn() / 1e6 / wall)
            .put(
                "time_to_first_batch_s",
                o.firstBatchEpochMs() == 0 ? null : (o.firstBatchEpochMs() - startMs) / 1000.0)
            .put("failures", o.quarantined());
    return o.listed()
        .putInto(report)
        .put("shards", manifest.shards().size())
        .put("partitions", partitions)
        .put("image_shape", s.hasImage() ? s.sample().images().shape() : null)
        .put("transforms", s.hasImage() ? s.sample().images().transforms() : null)
        .put("batch_size", s.batchSize())
        .put("stages", o.stats().toReport().get("stages"))
        .put("bottleneck", o.stats().bottleneck())
        .put(
            "stage_latency_note",
            "per-stage latency percentiles are job-wide, merged from every task's histogram"
                + " buckets; each within 1/32 (3.1%) of the exact value");
  }
}
