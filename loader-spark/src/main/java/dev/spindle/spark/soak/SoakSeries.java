package dev.spindle.spark.soak;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's samples: at each one, a value per series (JVM RSS, heap after GC, …), the time since
 * the start and, for the sample taken as an epoch ended, that epoch. Growth is measured between
 * the samples at the ends of the first and the last epoch, so start-up (class loading, pools
 * filled on first use) does not count. The soak's main thread only.
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
   * {@code growth_per_epoch} (their difference over the epochs between) and {@code samples}
   * ({@code [seconds, value]} pairs), in the order of {@code names}.
   *
   * @throws IllegalStateException if no sample closes the first or the last epoch
   */
  Map<String, Object> summary(List<String> names, int epochs) {
    Sample first = epochEnd(0);
    Sample last = epochEnd(epochs - 1);
    Map<String, Object> out = new LinkedHashMap<>();
    for (String name : names) {
      long a = first.values().get(name);
      long b = last.values().get(name);
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("first_epoch_end", a);
      s.put("last", b);
      s.put("growth_per_epoch", epochs > 1 ? (double) (b - a) / (epochs - 1) : 0.0);
      s.put("samples", samples.stream()
          .map(x -> List.of(Math.round(x.seconds() * 10) / 10.0, x.values().get(name))).toList());
      out.put(name, s);
    }
    return out;
  }

  private Sample epochEnd(int epoch) {
    return samples.stream().filter(s -> s.epochEnd() == epoch).findFirst()
        .orElseThrow(() -> new IllegalStateException("No soak sample at the end of epoch " + epoch
            + " (" + samples.size() + " samples)"));
  }
}
