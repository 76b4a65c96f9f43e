package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.gpu.feed.SlotWriter;
import dev.spindle.spark.metrics.ActiveFeeders;
import dev.spindle.spark.plan.EpochPlan;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Hands a feed task's batches to the feeder of their rank in this JVM: the path from the feed job
 * to co-located trainers (the bridge serves those feeders to PyTorch processes). Either per task,
 * for {@code feed --serve} ({@link #serving}), or installed per JVM by whoever owns the feeders
 * ({@code spindle example} runs Spark embedded, so driver and executor share the JVM); otherwise
 * feed tasks use {@link VerifyingConsumer} alone.
 *
 * <p>The task decodes each batch straight into a slot of the rank's ring ({@link #claimSlot}, on
 * the task's source thread, blocking while the ring is full, so a slow trainer back-pressures the
 * readers); every batch is checked against the plan ({@link VerifyingConsumer}), then its slot is
 * published, with each row's loss weight set by the task. An Arrow batch handed in directly is
 * offered (one copy into a slot) with the weights {@link #unweighted} gives. Called on task
 * threads; {@link #install} and {@link #uninstall} from the owner's thread.
 */
public final class FeederConsumer implements BatchConsumer {
  private static final AtomicReference<Map<Integer, GpuFeeder>> INSTALLED = new AtomicReference<>();

  static {
    ActiveFeeders.register(FeederConsumer::active);
  }

  private final BatchConsumer verify;
  private final Map<Integer, GpuFeeder> feeders;
  private final Duration timeout;

  private FeederConsumer(BatchConsumer verify, Map<Integer, GpuFeeder> feeders, Duration timeout) {
    this.verify = verify;
    this.feeders = feeders;
    this.timeout = timeout;
  }

  /** Routes this JVM's feed batches to {@code feeders} (by rank) until {@link #uninstall}. */
  public static void install(Map<Integer, GpuFeeder> feeders) {
    if (!INSTALLED.compareAndSet(null, Map.copyOf(feeders))) {
      throw new IllegalStateException("Feeders are already installed for this JVM's feed tasks");
    }
  }

  /**
   * The feeders of this JVM now, for metrics: those {@link #install}ed and those serving ranks
   * ({@code feed --serve}, {@code train}); each once.
   */
  public static List<GpuFeeder> active() {
    Map<Integer, GpuFeeder> f = INSTALLED.get();
    java.util.Set<GpuFeeder> all =
        new java.util.LinkedHashSet<>(f == null ? List.of() : f.values());
    all.addAll(ExecutorServing.serving());
    return List.copyOf(all);
  }

  /** Feed tasks started from now on only verify. */
  public static void uninstall() {
    INSTALLED.set(null);
  }

  /** The consumer for a new task: the installed feeders after {@code verify}, or {@code verify}. */
  static BatchConsumer forTask(BatchConsumer verify) {
    Map<Integer, GpuFeeder> f = INSTALLED.get();
    return f == null ? verify : new FeederConsumer(verify, f, Duration.ofMinutes(10));
  }

  /** The consumer of a serving task: checks each batch, then offers it to {@code feeder}. */
  static BatchConsumer serving(EpochPlan plan, int rank, GpuFeeder feeder, Duration timeout) {
    return new FeederConsumer(new VerifyingConsumer(plan), Map.of(rank, feeder), timeout);
  }

  /** Rows that get loss weight 0: stand-ins of quarantined samples and the padded last rows. */
  public static BitSet unweighted(FeedBatch batch) {
    BitSet rows = batch.substituted();
    rows.set(batch.rows() - batch.padded(), batch.rows());
    return rows;
  }

  /**
   * No ring slot came free within the timeout: the rank's trainer asked for no batch (which would
   * have released its last one) for that long.
   */
  static final class TrainerTookNoBatch extends IllegalStateException {
    TrainerTookNoBatch(String message, TimeoutException cause) {
      super(message, cause);
    }
  }

  /** Offers block while the trainers are slow: then they are what bounds the job. */
  @Override
  public String stageName() {
    return "trainer";
  }

  /**
   * A free slot of {@code rank}'s feeder: the task decodes the rank's next batch straight into it
   * (waits while the ring is full: the trainer back-pressures the readers). Null for a feeder with
   * extra fields or without images: a slot writer writes no fields and needs pixel rows, so such
   * batches come as Arrow batches ({@link #accept} offers them, fields and all).
   */
  @Override
  public SlotWriter claimSlot(int rank) throws InterruptedException {
    GpuFeeder feeder = feeder(rank, "its next batch");
    if (!feeder.config().fields().isEmpty() || !feeder.config().images()) {
      return null;
    }
    try {
      return feeder.claimSlot(timeout);
    } catch (TimeoutException e) {
      throw new TrainerTookNoBatch(
          "Trainer of rank " + rank + " took no batch for " + timeout + "; no ring slot came free",
          e);
    }
  }

  private GpuFeeder feeder(int rank, String what) {
    GpuFeeder feeder = feeders.get(rank);
    if (feeder == null) {
      throw new IllegalStateException(
          "No feeder for rank "
              + rank
              + " in this JVM (feeders for "
              + feeders.keySet()
              + "); "
              + what);
    }
    return feeder;
  }

  /**
   * Checks the batch, then publishes its slot (a batch written into the ring: no copy), or offers
   * an Arrow batch (copied into a slot).
   */
  @Override
  public void accept(FeedBatch batch) {
    verify.accept(batch);
    int rank = batch.key().rank();
    GpuFeeder feeder = feeder(rank, "batch " + batch.key());
    if (batch.slot() != null) {
      batch.slot().publish(batch.rows());
      return;
    }
    try {
      feeder.offer(batch.root(), unweighted(batch), timeout);
    } catch (TimeoutException e) {
      throw new TrainerTookNoBatch(
          "Trainer of rank " + rank + " took no batch for " + timeout + "; batch " + batch.key(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted offering batch " + batch.key(), e);
    }
  }
}
