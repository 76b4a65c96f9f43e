package dev.spindle.spark.cli;

import picocli.CommandLine.Option;

/**
 * Which parts of a sample a job reads: the fields it declares, and which columns of a Parquet input
 * hold the encoded image and the label.
 */
final class ColumnFlags {
  static final String FIELDS_KEY = "spark.spindle.fields";

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

  @Option(
      names = "--fields",
      paramLabel = "NAME=SOURCE[:TYPE],...",
      description =
          "The fields of a sample, e.g. image=jpg,caption=txt,label=cls: SOURCE a tar member's"
              + " extension or a Parquet column, TYPE image, int32, int64, float32, float64,"
              + " string, bytes, list<int32>, list<int64> or list<float32> ("
              + FIELDS_KEY
              + "; default: image and label)")
  String fields;

  void putInto(JobConf conf) {
    conf.flag("--fields", fields, FIELDS_KEY);
    conf.flag("--image-column", imageColumn, IMAGE_COLUMN_KEY);
    conf.flag("--label-column", labelColumn, LABEL_COLUMN_KEY);
  }
}
