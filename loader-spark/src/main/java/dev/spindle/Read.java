package dev.spindle;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Reads shards as a DataFrame through Spindle's DataSource V2, format {@code spindle}: the same as
 * {@code spark.read().format("spindle").option(...).load(uri)}, which also works from Scala, SQL
 * and PySpark by the format name alone.
 *
 * <pre>{@code
 * Dataset<Row> rows = Spindle.read(spark).option("spark.spindle.image.size", "224").load(uri);
 * }</pre>
 *
 * <p>Options apply to this read only, never to the session. One thread uses a builder; the returned
 * Dataset is the caller's, lazy like any other (nothing is read until an action).
 */
public final class Read {
  /** The DataSource V2 short name. */
  public static final String FORMAT = "spindle";

  private final SparkSession spark;
  private final Map<String, String> options = new LinkedHashMap<>();

  Read(SparkSession spark) {
    this.spark = spark;
  }

  /** One option of the {@code spindle} data source (see the README). */
  public Read option(String key, String value) {
    options.put(key, value);
    return this;
  }

  /**
   * The fields of a sample (the option {@code fields}, {@code spark.spindle.fields}): e.g. {@code
   * image=jpg,caption=txt,label=cls} reads each tar sample's caption into a {@code caption} column
   * after {@code index}.
   */
  public Read fields(String declaration) {
    return option("fields", declaration);
  }

  /** Several options at once; later calls win. */
  public Read options(Map<String, String> more) {
    options.putAll(more);
    return this;
  }

  /**
   * The shards under {@code uri} as a DataFrame; for a {@code preprocess} output folder, its stored
   * rows as they are.
   */
  public Dataset<Row> load(String uri) {
    return spark.read().format(FORMAT).options(options).load(Uris.require("uri", uri));
  }
}
