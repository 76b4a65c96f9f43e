package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import picocli.CommandLine.Option;

/**
 * The trainer bridge's flags, which {@code feed --serve} and {@code train} share: the feeders'
 * device, the bridge socket and how long a rank waits for its trainer.
 */
final class BridgeFlags {
  @Option(
      names = "--device",
      paramLabel = "auto|host|cuda",
      description =
          "The feeders' device (spark.spindle.feed.device; default"
              + " ${bundle:spark.spindle.feed.device})")
  String device;

  @Option(
      names = "--socket",
      paramLabel = "PATH",
      description =
          "The bridge socket; may hold {user}, {rank}, {pid} (spark.spindle.feed.socket;"
              + " default for feed ${bundle:spark.spindle.feed.socket}, for train one per executor JVM,"
              + " /tmp/spindle-{user}/train-{pid}.sock)")
  String socket;

  @Option(
      names = "--trainer-timeout",
      paramLabel = "SECONDS",
      description =
          "How long a rank waits for its trainer to say hello, take a batch, finish;"
              + " train kills a trainer past it (spark.spindle.feed.trainerTimeoutSeconds; default"
              + " ${bundle:spark.spindle.feed.trainerTimeoutSeconds})")
  String trainerTimeout;

  /** The first of these flags given, or null when none was. */
  String firstGiven() {
    return device != null
        ? "--device"
        : socket != null ? "--socket" : trainerTimeout != null ? "--trainer-timeout" : null;
  }

  void putInto(JobConf conf) {
    conf.flag("--device", device, SpindleConfig.FEED_DEVICE.key());
    conf.flag("--socket", socket, SpindleConfig.FEED_SOCKET.key());
    conf.flag("--trainer-timeout", trainerTimeout, SpindleConfig.FEED_TRAINER_TIMEOUT.key());
  }
}
