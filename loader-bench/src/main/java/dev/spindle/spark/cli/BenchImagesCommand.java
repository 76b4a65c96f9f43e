package dev.spindle.spark.cli;

import dev.spindle.spark.image.ImageBench;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code bench images}: {@link ImageBench}, decode and transform throughput. Main thread. */
@Command(
    name = "images",
    header = "Decode and transform throughput.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Decodes and transforms every image under --input in shuffled epochs into"
            + " float32 CHW batches, as a training loop would take them.")
final class BenchImagesCommand implements Callable<Integer> {
  /** The loaders to compare. */
  enum Engine {
    pipeline,
    pool
  }

  @Option(
      names = "--input",
      required = true,
      paramLabel = "DIR",
      description = "Image files or tar shards")
  Path input;

  @Option(
      names = "--threads",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Decode threads (default: the cores)")
  int threads = Runtime.getRuntime().availableProcessors();

  @Option(
      names = "--batch-size",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Rows per batch (default ${DEFAULT-VALUE})")
  int batchSize = 64;

  @Option(
      names = "--epochs",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Epochs; the first is the warm-up (default ${DEFAULT-VALUE})")
  int epochs = 3;

  @Option(
      names = "--seed",
      paramLabel = "S",
      converter = Converters.AnyLong.class,
      description = "Shuffle seed (default ${DEFAULT-VALUE})")
  long seed;

  @Option(
      names = "--transforms",
      paramLabel = "SPEC",
      description = "Transform chain (default ${DEFAULT-VALUE})")
  String transforms = "resize(256),center_crop(224),normalize";

  @Option(
      names = "--engine",
      paramLabel = "pipeline|pool",
      description = "Spindle's executor engine or a plain thread pool (default ${DEFAULT-VALUE})")
  Engine engine = Engine.pipeline;

  @Option(
      names = "--reduced-decode",
      description =
          "Decode JPEGs at 1/2, 1/4 or 1/8 scale (DCT domain) where the first resize"
              + " shrinks that much: faster, values differ slightly from torchvision (default: off)")
  boolean reducedDecode;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    ImageBench.run(
        new ImageBench.Options(
            input,
            threads,
            batchSize,
            epochs,
            seed,
            transforms,
            engine.name(),
            reducedDecode,
            report.file));
    return 0;
  }
}
