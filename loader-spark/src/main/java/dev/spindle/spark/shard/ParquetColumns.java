package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * Which columns of a Parquet shard hold a sample's parts ({@code spark.spindle.parquet.imageColumn}
 * and {@code spark.spindle.parquet.labelColumn}): top-level column names, matched exactly. The
 * image column is a BINARY column or a struct with a BINARY field {@code bytes} (Hugging Face
 * {@code datasets}: {@code image: {bytes, path}}); the label column an integer column. Immutable;
 * shipped to executors inside {@link Shard}s.
 *
 * @param image the image column's name
 * @param label the label column's name
 */
public record ParquetColumns(String image, String label) implements Serializable {
  /** {@code image} and {@code label}: the names Hugging Face image datasets use. */
  public static final ParquetColumns DEFAULT = new ParquetColumns("image", "label");

  public ParquetColumns {
    if (image == null || image.isBlank()) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.parquet.imageColumn: '" + image + "' (must name a column)");
    }
    if (label == null || label.isBlank()) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.parquet.labelColumn: '" + label + "' (must name a column)");
    }
    if (image.equals(label)) {
      throw new IllegalArgumentException(
          "Invalid Parquet columns: the image and label columns"
              + " are both '"
              + image
              + "' (spark.spindle.parquet.imageColumn, …labelColumn)");
    }
  }
}
