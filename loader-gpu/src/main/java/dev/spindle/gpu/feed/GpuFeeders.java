package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.DeviceDiscovery;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JVM-wide registry of feeders: at most one per device ordinal, created lazily by the first
 * caller (e.g. the first task of the {@code feed} job on an executor) and shared by every later
 * caller in the JVM. Pick the ordinal with {@code GpuAssignment} from Spark's task resources.
 *
 * <p>Threads: any; creation of one ordinal's feeder happens once even under contention. Owner: the
 * registry owns the feeders; callers must not close them directly but call {@link #close(int)} or
 * {@link #closeAll()} (e.g. from an executor shutdown hook).
 */
public final class GpuFeeders {
  private static final Map<Integer, GpuFeeder> FEEDERS = new ConcurrentHashMap<>();

  private GpuFeeders() {}

  /**
   * The feeder for {@code ordinal}, created on first use with {@code choice} and {@code config}. A
   * feeder that was closed or has failed is replaced by a new one (the failed one is closed; its
   * holders keep seeing its failure and must call {@code get} again).
   *
   * @throws IllegalStateException if the existing feeder was created with another config
   */
  public static GpuFeeder get(int ordinal, DeviceDiscovery.Choice choice, FeederConfig config) {
    GpuFeeder[] replaced = new GpuFeeder[1];
    GpuFeeder f =
        FEEDERS.compute(
            ordinal,
            (k, existing) -> {
              if (existing != null && !existing.isClosed() && existing.failureCause() == null) {
                return existing;
              }
              replaced[0] = existing;
              return GpuFeeder.open(choice, ordinal, config);
            });
    if (replaced[0] != null) {
      replaced[0].close();
    }
    if (!f.config().equals(config)) {
      throw new IllegalStateException(
          "Feeder for device "
              + ordinal
              + " already exists with "
              + f.config()
              + "; requested "
              + config);
    }
    return f;
  }

  /** The live feeder for {@code ordinal}, if one was created and not closed. */
  public static Optional<GpuFeeder> existing(int ordinal) {
    return Optional.ofNullable(FEEDERS.get(ordinal)).filter(f -> !f.isClosed());
  }

  /** Closes and forgets the feeder for {@code ordinal}, if any. */
  public static void close(int ordinal) {
    GpuFeeder f = FEEDERS.remove(ordinal);
    if (f != null) {
      f.close();
    }
  }

  /** Closes and forgets every feeder. */
  public static void closeAll() {
    for (Integer ordinal : FEEDERS.keySet()) {
      close(ordinal);
    }
  }
}
