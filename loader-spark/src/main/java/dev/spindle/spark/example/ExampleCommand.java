package dev.spindle.spark.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.train.PythonClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@code example fashion-mnist}: imports Fashion-MNIST into tar shards (a Spark job), then trains
 * with {@link dev.spindle.Feed#train}: every rank runs {@code examples/fashion_mnist.py} of the
 * Python client, an ordinary training script (DDP, gloo, CPU) that checkpoints with {@code
 * spindle_bridge.checkpoint} into the work directory, beside its executor; rank 0 evaluates on the
 * test set. Reports the trainers' test accuracy, how long they waited for data and the train run's
 * own report. Main thread; the report is JSON.
 */
public final class ExampleCommand {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The example's remainder policy: every batch is full, so each rank trains as many steps. */
  private static final String REMAINDER = "DROP_LAST";

  private ExampleCommand() {}

  /**
   * What to run. {@code ownWork}: the work directory is a temporary one the example made (see
   * {@link #options}), removed when the example ends; a named one is kept. {@code python}: the
   * trainers' interpreter, or null for {@code spark.spindle.train.python}.
   */
  public record Options(
      int epochs,
      int limit,
      int world,
      int batch,
      int testLimit,
      Path work,
      boolean ownWork,
      Path source,
      String python) {}

  /**
   * The options, with {@code work} or else a new temporary directory as the work directory. Call it
   * once every other value is checked: a refused command line leaves no directory behind.
   */
  public static Options options(
      int epochs,
      int limit,
      int world,
      int batch,
      int testLimit,
      Path work,
      Path source,
      String python)
      throws IOException {
    boolean own = work == null;
    Path dir = own ? Files.createTempDirectory("spindle-example-") : work;
    return new Options(
        epochs, limit, world, batch, testLimit, dir.toAbsolutePath(), own, source, python);
  }

  /** The master the example runs on by default: a task slot per rank, and more to import. */
  public static String defaultMaster(int world) {
    return "local[" + Math.max(4, world) + "]";
  }

  /** The training script every rank runs. */
  public static Path script() {
    return PythonClient.dir().resolve("examples/fashion_mnist.py");
  }

  /** Runs the example on {@code spark}; removes its own work directory at the end. */
  public static JobReport run(SparkSession spark, Options o)
      throws IOException, InterruptedException {
    JobReport report;
    try {
      report = runIn(spark, o);
    } catch (Throwable t) {
      if (o.ownWork()) {
        try {
          WorkDirs.delete(o.work());
        } catch (RuntimeException e) {
          t.addSuppressed(e);
        }
      }
      throw t;
    }
    if (o.ownWork()) {
      WorkDirs.delete(o.work());
    }
    return report;
  }

  private static JobReport runIn(SparkSession spark, Options o)
      throws IOException, InterruptedException {
    String python =
        o.python() != null
            ? o.python()
            : spark
                .conf()
                .get(SpindleConfig.TRAIN_PYTHON.key(), SpindleConfig.TRAIN_PYTHON.defaultValue());
    if (spark.sparkContext().master().startsWith("local")) {
      PythonClient.requireImports(python); // the executors run here: fail before importing
    }
    Files.createDirectories(o.work());
    String shards = o.work().resolve("shards").toUri().toString();
    JobReport imported =
        FashionMnistImport.run(
            spark, o.source(), "train", shards, o.limit(), Math.max(o.world(), 4));
    Path reports = Files.createDirectories(o.work().resolve("reports"));
    long started = System.nanoTime();
    FeedReport train =
        Spindle.feed(spark)
            .input(shards)
            .worldSize(o.world())
            .batchSize(o.batch())
            .size(28)
            .remainder(REMAINDER)
            .partitions(o.world())
            .manifest(o.work().resolve("manifest.json").toString())
            .epochs(o.epochs())
            .python(python)
            .train(
                script().toString(),
                "--test-dir",
                o.source().toString(),
                "--test-limit",
                Integer.toString(o.testLimit()),
                "--report-dir",
                reports.toString(),
                "--checkpoint-dir",
                o.work().resolve("checkpoints").toString());
    return report(o, train, imported, reports, (System.nanoTime() - started) / 1e9);
  }

  @SuppressWarnings("unchecked")
  private static JobReport report(
      Options o, FeedReport train, JobReport imported, Path reports, double wall)
      throws IOException {
    Map<String, Object> t = train.fields();
    double wait = 0;
    double step = 0;
    List<Object> waits = new ArrayList<>();
    for (Map<String, Object> trainer : (List<Map<String, Object>>) t.get("trainers")) {
      double w = ((Number) trainer.get("wait_s")).doubleValue();
      waits.add(w);
      wait = Math.max(wait, w);
    }
    long batches = 0;
    for (Map<String, Object> leg : (List<Map<String, Object>>) t.get("ranks")) {
      batches += ((Number) leg.get("batches")).longValue();
    }
    JsonNode r0 = null;
    for (int r = 0; r < o.world(); r++) {
      JsonNode n = JSON.readTree(reports.resolve("rank-" + r + ".json").toFile());
      step = Math.max(step, n.get("step_s").asDouble());
      r0 = r == 0 ? n : r0;
    }
    long samples = ((Number) t.get("samples")).longValue();
    return new JobReport("example fashion-mnist")
        .put("images", samples)
        .put("wall_s", wall)
        .put("images_per_s", samples / wall)
        .put("test_accuracy", r0.get("test_accuracy").asDouble())
        .put("test_samples", r0.get("test_samples").asLong())
        .put("train_samples", samples)
        .put("train_batches", batches)
        .put("epochs", o.epochs())
        .put("world_size", o.world())
        .put("batch_size", o.batch())
        .put("trainer_wait_s", wait)
        .put("trainer_wait_s_per_rank", waits)
        .put("trainer_step_s", step)
        .put("restarts", ((List<?>) t.get("restarts")).size())
        .put("imported_samples", imported.get("samples"))
        .put("train", t);
  }
}
