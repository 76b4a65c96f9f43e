package dev.spindle.spark.serve;

import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.gpu.device.DeviceDiscovery;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * What the serving tasks of {@code feed --serve} need, read once on the driver from the {@code
 * spark.spindle.feed.*} keys. Immutable; any thread.
 *
 * @param device auto, cuda or host
 * @param socketTemplate the bridge socket path, with {@code {user}}, {@code {rank}} and {@code
 *     {pid}} (the serving JVM's) unresolved
 * @param trainerTimeout how long a rank task waits for its trainer (hello, each batch, the end)
 * @param slots ring slots of each feeder
 * @param token this run's token, which every trainer must present (made here, once per run)
 */
public record ServeSettings(
    String device, String socketTemplate, Duration trainerTimeout, int slots, RunToken token)
    implements Serializable {

  /** The settings of a new run, with a new random run token. */
  public static ServeSettings from(Settings conf) {
    return new ServeSettings(
        conf.get(SpindleConfig.FEED_DEVICE),
        conf.get(SpindleConfig.FEED_SOCKET),
        Duration.ofSeconds(conf.get(SpindleConfig.FEED_TRAINER_TIMEOUT)),
        conf.get(SpindleConfig.FEED_SLOTS),
        RunToken.random());
  }

  public DeviceDiscovery.Choice choice() {
    return DeviceDiscovery.Choice.valueOf(device.toUpperCase(Locale.ROOT));
  }

  /** The socket of {@code rank}'s bridge, resolved for the user of the calling JVM. */
  public Path socketFor(int rank) {
    return Path.of(resolve(socketTemplate, System.getProperty("user.name"), rank));
  }

  static String resolve(String template, String user, int rank) {
    return template
        .replace("{user}", user)
        .replace("{rank}", Integer.toString(rank))
        .replace("{pid}", Long.toString(ProcessHandle.current().pid()));
  }
}
