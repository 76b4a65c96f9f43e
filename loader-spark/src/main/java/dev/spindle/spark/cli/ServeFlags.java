package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code feed --serve} and the flags that configure the trainer bridge, which need it. */
final class ServeFlags {
  @Option(names = "--serve",
      description = "Serve each rank's batches to its PyTorch trainer (spark.spindle.feed.serve)")
  boolean serve;

  @Option(names = "--device", paramLabel = "auto|host|cuda",
      description = "With --serve: the feeders' device (spark.spindle.feed.device; default"
          + " ${bundle:spark.spindle.feed.device})")
  String device;

  @Option(names = "--socket", paramLabel = "PATH",
      description = "With --serve: the bridge socket; may hold {user} and {rank}"
          + " (spark.spindle.feed.socket; default ${bundle:spark.spindle.feed.socket})")
  String socket;

  @Option(names = "--trainer-timeout", paramLabel = "SECONDS",
      description = "With --serve: how long a rank waits for its trainer"
          + " (spark.spindle.feed.trainerTimeoutSeconds; default"
          + " ${bundle:spark.spindle.feed.trainerTimeoutSeconds})")
  String trainerTimeout;

  /**
   * Puts the serving settings into {@code conf}.
   *
   * @throws ParameterException for a bridge flag without {@code --serve}, or {@code
   *     --partitions} with it
   */
  void putInto(JobConf conf, boolean partitions, CommandLine cl) {
    if (!serve) {
      String[][] needServe = {{"--device", device}, {"--socket", socket},
          {"--trainer-timeout", trainerTimeout}};
      for (String[] f : needServe) {
        if (f[1] != null) {
          throw new ParameterException(cl, f[0] + " needs --serve (it configures the trainer"
              + " bridge)");
        }
      }
      return;
    }
    if (partitions) {
      throw new ParameterException(cl, "--partitions does not apply with --serve: serving runs"
          + " one task per rank");
    }
    conf.flag("--serve", "true", SpindleConfig.FEED_SERVE.key());
    conf.flag("--device", device, SpindleConfig.FEED_DEVICE.key());
    conf.flag("--socket", socket, SpindleConfig.FEED_SOCKET.key());
    conf.flag("--trainer-timeout", trainerTimeout, SpindleConfig.FEED_TRAINER_TIMEOUT.key());
  }
}
