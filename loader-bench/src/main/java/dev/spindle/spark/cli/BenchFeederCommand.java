package dev.spindle.spark.cli;

import dev.spindle.gpu.device.DeviceDiscovery;
import dev.spindle.gpu.device.ElementType;
import dev.spindle.gpu.feed.FeederBench;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code bench feeder}: {@link FeederBench}, host-to-device bandwidth through the ring. */
@Command(
    name = "feeder",
    header = "Host-to-device bandwidth through the prefetch ring.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Sustained host-to-device bandwidth through the prefetch ring against a bare"
            + " copy loop on the same device, and a consumer's wait per batch.")
final class BenchFeederCommand implements Callable<Integer> {
  @Option(
      names = "--device",
      paramLabel = "auto|cuda|host",
      description = "The device (default ${DEFAULT-VALUE})")
  DeviceDiscovery.Choice device = DeviceDiscovery.Choice.AUTO;

  @Option(
      names = "--seconds",
      paramLabel = "S",
      converter = Converters.PositiveDouble.class,
      description = "Seconds per measurement (default ${DEFAULT-VALUE})")
  double seconds = 4;

  @Option(
      names = "--batch",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Images per batch (default ${DEFAULT-VALUE})")
  int batch = 64;

  @Option(
      names = "--slots",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Ring slots (default ${DEFAULT-VALUE})")
  int slots = 8;

  @Option(
      names = "--size",
      paramLabel = "PIXELS",
      converter = Converters.PositiveInt.class,
      description = "Image side (default ${DEFAULT-VALUE})")
  int size = 224;

  @Option(
      names = "--producers",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Producer threads (default ${DEFAULT-VALUE})")
  int producers = 2;

  @Option(
      names = "--dtype",
      paramLabel = "uint8|float16|float32",
      description = "Normalised element type on the device (default ${DEFAULT-VALUE})")
  ElementType dtype = ElementType.FLOAT16;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    FeederBench.run(
        new FeederBench.Options(
            device, report.file, seconds, batch, slots, size, producers, dtype));
    return 0;
  }
}
