package dev.spindle.spark.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** The flags every Spark job takes: where it runs and its Spark settings. */
final class SparkOptions {
  @Option(
      names = "--master",
      paramLabel = "URL",
      description =
          "Spark master (default: embedded local[*] on 127.0.0.1; local-cluster[N,C,MB]"
              + " starts N executor JVMs)")
  String master;

  @Option(
      names = "--conf",
      paramLabel = "KEY=VALUE",
      description = "A Spark or spark.spindle.* setting (repeatable); wins over --properties-file")
  Map<String, String> conf = new LinkedHashMap<>();

  @Option(
      names = "--no-ui",
      description =
          "No Spark UI (spark.ui.enabled=false; bin/spindle starts it by default, in"
              + " local mode on 127.0.0.1, and prints its address)")
  boolean noUi;

  @Option(
      names = "--properties-file",
      paramLabel = "FILE",
      description = "spark.* settings as spark-submit reads them (e.g. conf/examples/*.conf)")
  Path propertiesFile;
}
