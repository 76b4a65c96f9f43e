package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code feed --serve} and the flags that configure the trainer bridge, which need it. */
final class ServeFlags {
  @Option(
      names = "--serve",
      description =
          "Serve each rank's batches to its PyTorch trainer (spark.spindle.feed.serve);"
              + " --device, --socket and --trainer-timeout need it")
  boolean serve;

  @Mixin BridgeFlags bridge;

  /**
   * Puts the serving settings into {@code conf}.
   *
   * @throws ParameterException for a bridge flag without {@code --serve}, or {@code --partitions}
   *     with it
   */
  void putInto(JobConf conf, boolean partitions, CommandLine cl) {
    if (!serve) {
      String given = bridge.firstGiven();
      if (given != null) {
        throw new ParameterException(
            cl, given + " needs --serve (it configures the trainer" + " bridge)");
      }
      return;
    }
    if (partitions) {
      throw new ParameterException(
          cl, "--partitions does not apply with --serve: serving runs" + " one task per rank");
    }
    conf.flag("--serve", "true", SpindleConfig.FEED_SERVE.key());
    bridge.putInto(conf);
  }
}
