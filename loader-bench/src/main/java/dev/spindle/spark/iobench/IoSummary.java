package dev.spindle.spark.iobench;

import dev.spindle.FeedReport;
import dev.spindle.spark.manifest.Manifest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * {@code bench io}'s report fields: one run's ({@link #fill}), each run against the same round's
 * {@code local} run ({@link #compareToLocal}), and each variant's medians over the rounds ({@link
 * #medians}). Stateless; the bench's thread.
 */
final class IoSummary {
  /** The fields a variant's summary takes as the median of its rounds. */
  private static final List<String> MEDIANS =
      List.of(
          "bytes_read_per_epoch",
          "bytes_read_ratio",
          "requests_per_sample",
          "read_requests",
          "shard_opens",
          "listing_calls",
          "status_calls",
          "images_per_s",
          "images_per_s_vs_local",
          "wall_s",
          "peak_concurrent_requests",
          "quarantined",
          "manifest_count_bytes",
          "manifest_count_requests");

  private IoSummary() {}

  /**
   * A run's figures: the data set's bytes and samples (the manifest's), what the epoch delivered
   * (feed's report) and, for the counted store ({@code epoch} not null), what it read: {@code
   * bytes_read_per_epoch}, {@code bytes_read_ratio} (bytes over the data set's), {@code
   * read_requests} and {@code requests_per_sample} (over the samples the epoch delivered or
   * quarantined), {@code shard_opens}, {@code listing_calls}, {@code status_calls}, and the
   * manifest's counting apart. Local disk is not counted: those fields are null.
   */
  static void fill(
      Map<String, Object> out,
      IoVariant v,
      Manifest manifest,
      FeedReport report,
      StoreCounters.Counts epoch,
      StoreCounters.Counts counting) {
    out.put("source", v.source().name().toLowerCase(Locale.ROOT).replace('_', '-'));
    out.put("conf", v.conf());
    out.put("epoch", v.warmEpochs());
    long dataset = manifest.totalBytes();
    long samples = report.samples();
    out.put("dataset_bytes", dataset);
    out.put("dataset_samples", manifest.totalSamples());
    out.put("shards", manifest.shards().size());
    out.put("samples", samples);
    out.put("images", report.images());
    out.put("quarantined", report.quarantined());
    out.put("images_per_s", report.imagesPerSecond());
    out.put("wall_s", report.wallSeconds());
    boolean counted = epoch != null;
    out.put("bytes_read_per_epoch", counted ? epoch.bytes() : null);
    out.put("bytes_read_ratio", counted ? (double) epoch.bytes() / dataset : null);
    out.put("read_requests", counted ? epoch.requests() : null);
    out.put("requests_per_sample", counted ? (double) epoch.requests() / samples : null);
    out.put("shard_opens", counted ? epoch.opens() : null);
    out.put("listing_calls", counted ? epoch.listings() : null);
    out.put("status_calls", counted ? epoch.statuses() : null);
    out.put("manifest_count_bytes", counted ? counting.bytes() : null);
    out.put("manifest_count_requests", counted ? counting.requests() : null);
    out.put("feed_io", report.get("io"));
  }

  /**
   * Adds {@code images_per_s_vs_local} (this run's images/s over the round's {@code local} run's)
   * and {@code same_content_as_local} (whether the two delivered the same bytes; null when they fed
   * different epochs); both null in a round without {@code local}.
   */
  static void compareToLocal(List<Map<String, Object>> round) {
    Map<String, Object> local =
        round.stream().filter(r -> "local".equals(r.get("variant"))).findFirst().orElse(null);
    for (Map<String, Object> r : round) {
      boolean comparable = local != null && Objects.equals(local.get("epoch"), r.get("epoch"));
      r.put(
          "images_per_s_vs_local",
          local == null
              ? null
              : (double) r.get("images_per_s") / (double) local.get("images_per_s"));
      r.put(
          "same_content_as_local",
          comparable ? local.get("feed_digest").equals(r.get("feed_digest")) : null);
    }
  }

  /** Per variant, in the bench's order: the medians of its rounds and its digests' agreement. */
  static Map<String, Object> medians(List<IoVariant> variants, List<Map<String, Object>> runs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (IoVariant v : variants) {
      List<Map<String, Object>> mine =
          runs.stream().filter(r -> v.name().equals(r.get("variant"))).toList();
      Map<String, Object> first = mine.get(0);
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("source", first.get("source"));
      s.put("conf", first.get("conf"));
      s.put("epoch", first.get("epoch"));
      s.put("latency_ms", first.get("latency_ms"));
      s.put("dataset_bytes", first.get("dataset_bytes"));
      for (String key : MEDIANS) {
        s.put(key, median(mine, key));
      }
      s.put("rounds", mine.size());
      s.put("feed_digest", first.get("feed_digest"));
      s.put(
          "digest_same_every_round",
          mine.stream().allMatch(r -> first.get("feed_digest").equals(r.get("feed_digest"))));
      s.put(
          "same_content_as_local",
          mine.stream().anyMatch(r -> r.get("same_content_as_local") == null)
              ? null
              : mine.stream().allMatch(r -> (Boolean) r.get("same_content_as_local")));
      out.put(v.name(), s);
    }
    return out;
  }

  /** The median of {@code key}'s values, or null when a run has none (not measured there). */
  private static Double median(List<Map<String, Object>> runs, String key) {
    if (runs.stream().anyMatch(r -> r.get(key) == null)) {
      return null;
    }
    double[] v =
        runs.stream().mapToDouble(r -> ((Number) r.get(key)).doubleValue()).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
