package dev.spindle;

import java.util.Objects;
import org.apache.spark.sql.SparkSession;

/**
 * The entry point of Spindle's public API: one builder per job, each on the caller's {@link
 * SparkSession}.
 *
 * <pre>{@code
 * PreprocessReport r = Spindle.preprocess(spark)
 *     .input("s3a://bucket/shards").transforms("resize(256),center_crop(224)")
 *     .output("s3a://bucket/arrow").overwrite(true)
 *     .run();
 * FeedReport f = Spindle.feed(spark)
 *     .input("s3a://bucket/shards").worldSize(4).batchSize(64).seed(7).epochs(2)
 *     .run();
 * Dataset<Row> rows = Spindle.read(spark).option("spark.spindle.image.size", "224")
 *     .load("s3a://bucket/shards");
 * }</pre>
 *
 * <p>Spindle never stops the session and never changes its configuration; see the package
 * documentation for settings, threads and errors. Any thread; each call returns a new builder,
 * which the caller owns.
 */
public final class Spindle {
  private Spindle() {}

  /** A new preprocess job on {@code spark}: shards in, Arrow IPC files and a manifest out. */
  public static Preprocess preprocess(SparkSession spark) {
    return new Preprocess(session(spark));
  }

  /** A new feed job on {@code spark}: epoch plans run on Spark, every rank's batches delivered. */
  public static Feed feed(SparkSession spark) {
    return new Feed(session(spark));
  }

  /** A reader of shards as a DataFrame through the {@code spindle} data source. */
  public static Read read(SparkSession spark) {
    return new Read(session(spark));
  }

  private static SparkSession session(SparkSession spark) {
    return Objects.requireNonNull(spark, "spark (the caller's SparkSession)");
  }
}
