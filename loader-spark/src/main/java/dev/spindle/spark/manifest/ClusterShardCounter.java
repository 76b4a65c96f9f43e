package dev.spindle.spark.manifest;

import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.shard.FileCount;
import dev.spindle.spark.shard.FileCounting;
import dev.spindle.spark.shard.HadoopConf;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Counts shard files (tar headers, Parquet footers) as a Spark job, a few files per task, so a
 * large input is counted by the cluster rather than by the driver. Results in input order. The job
 * is described in Spark's UI ({@code count shards: 1,024 files, a.tar … z.tar}), in the caller's
 * job group, else {@code spindle-helper}. Driver-side.
 */
public final class ClusterShardCounter implements ShardCatalog.Counter {
  private final JavaSparkContext jsc;

  public ClusterShardCounter(JavaSparkContext jsc) {
    this.jsc = jsc;
  }

  @Override
  public List<FileCount> count(List<String> uris, FileCounting how) {
    if (uris.isEmpty()) {
      return List.of();
    }
    HadoopConf conf = HadoopConf.of(jsc.sc());
    int slices = Math.max(1, Math.min(uris.size(), jsc.defaultParallelism() * 4));
    try (JobLabel described = JobLabel.helper(jsc.sc(), description(uris))) {
      return jsc.parallelize(uris, slices).map(uri -> how.count(uri, conf.get())).collect();
    }
  }

  /** {@code count shards: 1,024 files, s3a://b/train-0000.tar … s3a://b/train-1023.tar}. */
  static String description(List<String> uris) {
    String files =
        String.format(
            Locale.ROOT,
            "count shards: %,d file%s, %s",
            uris.size(),
            uris.size() == 1 ? "" : "s",
            uris.get(0));
    return uris.size() == 1 ? files : files + " … " + uris.get(uris.size() - 1);
  }
}
