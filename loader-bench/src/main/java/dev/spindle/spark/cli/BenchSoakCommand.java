package dev.spindle.spark.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.spindle.spark.soak.SoakBench;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code bench soak}: {@link SoakBench}, resource growth over many served epochs. Main thread. */
@Command(
    name = "soak",
    header = "Serve two trainers for many epochs and report what grows.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "feed --serve on the host device with two Python trainers over a generated"
            + " dataset, sampling the JVM's RSS, heap after GC, direct and Arrow bytes, threads,"
            + " open files, /dev/shm files and the trainers' RSS every few seconds and at each"
            + " epoch's end; reports each series' growth per epoch after the first and what was left"
            + " once the session stopped (docs/reliability.md).")
final class BenchSoakCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--epochs",
      paramLabel = "E",
      converter = Converters.PositiveInt.class,
      description = "Epochs, at least 2 (default ${DEFAULT-VALUE})")
  int epochs = 20;

  @Option(
      names = "--interval",
      paramLabel = "SECONDS",
      converter = Converters.PositiveDouble.class,
      description = "Seconds between samples (default ${DEFAULT-VALUE})")
  double interval = 2;

  @Option(
      names = "--per-shard",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Samples per shard of the 4 generated shards (default ${DEFAULT-VALUE})")
  int perShard = 256;

  @Option(
      names = "--python",
      paramLabel = "EXE",
      description = "The trainers' Python, with torch (default ${DEFAULT-VALUE})")
  String python = "/usr/bin/python3";

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    SoakBench.Options options;
    try {
      options = new SoakBench.Options(epochs, interval, 4, perShard, python);
    } catch (IllegalArgumentException e) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    Map<String, Object> r =
        SoakBench.run(
            options, () -> Jobs.session(spec.commandLine(), "bench soak", "local[4]", Map.of()));
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(r);
    if (report.file != null) {
      Files.createDirectories(report.file.toAbsolutePath().getParent());
      Files.writeString(report.file, json + "\n");
    }
    spec.commandLine().getOut().println(SoakBench.summary(r));
    return 0;
  }
}
