package dev.spindle.spark.serve;

import dev.spindle.gpu.bridge.Admission;
import dev.spindle.gpu.bridge.BridgeServer;
import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.gpu.device.DeviceDiscovery;
import dev.spindle.gpu.device.SharedMemoryDevice;
import dev.spindle.gpu.feed.FeederConfig;
import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.gpu.feed.GpuFeeders;
import dev.spindle.spark.metrics.ActiveFeeders;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one executor JVM keeps for serving trainers, across the serving tasks of every epoch and
 * run: trainer bridges by socket path, and feeders. A feeder is one per GPU (from {@link
 * GpuFeeders}, held by one rank at a time: two ranks served at once need two GPUs); on the host
 * device it is one per rank, on shared memory a trainer process can map: each rank's trainer needs
 * a stream of its own, and host memory, unlike a GPU, is not one per rank. Everything is created
 * lazily by the first task that needs it, reused by later ones (a feeder's memory is allocated
 * once), and closed by a JVM shutdown hook, by {@link #closeAll()} or, on a local master, when the
 * session stops ({@link #closeOnStop}); closing removes socket files and shared-memory segments.
 *
 * <p>Threads: task threads; every method is synchronized on the class.
 */
public final class ExecutorServing {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorServing.class);
  private static final Map<Path, BridgeServer> BRIDGES = new HashMap<>();
  private static final Map<Integer, GpuFeeder> HOST_FEEDERS = new HashMap<>();
  private static final Map<Integer, Integer> GPU_HOLDERS = new HashMap<>();
  private static final Set<SparkContext> WATCHED = Collections.newSetFromMap(new WeakHashMap<>());
  private static boolean hooked;

  static {
    ActiveFeeders.register(ExecutorServing::serving); // before the first feeder is opened
  }

  private ExecutorServing() {}

  /**
   * The bridge on {@code socket} for the run with {@code token}, started on first use; replaced
   * when it served another run (another token: the earlier run's trainers must not get this run's
   * batches) or another world size.
   */
  static synchronized BridgeServer bridge(
      Path socket, int world, Duration trainerWait, RunToken token) {
    hook();
    BridgeServer b = BRIDGES.get(socket);
    if (b != null && (b.worldSize() != world || !b.admission().token().equals(token))) {
      LOG.info(
          "Bridge on {} served another run (world size {}); restarting it for this run "
              + "(world size {})",
          socket,
          b.worldSize(),
          world);
      BRIDGES.remove(socket).close();
      b = null;
    }
    if (b == null) {
      b = BridgeServer.listen(socket, world, trainerWait, Admission.of(token));
      BRIDGES.put(socket, b);
      System.out.println(
          "spindle feed: trainer bridge listening on "
              + b.socketPath()
              + " (world size "
              + world
              + "); run token in "
              + b.tokenFile());
    }
    return b;
  }

  /**
   * The feeder that serves {@code rank}: on GPU {@code ordinal} when {@code choice} (and, for auto,
   * CUDA) allows, else on host shared memory. Call {@link #release} when the rank is done.
   *
   * @throws IllegalStateException if the GPU already serves another rank of this JVM
   */
  static synchronized GpuFeeder feeder(
      int rank, int ordinal, DeviceDiscovery.Choice choice, FeederConfig config) {
    hook();
    boolean cuda =
        choice == DeviceDiscovery.Choice.CUDA
            || (choice == DeviceDiscovery.Choice.AUTO && DeviceDiscovery.cudaAvailable(ordinal));
    return cuda ? gpuFeeder(rank, ordinal, config) : hostFeeder(rank, config);
  }

  private static GpuFeeder gpuFeeder(int rank, int ordinal, FeederConfig config) {
    Integer holder = GPU_HOLDERS.get(ordinal);
    if (holder != null && holder != rank) {
      throw new IllegalStateException(
          "GPU "
              + ordinal
              + " of this executor already serves rank "
              + holder
              + "; rank "
              + rank
              + " needs a GPU of its own: give each task one GPU "
              + "(spark.executor.resource.gpu.amount and spark.task.resource.gpu.amount=1) or serve "
              + "from host memory (--device host)");
    }
    GpuFeeders.existing(ordinal)
        .filter(f -> !f.config().equals(config))
        .ifPresent(f -> GpuFeeders.close(ordinal));
    GpuFeeder f = GpuFeeders.get(ordinal, DeviceDiscovery.Choice.CUDA, config);
    GPU_HOLDERS.put(ordinal, rank);
    return f;
  }

  private static GpuFeeder hostFeeder(int rank, FeederConfig config) {
    GpuFeeder f = HOST_FEEDERS.get(rank);
    if (f != null && !f.isClosed() && f.failureCause() == null && f.config().equals(config)) {
      return f;
    }
    if (f != null) {
      f.close();
    }
    f = GpuFeeder.open(new SharedMemoryDevice(), config);
    HOST_FEEDERS.put(rank, f);
    return f;
  }

  /** The feeder that serves {@code rank} now, if any: its GPU's, else its host feeder. */
  public static synchronized Optional<GpuFeeder> existingFeeder(int rank) {
    for (Map.Entry<Integer, Integer> e : GPU_HOLDERS.entrySet()) {
      if (e.getValue() == rank) {
        return GpuFeeders.existing(e.getKey());
      }
    }
    return Optional.ofNullable(HOST_FEEDERS.get(rank)).filter(f -> !f.isClosed());
  }

  /** The feeders serving ranks now (host feeders and the GPUs' held by a rank), for metrics. */
  static synchronized List<GpuFeeder> serving() {
    List<GpuFeeder> list = new ArrayList<>();
    HOST_FEEDERS.values().stream().filter(f -> !f.isClosed()).forEach(list::add);
    GPU_HOLDERS.keySet().forEach(o -> GpuFeeders.existing(o).ifPresent(list::add));
    return list;
  }

  /** {@code rank} is done with its feeder; its GPU may serve another rank. */
  static synchronized void release(int rank) {
    GPU_HOLDERS.values().removeIf(r -> r == rank);
  }

  /** Closes every bridge, then every feeder. Idempotent. */
  public static synchronized void closeAll() {
    BRIDGES.values().forEach(BridgeServer::close);
    BRIDGES.clear();
    HOST_FEEDERS.values().forEach(GpuFeeder::close);
    HOST_FEEDERS.clear();
    GPU_HOLDERS.clear();
    GpuFeeders.closeAll();
  }

  /**
   * On a local master, closes everything ({@link #closeAll()}) when {@code sc} stops: its executor
   * is this JVM, which may live on (a notebook, an application that starts another session), and
   * without this kept the stopped session's bridges, feeders' shared memory, socket files and
   * threads until it exited. Elsewhere executors exit with the application and the shutdown hook
   * closes them. Driver thread; once per context.
   */
  public static synchronized void closeOnStop(SparkContext sc) {
    if (sc.isLocal() && WATCHED.add(sc)) {
      sc.addSparkListener(
          new SparkListener() {
            @Override
            public void onApplicationEnd(SparkListenerApplicationEnd end) {
              closeAll();
            }
          });
    }
  }

  private static void hook() {
    if (!hooked) {
      Runtime.getRuntime()
          .addShutdownHook(new Thread(ExecutorServing::closeAll, "spindle-serving-shutdown"));
      hooked = true;
    }
  }
}
