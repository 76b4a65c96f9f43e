package dev.spindle.spark.cli;

import dev.spindle.PreprocessReport;
import dev.spindle.Spindle;
import dev.spindle.spark.example.GenSample;
import dev.spindle.spark.metrics.JobReport;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.hadoop.conf.Configuration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code demo}: generates a sample (without {@code --input}) and preprocesses it. Its default
 * output is its own scratch folder, replaced on every run; a given {@code --output} is replaced
 * only with {@code --overwrite}, as for {@code preprocess}. Main thread.
 */
@Command(
    name = "demo",
    header = "Generate a sample dataset and preprocess it on embedded Spark.",
    mixinStandardHelpOptions = true,
    resourceBundle = KeyDefaults.NAME,
    sortOptions = false,
    description = {
      "Generates a sample dataset (when no --input) under $TMPDIR/spindle-demo,"
          + " preprocesses it on Spark and prints the summary."
    })
final class DemoCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--input",
      paramLabel = "DIR",
      description = "Shards to preprocess (default: a generated sample)")
  String input;

  @Option(
      names = "--output",
      paramLabel = "DIR",
      description =
          "Where the Arrow output goes (default: $TMPDIR/spindle-demo/arrow, replaced"
              + " on each run)")
  String output;

  @Option(names = "--overwrite", description = "Replace output a former job committed at --output")
  boolean overwrite;

  @Mixin ImageFlags image;
  @Mixin ReportOption report;
  @Mixin SparkOptions spark;

  @Override
  public Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    JobConf conf = JobConf.of(spark, cl);
    image.putInto(conf);
    Map<String, String> settings = conf.checked(cl);
    Preflight.of(settings).localFile("--report", report.file);
    Path work = Path.of(System.getProperty("java.io.tmpdir"), "spindle-demo");
    String in = input != null ? input : sample(cl, work.resolve("sample"));
    String out = output != null ? output : work.resolve("arrow").toUri().toString();
    PreprocessReport r =
        Jobs.run(
            cl,
            "demo",
            spark.master,
            settings,
            check -> check.input(in).output(out, overwrite || output == null),
            session ->
                Spindle.preprocess(session)
                    .input(in)
                    .output(out)
                    .overwrite(overwrite || output == null)
                    .run());
    Map<String, Object> fields = new LinkedHashMap<>(r.fields());
    fields.put("command", "demo");
    report.write(r);
    Jobs.summary(cl, fields);
    return 0;
  }

  /** Generates the demo's sample under {@code dir}, prints its summary, returns its URI. */
  private static String sample(CommandLine cl, Path dir) throws Exception {
    String uri = dir.toUri().toString();
    JobReport gen =
        GenSample.run(new GenSample.Options(uri, 4, 64, 320, 240, 0), new Configuration());
    Jobs.summary(cl, gen.fields());
    return uri;
  }
}
