package dev.spindle.spark.sql;

import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.manifest.ShardCatalog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code spindle} data source: {@code spark.read.format("spindle").option(...).load(uri)} over
 * anything {@code preprocess} reads, as decoded images or (with {@code decode=false}) the image
 * files' bytes, or one epoch of a weighted mixture in plan order (option {@code mix}, {@code
 * load()} without a path; {@link MixInputPartition}); see {@link ScanSchema} for the columns and
 * {@link ScanOptions} for the options. Registered as a {@link DataSourceRegister} service, so the
 * jar on the classpath is all it needs; {@link SpindleExtensions} adds {@code SELECT ... FROM
 * spindle.`uri`}. Spark instantiates it by name, on the driver; stateless.
 */
public final class SpindleDataSource implements TableProvider, DataSourceRegister {
  /** The format name. */
  public static final String NAME = "spindle";

  @Override
  public String shortName() {
    return NAME;
  }

  /**
   * The columns; the first call Spark makes, so an unknown option or an invalid value fails here
   * (for {@code CREATE TABLE ... USING spindle}, when the table is created).
   */
  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    Map<String, String> session =
        scala.jdk.javaapi.CollectionConverters.asJava(SparkSession.active().conf().getAll());
    ScanOptions.check(options.asCaseSensitiveMap(), session);
    CaseInsensitiveStringMap given =
        new CaseInsensitiveStringMap(ScanOptions.given(options.asCaseSensitiveMap()));
    FieldSet fields = ScanOptions.fields(options.asCaseSensitiveMap(), session);
    return ScanSchema.of(
        ScanOptions.decode(given.get(ScanOptions.DECODE)),
        fields.hasImage(),
        fields.extras(),
        ScanOptions.mixed(options.asCaseSensitiveMap(), session));
  }

  /**
   * Resolves the options against the session's configuration; an unknown option, an invalid value,
   * a missing input or a malformed brace pattern fails here, before any task runs. A catalog
   * table's unknown option fails when a query reads the table ({@link ScanOptions#catalogTable}).
   */
  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> options) {
    SparkSession spark = SparkSession.active();
    Map<String, String> session =
        scala.jdk.javaapi.CollectionConverters.asJava(spark.conf().getAll());
    ScanSettings settings =
        ScanOptions.resolve(options, session, spark.sparkContext().hadoopConfiguration());
    if (settings.mix() == null) {
      requireInput(spark, settings.input());
    } else {
      settings.mix().spec().uris().forEach(uri -> requireInput(spark, uri));
    }
    return new SpindleTable(
        settings, ScanOptions.catalogTable(options) ? ScanOptions.refusal(options, session) : null);
  }

  /**
   * As {@code preprocess} checks it: the input exists or, for a brace pattern, is well formed (the
   * files it names are checked when they are counted; nothing is listed).
   */
  private static void requireInput(SparkSession spark, String input) {
    try {
      ShardCatalog.requireInput(spark.sparkContext().hadoopConfiguration(), input);
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }
}
