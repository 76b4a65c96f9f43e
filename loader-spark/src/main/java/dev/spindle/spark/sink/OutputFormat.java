package dev.spindle.spark.sink;

import dev.spindle.spark.batch.BatchSchema;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/** The file format of a job's output files, {@code spark.spindle.output.format}. */
public enum OutputFormat {
  /**
   * Arrow IPC file format, the image (when samples have one) as {@code arrow.fixed_shape_tensor}.
   */
  ARROW("arrow", "arrow-ipc-file"),
  /**
   * Parquet, the image (when samples have one) as BINARY pixels, its shape in the key-value
   * metadata.
   */
  PARQUET("parquet", "parquet");

  private final String extension;
  private final String manifestName;

  OutputFormat(String extension, String manifestName) {
    this.extension = extension;
    this.manifestName = manifestName;
  }

  /** The file name extension, without the dot. */
  public String extension() {
    return extension;
  }

  /** The manifest's {@code format}. */
  public String manifestName() {
    return manifestName;
  }

  /** True when {@code fileName} ends in one of the formats' extensions. */
  static boolean isOutputFile(String fileName) {
    for (OutputFormat f : values()) {
      if (fileName.endsWith("." + f.extension)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Opens a sink writing {@code root}'s batches ({@code shape}: {@code height × width × channels}
   * images, or null for batches without an image column).
   */
  public BatchFileSink open(Path path, Configuration conf, VectorSchemaRoot root, int[] shape)
      throws IOException {
    List<Field> fields = root.getSchema().getFields();
    int extras = fields.indexOf(root.getSchema().findField(BatchSchema.INDEX)) + 1;
    return switch (this) {
      case ARROW -> new ArrowFileSink(path, conf, root);
      case PARQUET -> new ParquetFileSink(path, conf, shape, fields.subList(extras, fields.size()));
    };
  }

  /**
   * Parses {@code arrow} or {@code parquet}, any case.
   *
   * @throws IllegalArgumentException saying what is allowed (the caller names the key or flag)
   */
  public static OutputFormat parse(String value) {
    for (OutputFormat f : values()) {
      if (f.extension.equals(value.trim().toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    throw new IllegalArgumentException("must be arrow or parquet");
  }
}
