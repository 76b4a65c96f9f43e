package dev.spindle.spark.cli;

import picocli.CommandLine.Option;

/** Which columns of a Parquet input hold the encoded image and the label. */
final class ColumnFlags {
  static final String IMAGE_COLUMN_KEY = "spark.spindle.parquet.imageColumn";
  static final String LABEL_COLUMN_KEY = "spark.spindle.parquet.labelColumn";

  @Option(
      names = "--image-column",
      paramLabel = "NAME",
      description =
          "Parquet input: the binary column holding each encoded image (" + IMAGE_COLUMN_KEY + ")")
  String imageColumn;

  @Option(
      names = "--label-column",
      paramLabel = "NAME",
      description =
          "Parquet input: the integer column holding each label (" + LABEL_COLUMN_KEY + ")")
  String labelColumn;

  void putInto(JobConf conf) {
    conf.flag("--image-column", imageColumn, IMAGE_COLUMN_KEY);
    conf.flag("--label-column", labelColumn, LABEL_COLUMN_KEY);
  }
}
