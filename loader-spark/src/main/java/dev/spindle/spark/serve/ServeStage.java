package dev.spindle.spark.serve;

import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.spark.plan.EpochPlan;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * The driver side of {@code feed --serve}: per epoch, one barrier stage of {@code world} tasks,
 * task {@code r} serving rank {@code r} ({@link RankServeTask}). Driver thread.
 */
public final class ServeStage {
  private static final Logger LOG = LoggerFactory.getLogger(ServeStage.class);
  private static final ClassTag<TaskOutcome> OUTCOME = ClassTag$.MODULE$.apply(TaskOutcome.class);

  private ServeStage() {}

  /**
   * Refuses, before any work, a local master with fewer task slots than ranks (a barrier stage
   * needs all of them at once; Spark would retry for minutes before failing), has the serving state
   * closed when a local session stops, and prints where trainers connect.
   */
  public static void announce(JavaSparkContext jsc, int world, ServeSettings serve) {
    requireSlots(jsc, world, "--serve");
    ExecutorServing.closeOnStop(jsc.sc());
    String rank0 =
        ServeSettings.resolve(serve.socketTemplate(), System.getProperty("user.name"), 0);
    String line =
        "spindle feed: serving "
            + world
            + " trainer rank(s) on "
            + serve.device()
            + " feeders; rank r's trainer connects to "
            + serve.socketTemplate()
            + " on the node of"
            + " the executor that runs rank r (rank 0 here: "
            + rank0
            + ") with this run's token in "
            + RunToken.ENV
            + " (each bridge writes it, 0600, beside its socket: "
            + rank0
            + ".token)";
    System.out.println(line);
    LOG.info(line);
  }

  /**
   * Refuses a local master with fewer task slots than {@code world} ranks: a barrier stage needs
   * all of them at once, and Spark would retry for minutes before failing. {@code what} names the
   * command or flag that runs one task per rank.
   */
  public static void requireSlots(JavaSparkContext jsc, int world, String what) {
    if (jsc.sc().isLocal() && jsc.sc().defaultParallelism() < world) {
      throw new IllegalArgumentException(
          what
              + " runs one task per rank at once: world size "
              + world
              + " needs "
              + world
              + " task slots, but master "
              + jsc.master()
              + " has "
              + jsc.sc().defaultParallelism()
              + " (use --master local["
              + world
              + "] or more)");
    }
  }

  /** Serves every rank's batches {@code [firstBatch, stop)}; returns each rank's outcome. */
  public static List<TaskOutcome> run(
      JavaSparkContext jsc, EpochPlan plan, int stop, RankServeTask task) {
    List<FeedSlice> slices = new ArrayList<>();
    for (int r = 0; r < plan.worldSize(); r++) {
      slices.add(new FeedSlice(r, plan.rank(r).firstBatch(), stop));
    }
    RDD<FeedSlice> ranks = jsc.parallelize(slices, slices.size()).rdd();
    RDD<TaskOutcome> served = ranks.barrier().mapPartitions(task, false, OUTCOME);
    return new JavaRDD<>(served, OUTCOME).collect();
  }
}
