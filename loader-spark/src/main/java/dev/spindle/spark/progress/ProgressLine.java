package dev.spindle.spark.progress;

import java.util.Locale;

/** The text of one progress line from a {@link ProgressListener.Snapshot}; any thread. */
final class ProgressLine {
  private ProgressLine() {}

  /**
   * {@code preprocess: 1,234/2,000 samples 61.7% 812 images/s 38.2 MB/s 0 quarantined bottleneck
   * decode ETA 0:01}; without a total, no percentage and no ETA; rates are NaN until known, the
   * bottleneck null; {@code samples/s} instead of {@code images/s} for samples without an image
   * ({@link ProgressListener.Snapshot#unit}).
   */
  static String format(
      ProgressListener.Snapshot s, double samplesPerS, double bytesPerS, String bottleneck) {
    StringBuilder b = new StringBuilder();
    b.append(s.label() == null ? "spindle" : s.label()).append(": ");
    b.append(String.format(Locale.ROOT, "%,d", s.samples()));
    if (s.total() > 0) {
      b.append(
          String.format(
              Locale.ROOT,
              "/%,d samples %.1f%%",
              s.total(),
              Math.min(100.0, 100.0 * s.samples() / s.total())));
    } else {
      b.append(" samples");
    }
    if (Double.isFinite(samplesPerS)) {
      b.append(
          String.format(
              Locale.ROOT, " %,.0f %s/s %.1f MB/s", samplesPerS, s.unit(), bytesPerS / 1e6));
    }
    b.append(String.format(Locale.ROOT, " %,d quarantined", s.quarantined()));
    if (bottleneck != null) {
      b.append(" bottleneck ").append(bottleneck);
    }
    if (s.total() > 0 && samplesPerS > 0 && s.samples() < s.total()) {
      b.append(" ETA ").append(duration((s.total() - s.samples()) / samplesPerS));
    }
    return b.toString();
  }

  /** {@code 1:02:03} or {@code 2:03}. */
  static String duration(double seconds) {
    long s = Math.round(seconds);
    return s >= 3600
        ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
  }
}
