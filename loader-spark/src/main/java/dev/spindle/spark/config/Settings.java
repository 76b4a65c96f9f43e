package dev.spindle.spark.config;

import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.SampleLimits;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A job's {@code spark.spindle.*} settings, parsed once on the driver: every key of {@link
 * SpindleConfig} has its typed value (the one given, else its default), read by {@link #get}
 * without parsing again. Jobs turn it into the records their tasks carry ({@code
 * PreprocessSettings}, {@code FeedSettings}, {@code ServeSettings}, {@code ScanSettings}, all built
 * on {@code SampleSettings}); it never leaves the driver, and no map of settings goes to a task.
 * Immutable; any thread.
 */
public final class Settings {
  private final Map<String, String> given;
  private final Map<ConfigKey<?>, Object> values = new HashMap<>();

  /** Parses {@code given}'s known keys in its order (the first bad value fails), then defaults. */
  private Settings(Map<String, String> given) {
    this.given = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(given));
    given.forEach(
        (k, v) -> {
          ConfigKey<?> key = SpindleConfig.key(k);
          if (key != null) {
            values.put(key, key.parse(v));
          }
        });
    for (ConfigKey<?> key : SpindleConfig.keys()) {
      values.computeIfAbsent(key, ConfigKey::defaultParsed);
    }
  }

  /**
   * The settings {@code conf} gives, checked as {@link SpindleConfig#validate} checks them (unknown
   * keys, each value, the settings that only make sense together), with its messages.
   *
   * @throws IllegalArgumentException naming the unknown keys, or the first key whose value is not
   *     allowed
   */
  public static Settings of(Map<String, String> conf) {
    SpindleConfig.requireKnownKeys(conf);
    Settings s = read(conf);
    s.uint8Transform();
    s.sampleLimits();
    s.failureBudget();
    return s;
  }

  /**
   * The settings {@code conf} gives, each known key's value parsed (unknown keys are not looked
   * at): for callers that refused unknown keys themselves (the data source, by its own rules for
   * options) or take a map as it is (tests, benchmarks).
   *
   * @throws IllegalArgumentException naming the first key whose value is not allowed
   */
  public static Settings read(Map<String, String> conf) {
    return new Settings(conf);
  }

  /** {@code key}'s value: the one given, else its default. */
  @SuppressWarnings("unchecked")
  public <T> T get(ConfigKey<T> key) {
    return (T) values.get(key);
  }

  /**
   * Whether {@code key} was given (a resumed feed takes plan settings not given from its state).
   */
  public boolean isSet(ConfigKey<?> key) {
    return given.containsKey(key.key());
  }

  /** These settings with {@code key} set to {@code value} (checked). */
  public Settings withValue(ConfigKey<?> key, String value) {
    Map<String, String> m = new LinkedHashMap<>(given);
    m.put(key.key(), value);
    return read(m);
  }

  /** Everything given, as given (for messages that quote the user's values). */
  public Map<String, String> given() {
    return given;
  }

  /** The image transform ({@link SpindleConfig#imageTransform}). */
  public ImageTransform imageTransform() {
    return SpindleConfig.imageTransform(this);
  }

  /** The image transform of uint8 H×W×C batches ({@link SpindleConfig#uint8Transform}). */
  public ImageTransform uint8Transform() {
    return SpindleConfig.uint8Transform(this);
  }

  /**
   * {@code spark.spindle.maxSampleBytes}, {@code spark.spindle.numClasses}, the declared fields
   * ({@code spark.spindle.fields}) and their bound ({@code spark.spindle.fields.maxBytes}).
   */
  public SampleLimits sampleLimits() {
    return new SampleLimits(
        get(SpindleConfig.MAX_SAMPLE_BYTES),
        get(SpindleConfig.NUM_CLASSES),
        get(SpindleConfig.FIELDS),
        get(SpindleConfig.FIELDS_MAX_BYTES));
  }

  /** The failure budget ({@code spark.spindle.maxFailures} over at least {@code .minSamples}). */
  public FailureBudget failureBudget() {
    return FailureBudget.parse(
        get(SpindleConfig.MAX_FAILURES), get(SpindleConfig.MAX_FAILURES_MIN_SAMPLES));
  }

  /**
   * The columns of Parquet shards that hold image and label: the declared {@code image} and {@code
   * label} fields' sources ({@code spark.spindle.fields}) when fields are declared (null for one
   * that is not: no such column is read), else {@code spark.spindle.parquet.imageColumn} and {@code
   * .labelColumn}.
   */
  public ParquetColumns parquetColumns() {
    FieldSet fields = get(SpindleConfig.FIELDS);
    if (!fields.isEmpty()) { // a part not declared is not read
      return new ParquetColumns(
          fields.image() == null ? null : fields.image().source(),
          fields.label() == null ? null : fields.label().source());
    }
    return new ParquetColumns(
        get(SpindleConfig.PARQUET_IMAGE_COLUMN), get(SpindleConfig.PARQUET_LABEL_COLUMN));
  }
}
