package dev.spindle;

import dev.spindle.spark.config.ConfigKey;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import org.apache.spark.sql.SparkSession;

/**
 * What the builders of the jobs that read images share ({@link Preprocess}, {@link Feed}): the
 * input and the image settings, each for this job only, on top of the session's {@code
 * spark.spindle.*} configuration. Only this package extends it. One thread uses a builder.
 *
 * @param <B> the builder itself, which every setter returns
 */
public abstract class ImageJob<B extends ImageJob<B>> {
  final SparkSession spark;
  final JobSettings settings;
  String input;

  ImageJob(SparkSession spark) {
    this.spark = spark;
    this.settings = new JobSettings(spark);
  }

  /**
   * The dataset: a Hadoop FileSystem URI of shards ({@code .tar}, {@code .parquet}, a brace
   * pattern, an image folder tree), or a {@code preprocess} output folder, whose stored rows are
   * taken as they are, without decoding (to change its format or batch size, or to feed it; image
   * settings, if given, must match them).
   */
  public B input(String uri) {
    this.input = Uris.require("input", uri);
    return self();
  }

  /**
   * The transform chain, as {@code spark.spindle.image.transforms} (e.g. {@code
   * resize(256),center_crop(224)}); the output must stay uint8.
   */
  public B transforms(String spec) {
    return with(SpindleConfig.IMAGE_TRANSFORMS, spec);
  }

  /** The output side for the default chain, as {@code spark.spindle.image.size}. */
  public B size(int pixels) {
    return with(SpindleConfig.IMAGE_SIZE, pixels);
  }

  /**
   * The fields of a sample, as {@code spark.spindle.fields}: comma-separated {@code
   * NAME=SOURCE[:TYPE]}, e.g. {@code image=jpg,caption=txt,label=cls}; each extra field (neither
   * {@code image} nor {@code label}) is a column of its own after {@code index}. Checked now.
   */
  public B fields(String declaration) {
    return with(SpindleConfig.FIELDS, declaration);
  }

  /** Rows per batch (an Arrow record batch), as {@code spark.spindle.batchSize}. */
  public B batchSize(int rows) {
    return with(SpindleConfig.BATCH_SIZE, rows);
  }

  /**
   * At most this many of the executor's CPU threads per task, as {@code spark.spindle.threads} (the
   * executor-wide pool itself is sized by the session's setting); the same rule for every job
   * ({@code dev.spindle.spark.samples.SampleSettings#threadsPerTask}).
   */
  public B threads(int threads) {
    return with(SpindleConfig.THREADS, threads);
  }

  /**
   * Any {@code spark.spindle.*} setting for this job only (see the README's key table); an unknown
   * key is refused naming the closest one, unless {@code spark.spindle.allowUnknownKeys} is true.
   */
  public B set(String key, String value) {
    settings.set(key, value);
    return self();
  }

  /** Sets {@code key} for this job, checking the value now. */
  B with(ConfigKey<?> key, Object value) {
    settings.set(key, value);
    return self();
  }

  /**
   * What the job runs with: the session's settings, then this job's, checked together and parsed
   * once.
   *
   * @throws IllegalArgumentException before any Spark work, for a setting that is not allowed or an
   *     unknown {@code spark.spindle.*} key (also one of the session's)
   */
  Settings checkedConf() {
    return Settings.of(settings.merged());
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }
}
