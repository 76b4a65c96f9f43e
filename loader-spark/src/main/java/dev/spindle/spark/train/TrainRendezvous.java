package dev.spindle.spark.train;

import dev.spindle.gpu.device.DeviceDiscovery;
import dev.spindle.spark.serve.RankServeTask;
import dev.spindle.spark.serve.ServeSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;

/**
 * Where the ranks of a {@code train} run landed, learnt by every rank task in one barrier {@code
 * allGather} (none for a single rank: Spark's sync costs a second, as it looks for the answer once
 * a second): each rank's executor and node, and a free port on rank 0's node for {@code
 * torch.distributed}'s rendezvous. From it each task derives the environment torchrun would give
 * its script ({@link #environment}). Task thread.
 */
final class TrainRendezvous {
  private final int world;
  private final String masterAddr;
  private final int masterPort;
  private final int localRank;
  private final int localWorld;

  private TrainRendezvous(
      int world, String masterAddr, int masterPort, int localRank, int localWorld) {
    this.world = world;
    this.masterAddr = masterAddr;
    this.masterPort = masterPort;
    this.localRank = localRank;
    this.localWorld = localWorld;
  }

  /**
   * Meets the other ranks (every rank task must call it once).
   *
   * @throws IllegalStateException if an executor runs more than {@code nprocPerExecutor} ranks
   */
  static TrainRendezvous meet(BarrierTaskContext ctx, int rank, int nprocPerExecutor) {
    int world = ctx.getTaskInfos().length;
    String host = hostOf(ctx.getTaskInfos()[rank].address());
    String executor = SparkEnv.get() == null ? "?" : SparkEnv.get().executorId();
    String port = rank == 0 ? Integer.toString(freePort()) : "";
    String mine = executor + "\t" + host + "\t" + port;
    // Spark's barrier sync polls its answer once a second: a rank alone learns nothing from it
    String[] all = world == 1 ? new String[] {mine} : ctx.allGather(mine);
    String[][] fields = new String[world][];
    for (int r = 0; r < world; r++) {
      fields[r] = all[r].split("\t", -1);
    }
    int localRank = 0;
    int localWorld = 0;
    Map<String, Integer> perExecutor = new HashMap<>();
    for (int r = 0; r < world; r++) {
      if (fields[r][1].equals(host)) {
        localWorld++;
        localRank += r < rank ? 1 : 0;
      }
      perExecutor.merge(fields[r][0], 1, Integer::sum);
    }
    int most = perExecutor.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    if (nprocPerExecutor > 0 && most > nprocPerExecutor) {
      throw new IllegalStateException(
          "Spark placed "
              + most
              + " ranks on one executor, more"
              + " than --nproc-per-executor "
              + nprocPerExecutor
              + " (spark.spindle.train"
              + ".nprocPerExecutor): placements "
              + perExecutor
              + "; give each executor at most "
              + nprocPerExecutor
              + " task slots (spark.executor.cores / spark.task.cpus)");
    }
    return new TrainRendezvous(
        world, fields[0][1], Integer.parseInt(fields[0][2]), localRank, localWorld);
  }

  int world() {
    return world;
  }

  /** The script's environment: torchrun's variables and Spindle's. */
  Map<String, String> environment(
      int rank,
      TrainInputs in,
      ServeSettings serve,
      TrainSettings train,
      Path stateIn,
      Path stateOut) {
    Map<String, String> env = new HashMap<>();
    env.put("RANK", Integer.toString(rank));
    env.put("LOCAL_RANK", Integer.toString(localRank));
    env.put("WORLD_SIZE", Integer.toString(world));
    env.put("LOCAL_WORLD_SIZE", Integer.toString(localWorld));
    env.put("MASTER_ADDR", masterAddr);
    env.put("MASTER_PORT", Integer.toString(masterPort));
    env.put("SPINDLE_DEVICE", device(rank, serve));
    env.put("SPINDLE_STATE", stateIn.toString());
    env.put("SPINDLE_STATE_OUT", stateOut.toString());
    env.put("SPINDLE_EPOCHS", Integer.toString(in.endEpoch()));
    env.put("SPINDLE_TIMEOUT_S", Long.toString(serve.trainerTimeout().toSeconds()));
    String path = System.getenv("PYTHONPATH");
    env.put("PYTHONPATH", train.clientDir() + (path == null || path.isEmpty() ? "" : ":" + path));
    env.put("PYTHONUNBUFFERED", "1");
    return env;
  }

  /** {@code cuda:N} where the rank's feeder will be on GPU N, else {@code cpu}. */
  private static String device(int rank, ServeSettings serve) {
    int ordinal = RankServeTask.ordinal(rank);
    boolean cuda =
        serve.choice() == DeviceDiscovery.Choice.CUDA
            || (serve.choice() == DeviceDiscovery.Choice.AUTO
                && DeviceDiscovery.cudaAvailable(ordinal));
    return cuda ? "cuda:" + ordinal : "cpu";
  }

  /** {@code host} of a task's {@code host:port} address (an IPv6 literal stays whole). */
  static String hostOf(String address) {
    int colon = address.lastIndexOf(':');
    return colon > 0 && address.indexOf(':') == colon ? address.substring(0, colon) : address;
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("No free port for torch.distributed on rank 0's node", e);
    }
  }
}
