package dev.spindle.spark.shard;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * Which columns of a Parquet shard hold a sample's parts ({@code spark.spindle.parquet.imageColumn}
 * and {@code spark.spindle.parquet.labelColumn}): top-level column names, matched exactly. The
 * image column is a BINARY column or a struct with a BINARY field {@code bytes} (Hugging Face
 * {@code datasets}: {@code image: {bytes, path}}); the label column an integer column. Immutable;
 * shipped to executors inside {@link Shard}s.
 *
 * <p>A job whose declared fields ({@code spark.spindle.fields}) have no {@code image} or no {@code
 * label} reads no such column: that part is null, and a file need not have it.
 *
 * @param image the image column's name, or null when samples have no image
 * @param label the label column's name, or null when samples have no label
 */
public record ParquetColumns(String image, String label) implements Serializable {
  /** {@code image} and {@code label}: the names Hugging Face image datasets use. */
  public static final ParquetColumns DEFAULT = new ParquetColumns("image", "label");

  public ParquetColumns {
    if (image != null && image.isBlank()) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.parquet.imageColumn: '" + image + "' (must name a column)");
    }
    if (label != null && label.isBlank()) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.parquet.labelColumn: '" + label + "' (must name a column)");
    }
    if (image != null && image.equals(label)) {
      throw new IllegalArgumentException(
          "Invalid Parquet columns: the image and label columns"
              + " are both '"
              + image
              + "' (spark.spindle.parquet.imageColumn, …labelColumn)");
    }
  }

  /** The columns read, for messages: {@code image, label}, or those of them there are. */
  @Override
  public String toString() {
    List<String> read = new ArrayList<>();
    if (image != null) {
      read.add(image);
    }
    if (label != null) {
      read.add(label);
    }
    return read.isEmpty() ? "(neither image nor label)" : String.join(", ", read);
  }
}
