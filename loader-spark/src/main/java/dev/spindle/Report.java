package dev.spindle;

import dev.spindle.spark.metrics.JobReport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;

/**
 * What a finished job reports: the figures every job has, every field of its JSON report, and the
 * report written as a file. A snapshot made when the job ended; the caller owns it. Safe to read
 * from any thread once published; {@link #writeTo} from one thread at a time.
 */
public abstract sealed class Report permits PreprocessReport, FeedReport {
  private final JobReport report;

  Report(JobReport report) {
    this.report = report;
  }

  /** Images delivered (feed: rows of every rank's batches) or written (preprocess). */
  public long images() {
    return number("images").longValue();
  }

  /** Samples the job accounted for: delivered or written, plus quarantined. */
  public long samples() {
    return number("samples").longValue();
  }

  /** Samples quarantined (skipped, counted and listed with shard, key and reason). */
  public long quarantined() {
    return number("failures").longValue();
  }

  /** Wall-clock seconds from the job's start to its end. */
  public double wallSeconds() {
    return number("wall_s").doubleValue();
  }

  /** Throughput: {@link #images()} over {@link #wallSeconds()}. */
  public double imagesPerSecond() {
    return number("images_per_s").doubleValue();
  }

  /** One field of the JSON report (a String, Number, Boolean, List or Map), or null. */
  public Object get(String field) {
    return report.get(field);
  }

  /** Every field of the JSON report, in order; a read-only view. */
  public Map<String, Object> fields() {
    return Collections.unmodifiableMap(report.fields());
  }

  /** The JSON report. */
  public String toJson() {
    return report.toJson();
  }

  /**
   * Writes the JSON report to {@code file} (parent folders are created); when samples were
   * quarantined, every one of them is listed in {@code FILE.quarantine.jsonl} beside it.
   */
  public void writeTo(Path file) throws IOException {
    report.write(file);
  }

  @Override
  public String toString() {
    return toJson();
  }

  private Number number(String field) {
    Object v = report.get(field);
    return v instanceof Number n ? n : 0;
  }
}
