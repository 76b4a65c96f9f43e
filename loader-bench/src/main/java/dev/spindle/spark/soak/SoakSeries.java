package dev.spindle.spark.soak;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's samples: at each one, a value per series (JVM RSS, heap after GC, …), the time since
 * the start and, for the sample taken as an epoch ended, that epoch. Growth is measured between the
 * samples taken at each epoch's end, from the first on, so start-up (class loading, pools filled on
 * first use) does not count. The soak's main thread only.
 */
final class SoakSeries {
  /** One sample: seconds since the start, the epoch it closes (-1: a periodic one), values. */
  record Sample(double seconds, int epochEnd, Map<String, Long> values) {}

  private final List<Sample> samples = new ArrayList<>();

  void add(double seconds, int epochEnd, Map<String, Long> values) {
    samples.add(new Sample(seconds, epochEnd, Map.copyOf(values)));
  }

  int size() {
    return samples.size();
  }

  /**
   * Per series: {@code first_epoch_end}, {@code last} (at the end of epoch {@code epochs - 1}),
   * {@code growth_per_epoch} (the least-squares slope of the values at the epochs' ends over the
   * epoch number: with 2 epochs, their difference; one sample's noise moves it less than the
   * difference of the two ends would), {@code epoch_ends} (those values) and {@code samples}
   * ({@code [seconds, value]} pairs, periodic and epoch ends), in the order of {@code names}.
   *
   * @throws IllegalStateException if no sample closes the first or the last epoch
   */
  Map<String, Object> summary(List<String> names, int epochs) {
    List<Sample> ends = new ArrayList<>();
    for (int e = 0; e < epochs; e++) {
      ends.add(epochEnd(e));
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (String name : names) {
      List<Long> values = ends.stream().map(x -> x.values().get(name)).toList();
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("first_epoch_end", values.get(0));
      s.put("last", values.get(epochs - 1));
      s.put("growth_per_epoch", slope(values));
      s.put("epoch_ends", values);
      s.put(
          "samples",
          samples.stream()
              .map(x -> List.of(Math.round(x.seconds() * 10) / 10.0, x.values().get(name)))
              .toList());
      out.put(name, s);
    }
    return out;
  }

  /** Least-squares slope of {@code y} over its index; 0 for fewer than 2 values. */
  static double slope(List<Long> y) {
    int n = y.size();
    if (n < 2) {
      return 0;
    }
    double meanX = (n - 1) / 2.0;
    double meanY = y.stream().mapToLong(Long::longValue).average().orElse(0);
    double num = 0;
    double den = 0;
    for (int i = 0; i < n; i++) {
      num += (i - meanX) * (y.get(i) - meanY);
      den += (i - meanX) * (i - meanX);
    }
    return num / den;
  }

  private Sample epochEnd(int epoch) {
    return samples.stream()
        .filter(s -> s.epochEnd() == epoch)
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "No soak sample at the end of epoch "
                        + epoch
                        + " ("
                        + samples.size()
                        + " samples)"));
  }
}
