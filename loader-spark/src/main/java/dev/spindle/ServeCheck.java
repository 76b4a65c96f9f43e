package dev.spindle;

import dev.spindle.spark.config.ConfigKey;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import java.util.List;

/** Refuses serving settings without serving, and partitions with it, before any work. */
final class ServeCheck {
  private static final List<ConfigKey<?>> SERVE_ONLY =
      List.of(
          SpindleConfig.FEED_DEVICE, SpindleConfig.FEED_SOCKET, SpindleConfig.FEED_TRAINER_TIMEOUT);

  private ServeCheck() {}

  /** {@code conf}: everything the run sees; {@code job}: what its builder set. */
  static void check(Settings conf, JobSettings job) {
    if (conf.get(SpindleConfig.FEED_SERVE)) {
      if (job.has(SpindleConfig.FEED_PARTITIONS)) {
        throw new IllegalArgumentException(
            "partitions does not apply when serving: serving runs" + " one task per rank");
      }
      return;
    }
    for (ConfigKey<?> k : SERVE_ONLY) {
      if (job.has(k)) {
        throw new IllegalArgumentException(
            k.key() + " needs serve() (it configures the trainer" + " bridge)");
      }
    }
  }
}
