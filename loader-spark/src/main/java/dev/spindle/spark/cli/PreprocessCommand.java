package dev.spindle.spark.cli;

import dev.spindle.PreprocessReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.SpindleConfig;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code preprocess}: {@link Spindle#preprocess} on a session of its own. Main thread. */
@Command(
    name = "preprocess",
    header = "Decode and transform shards into Arrow IPC or Parquet files.",
    mixinStandardHelpOptions = true,
    resourceBundle = KeyDefaults.NAME,
    sortOptions = false,
    description = {
      "Reads every shard under --input, decodes (JPEG, PNG, WebP, BMP, TIFF, PNM, GIF),"
          + " resizes the short side"
          + " and centre-crops to --size, writes Arrow IPC (or with --format parquet, Parquet)"
          + " files plus _manifest.json to --output,"
          + " committed only if the job succeeds within its failure budget."
    })
final class PreprocessCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--input",
      required = true,
      paramLabel = "URI",
      description =
          "Shards (a .tar or .parquet file, a folder of them, a brace pattern, an"
              + " image folder tree) or a preprocess output folder (its _manifest.json)")
  String input;

  @Option(
      names = "--output",
      required = true,
      paramLabel = "URI",
      description = "Where the Arrow files and _manifest.json go")
  String output;

  @Option(names = "--overwrite", description = "Replace output a former job committed there")
  boolean overwrite;

  @Option(
      names = "--format",
      paramLabel = "arrow|parquet",
      description = "Output files: Arrow IPC or Parquet (spark.spindle.output.format)")
  String format;

  @Mixin ImageFlags image;
  @Mixin ColumnFlags columns;
  @Mixin ProgressFlags progress;
  @Mixin ReportOption report;
  @Mixin TraceOption trace;
  @Mixin SparkOptions spark;

  @Override
  public Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    JobConf conf = JobConf.of(spark, cl);
    image.putInto(conf);
    columns.putInto(conf);
    trace.putInto(conf);
    conf.flag("--format", format, SpindleConfig.OUTPUT_FORMAT.key());
    Map<String, String> settings = conf.checked(cl);
    PreprocessReport r =
        Jobs.run(
            cl,
            "preprocess",
            spark,
            progress,
            settings,
            check ->
                check.input(input).output(output, overwrite).localFile("--report", report.file),
            session ->
                Spindle.preprocess(session).input(input).output(output).overwrite(overwrite).run());
    report.write(r);
    Jobs.summary(cl, r.fields(), report, List.of());
    return 0;
  }
}
