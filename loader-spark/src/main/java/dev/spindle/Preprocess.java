package dev.spindle;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.preprocess.PreprocessJob;
import java.io.IOException;
import org.apache.spark.sql.SparkSession;

/**
 * Builds and runs one {@code preprocess} job: every shard under the input is read, decoded,
 * transformed to uint8 images and written as Arrow IPC (or Parquet) files plus {@code
 * _manifest.json}, committed only if the job succeeds within its failure budget. Calls read in the
 * order the data flows:
 *
 * <pre>{@code
 * PreprocessReport report = Spindle.preprocess(spark)
 *     .input("hdfs:///data/shards")                    // .tar shards or ROOT/<class>/<image>
 *     .transforms("resize(256),center_crop(224)")      // spark.spindle.image.transforms
 *     .output("hdfs:///data/arrow").format("arrow")    // or "parquet"
 *     .overwrite(true)
 *     .run();
 * }</pre>
 *
 * <p>Settings not given here come from the session's {@code spark.spindle.*} configuration, then
 * the keys' defaults; those given here apply to this job only. One thread uses a builder; {@link
 * #run} may be called more than once (each call is a new job).
 */
public final class Preprocess extends ImageJob<Preprocess> {
  private String output;
  private boolean overwrite;

  Preprocess(SparkSession spark) {
    super(spark);
  }

  /** Where the Arrow files and {@code _manifest.json} go: a Hadoop FileSystem URI. */
  public Preprocess output(String uri) {
    this.output = Uris.require("output", uri);
    return this;
  }

  /**
   * The output files' format: {@code arrow} (Arrow IPC, the default) or {@code parquet} ({@code
   * spark.spindle.output.format}).
   */
  public Preprocess format(String format) {
    return with(SpindleConfig.OUTPUT_FORMAT, format);
  }

  /** Replace output a former job committed there (default: refuse it). */
  public Preprocess overwrite(boolean overwrite) {
    this.overwrite = overwrite;
    return this;
  }

  /**
   * Runs the job on the calling thread and returns its report, which the caller owns.
   *
   * @throws IllegalArgumentException before any Spark work, for a missing input or output or a
   *     setting that is not allowed
   * @throws IOException when the input cannot be listed or the output cannot be written
   * @throws RuntimeException when the job fails (a task, the failure budget); nothing is committed
   */
  public PreprocessReport run() throws IOException {
    Uris.present("input", input, "preprocess");
    Uris.present("output", output, "preprocess");
    Settings conf = checkedConf();
    return new PreprocessReport(PreprocessJob.run(spark, input, output, overwrite, conf));
  }
}
