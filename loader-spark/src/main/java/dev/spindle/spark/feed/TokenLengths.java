package dev.spindle.spark.feed;

import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.plan.TokenBudget;
import dev.spindle.spark.shard.HadoopConf;
import dev.spindle.spark.shard.SampleLimits;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import dev.spindle.spark.shard.ShardReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * The token budget of a feed or train job ({@code spark.spindle.batchTokens}): which declared list
 * field it counts, checked before any work, and that field's length in every sample, read by one
 * Spark job over the shards (executor task threads read; the driver's thread collects one {@code
 * int} per sample). A sample whose field cannot be read (quarantined when it is served) counts 0.
 */
final class TokenLengths {
  private TokenLengths() {}

  /**
   * The field the budget counts, or null without a budget; refuses, naming the key, a budget with a
   * mixture, a field key without a budget, and a field that is not one declared list field.
   */
  static FieldSpec field(Settings conf) {
    int tokens = conf.get(SpindleConfig.BATCH_TOKENS);
    String named = conf.get(SpindleConfig.BATCH_TOKENS_FIELD).trim();
    if (tokens == 0) {
      if (!named.isEmpty()) {
        throw new IllegalArgumentException(
            "spark.spindle.batchTokens.field (--batch-tokens-field) is '"
                + named
                + "' but spark.spindle.batchTokens (--batch-tokens) is 0: give the budget too");
      }
      return null;
    }
    if (!conf.get(SpindleConfig.MIX).isBlank()) {
      throw new IllegalArgumentException(
          "spark.spindle.batchTokens (--batch-tokens) cannot be used with a mixture"
              + " (spark.spindle.mix, --mix): token budgets pack one source's epoch only");
    }
    FieldSet fields = conf.get(SpindleConfig.FIELDS);
    List<FieldSpec> lists = fields.declared().stream().filter(f -> f.type().isList()).toList();
    if (named.isEmpty()) {
      if (lists.size() != 1) {
        throw new IllegalArgumentException(
            "spark.spindle.batchTokens (--batch-tokens) counts one list field's lengths, but"
                + " spark.spindle.fields (--fields) declares "
                + (lists.isEmpty() ? "none" : lists.size() + ": " + names(lists))
                + "; name one with spark.spindle.batchTokens.field (--batch-tokens-field)");
      }
      return lists.get(0);
    }
    return lists.stream()
        .filter(f -> f.name().equals(named))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "spark.spindle.batchTokens.field (--batch-tokens-field) is '"
                        + named
                        + "', which spark.spindle.fields (--fields) does not declare as a list"
                        + " field (list<int32>, list<int64>, list<float32>); its list fields: "
                        + (lists.isEmpty() ? "none" : names(lists))));
  }

  /**
   * The job's budget with every sample's length of its field, or null without one.
   *
   * @param limits the job's sample limits (its declared fields)
   */
  static TokenBudget budget(
      JavaSparkContext jsc, Manifest manifest, Settings conf, SampleLimits limits) {
    FieldSpec field = field(conf);
    if (field == null) {
      return null;
    }
    List<Shard> shards = manifest.shards();
    for (Shard s : shards) {
      if (s.format() != ShardFormat.PARQUET && s.format() != ShardFormat.TAR) {
        throw new IllegalArgumentException(
            "spark.spindle.batchTokens (--batch-tokens) reads list fields of Parquet files and"
                + " WebDataset tars; shard "
                + s.displayName()
                + " is "
                + s.format());
      }
    }
    int column = limits.fields().extras().indexOf(field);
    HadoopConf hadoop = HadoopConf.of(jsc.sc());
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < shards.size(); i++) {
      ids.add(i);
    }
    List<int[]> perShard =
        jsc.parallelize(ids, Math.max(1, Math.min(ids.size(), jsc.defaultParallelism() * 4)))
            .map(i -> lengths(shards.get(i), hadoop, limits, column))
            .collect();
    int[] all = new int[Math.toIntExact(manifest.totalSamples())];
    long[] offsets = manifest.offsets();
    for (int i = 0; i < perShard.size(); i++) {
      System.arraycopy(perShard.get(i), 0, all, (int) offsets[i], perShard.get(i).length);
    }
    return TokenBudget.of(field.name(), conf.get(SpindleConfig.BATCH_TOKENS)).withLengths(all);
  }

  /** One shard's lengths of extra field {@code column}, by position; executor task thread. */
  private static int[] lengths(Shard shard, HadoopConf conf, SampleLimits limits, int column) {
    int[] out = new int[Math.toIntExact(shard.samples())];
    try (ShardReader reader = ShardReader.open(shard, conf.get(), limits)) {
      while (reader.hasNext()) {
        var s = reader.next();
        if (s.fields().size() > column && s.position() < out.length) {
          Object v = s.fields().get(column);
          out[(int) s.position()] = v == null ? 0 : Array.getLength(v);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Reading the lengths of a token budget's field from " + shard.displayName(), e);
    }
    return out;
  }

  private static String names(List<FieldSpec> fields) {
    return String.join(", ", fields.stream().map(FieldSpec::name).toList());
  }
}
