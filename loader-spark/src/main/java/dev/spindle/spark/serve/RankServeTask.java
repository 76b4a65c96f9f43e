package dev.spindle.spark.serve;

import dev.spindle.gpu.device.GpuAssignment;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * One rank of a served epoch ({@code feed --serve}): task {@code r} of a barrier stage with one
 * task per rank streams rank {@code r}'s batches, in plan order, into the rank's feeder in this
 * executor, which the rank's trainer leases through this JVM's trainer bridge.
 *
 * <pre>
 *  bridge (ExecutorServing, per socket path) ─ awaitTrainer(r): the trainer's HELLO, resume k
 *  feeder (ExecutorServing: the task's GPU, or host shared memory) ─ bridge.serve(r, from k)
 *  FeedTask pipeline over batches [k, stop) ─► verify ─► feeder.offer (blocks: backpressure)
 *  bridge.awaitFinished(r): the trainer took every batch and got END ─► TaskOutcome + stats
 * </pre>
 *
 * <p>Why one long task per rank, in a barrier stage: a rank's trainer runs on one node and leases
 * from one feeder in one order, so all of a rank's batches must go, in plan order, to one
 * executor's feeder; one task per rank gives that without coordination between tasks, and its
 * thread is the one that blocks while the trainer is slow, so backpressure reaches the readers. The
 * barrier stage starts every rank together or none: DDP trainers advance in lockstep, and a rank
 * whose task waited for a free slot would stall all the others. The task waits for its trainer's
 * HELLO before it reads anything, so a trainer that resumes from its saved state (after it, or the
 * feed job, was restarted) is served from its resume point with index-level reads, without decoding
 * what it already consumed ({@code train}'s rank task, which knows where its trainer starts, reads
 * ahead instead: {@code dev.spindle.spark.train}). It ends only when its trainer has taken every
 * batch, so the job (and the JVM that holds the feeders) outlives the rank's last batch.
 *
 * <p>On failure the feeder is failed (its trainer gets FEEDER_FAILED and must reconnect with its
 * state) and the rank is no longer served; a retried attempt delivers from the trainer's new resume
 * point. Shipped to executors; {@link #apply} runs on the Spark task thread.
 */
public final class RankServeTask
    extends AbstractFunction1<Iterator<FeedSlice>, Iterator<TaskOutcome>> implements Serializable {
  private final FeedTask feed;
  private final ServeSettings serve;
  private final String runId;

  public RankServeTask(FeedTask feed, ServeSettings serve, String runId) {
    this.feed = feed;
    this.serve = serve;
    this.runId = runId;
  }

  @Override
  public Iterator<TaskOutcome> apply(Iterator<FeedSlice> slices) {
    List<TaskOutcome> out = new ArrayList<>();
    while (slices.hasNext()) {
      try {
        out.add(serveRank(slices.next()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while serving", e);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return CollectionConverters.asScala(out.iterator());
  }

  private TaskOutcome serveRank(FeedSlice planned)
      throws java.io.IOException, InterruptedException {
    return serveLeg(feed, serve, planned, scope(), Watch.NONE);
  }

  /**
   * What a rank task checks while it waits for its trainer: {@link #check} throws when the wait is
   * pointless (the trainer process it started has died); {@link #connected} hears that the trainer
   * said hello. Called on the thread that waits for the trainer (the task thread, or {@code
   * train}'s trainer door).
   */
  public interface Watch {
    Watch NONE = () -> {};

    void check();

    /** The rank's trainer said hello: it got past its start. */
    default void connected() {}
  }

  /**
   * Serves the leg {@code planned} of {@code feed}'s plan to the rank's trainer: waits for its
   * HELLO, streams the batches from its resume point into the rank's feeder, waits until it took
   * the last ({@link RankLeg}'s steps one after the other). Task thread.
   */
  private static TaskOutcome serveLeg(
      FeedTask feed, ServeSettings serve, FeedSlice planned, String scope, Watch watch)
      throws java.io.IOException, InterruptedException {
    RankLeg leg = RankLeg.open(feed, serve, planned.rank(), planned.fromBatch(), planned.toBatch());
    try {
      long resume = leg.admit(watch);
      int start = startBatch(planned, resume);
      leg.serve(start);
      TaskOutcome o = leg.feed(start, scope);
      return leg.outcome(o, leg.finish(watch));
    } catch (RuntimeException | Error | java.io.IOException | InterruptedException e) {
      throw RankLeg.rethrown(leg.fail(e));
    } finally {
      leg.release();
    }
  }

  /**
   * Where the rank starts: the trainer's resume point if it stated one, else the plan's. The bridge
   * admitted only a point in {@code 0..rank.batches()} (awaitTrainer), so it is an int.
   */
  static int startBatch(FeedSlice planned, long resume) {
    return resume < 0 ? planned.fromBatch() : Math.toIntExact(resume);
  }

  /** The task's GPU from Spark's resources (spread by rank over several), else GPU 0. */
  public static int ordinal(int rank) {
    TaskContext ctx = TaskContext.get();
    ResourceInformation gpu = ctx == null ? null : ctx.resourcesJMap().get("gpu");
    if (gpu == null || gpu.addresses().length == 0) {
      return 0;
    }
    return GpuAssignment.ordinalForTask(
        Arrays.asList(gpu.addresses()), System.getenv("CUDA_VISIBLE_DEVICES"), rank);
  }

  private String scope() {
    TaskContext ctx = TaskContext.get();
    return runId + "/attempt-" + (ctx == null ? 0 : ctx.taskAttemptId());
  }

  public static String executor() {
    SparkEnv env = SparkEnv.get();
    return env == null ? "?" : env.executorId();
  }

  public static String host() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }
}
