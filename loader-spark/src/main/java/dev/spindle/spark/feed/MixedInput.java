package dev.spindle.spark.feed;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestCache;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.MixSpec;
import dev.spindle.spark.plan.Mixture;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.shard.InputListing;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.TarIndexes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The catalog of a weighted mixture: every source's manifest loaded (and cached next to its data)
 * as {@code --input} would load it, laid end to end in the order the sources were given, so that
 * the readers, the rank split, the remainder policy and resume work on it as on one input; only the
 * epoch's order differs ({@link Mixture}, {@code plan}'s package documentation, "Mixtures").
 * Sources must agree on what a sample is: all encoded or all the same {@code preprocess} output
 * kind, and the same class names. Driver thread.
 *
 * @param spec the mixture as given
 * @param loaded the catalog, as the report and the readers see it
 * @param mixture the plan's view of it
 * @param sources each source's own loaded manifest, in order
 */
public record MixedInput(
    MixSpec spec,
    ManifestCache.Loaded loaded,
    Mixture mixture,
    List<ManifestCache.Loaded> sources) {

  /** Loads every source of {@code spec} through {@code cache} and lays them end to end. */
  public static MixedInput load(ManifestCache cache, MixSpec spec, boolean recount)
      throws IOException {
    List<ManifestCache.Loaded> sources = new ArrayList<>();
    for (MixSpec.Source s : spec.sources()) {
      sources.add(cache.load(s.uri(), null, recount));
    }
    return of(spec, sources);
  }

  /** The catalog of already loaded sources, checked to agree. */
  static MixedInput of(MixSpec spec, List<ManifestCache.Loaded> sources) {
    List<Shard> shards = new ArrayList<>();
    List<InputListing.Skipped> skipped = new ArrayList<>();
    int[] shardsPerSource = new int[sources.size()];
    List<String> locations = new ArrayList<>();
    List<String> statuses = new ArrayList<>();
    Manifest first = sources.get(0).manifest();
    for (int s = 0; s < sources.size(); s++) {
      Manifest m = sources.get(s).manifest();
      requireAlike(spec, first, m, s);
      shards.addAll(m.shards());
      skipped.addAll(sources.get(s).skipped());
      shardsPerSource[s] = m.shards().size();
      locations.add(spec.sources().get(s).name() + ": " + sources.get(s).location());
      statuses.add(spec.sources().get(s).name() + ": " + sources.get(s).status());
    }
    Manifest catalog =
        new Manifest("mix:" + spec.entries(), shards, first.classNames(), first.stored());
    List<TarIndexes> indexes = new ArrayList<>();
    List<String> indexStatuses = new ArrayList<>();
    for (int s = 0; s < sources.size(); s++) {
      indexes.add(sources.get(s).indexes());
      if (sources.get(s).indexStatus() != null) {
        indexStatuses.add(spec.sources().get(s).name() + ": " + sources.get(s).indexStatus());
      }
    }
    ManifestCache.Loaded loaded =
        new ManifestCache.Loaded(
            catalog,
            String.join("; ", locations),
            String.join("; ", statuses),
            skipped,
            TarIndexes.chain(indexes),
            indexStatuses.isEmpty() ? null : String.join("; ", indexStatuses));
    return new MixedInput(
        spec, loaded, Mixture.of(spec, catalog.offsets(), shardsPerSource), List.copyOf(sources));
  }

  private static void requireAlike(MixSpec spec, Manifest first, Manifest m, int s) {
    String a = spec.sources().get(0).name();
    String b = spec.sources().get(s).name();
    if (!Objects.equals(first.stored(), m.stored())) {
      throw new IllegalArgumentException(
          "Refused mixture: sources \""
              + a
              + "\" and \""
              + b
              + "\" hold different kinds of samples ("
              + describe(first)
              + " vs "
              + describe(m)
              + "); every source must be encoded shards, or preprocess outputs of the same shape"
              + " and transforms");
    }
    if (!first.classNames().equals(m.classNames())) {
      throw new IllegalArgumentException(
          "Refused mixture: sources \""
              + a
              + "\" and \""
              + b
              + "\" name their labels differently ("
              + first.classNames()
              + " vs "
              + m.classNames()
              + "); a label must mean the same class in every source");
    }
  }

  private static String describe(Manifest m) {
    return m.stored() == null ? "encoded shards" : "a preprocess output of " + m.stored();
  }

  /**
   * Per source, the real (not padded) samples a run that finishes delivers: the rest of {@code
   * first}'s epoch (from each rank's first batch), then whole epochs up to {@code epochs - 1}, as
   * planned over {@code manifest} with {@code first}'s world size. Derives no indices.
   */
  public long[] plannedBySource(EpochPlan first, Manifest manifest, int epochs) {
    long[] counts = new long[mixture.sources()];
    EpochPlan plan = first;
    while (plan.epoch() < epochs) {
      for (RankPlan r : plan.ranks()) {
        long[] c = r.realBySource(mixture, r.firstBatch(), r.batches());
        for (int s = 0; s < counts.length; s++) {
          counts[s] += c[s];
        }
      }
      plan = plan.stateAtEnd().resume(manifest, plan.worldSize());
    }
    return counts;
  }

  /**
   * The report's {@code "mix"} object: per source its name, the samples delivered, the proportion
   * asked (normalised) and the proportion realised over the samples delivered.
   *
   * @param delivered per source, real (not padded) samples in the delivered batches
   */
  public Map<String, Object> report(long[] delivered) {
    long total = 0;
    for (long d : delivered) {
      total += d;
    }
    double[] asked = spec.proportions();
    List<Map<String, Object>> out = new ArrayList<>();
    for (int s = 0; s < delivered.length; s++) {
      Map<String, Object> source = new LinkedHashMap<>();
      source.put("name", spec.sources().get(s).name());
      source.put("uri", spec.sources().get(s).uri());
      source.put("samples", delivered[s]);
      source.put("proportion", asked[s]);
      source.put("realised", total == 0 ? null : (double) delivered[s] / total);
      out.add(source);
    }
    Map<String, Object> mix = new LinkedHashMap<>();
    mix.put("epoch", spec.epoch());
    mix.put("epoch_samples", mixture.samples());
    mix.put("sources", out);
    return mix;
  }
}
