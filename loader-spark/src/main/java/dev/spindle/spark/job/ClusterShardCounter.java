package dev.spindle.spark.job;

import dev.spindle.spark.shard.FileCount;
import dev.spindle.spark.shard.FileCounting;
import dev.spindle.spark.shard.ShardCatalog;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Counts shard files (tar headers, Parquet footers) as a Spark job, a few
 * files per task, so a large input is counted by the cluster rather than by the driver. Results in
 * input order. Driver-side.
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
    HadoopConf conf = new HadoopConf(jsc.hadoopConfiguration());
    int slices = Math.max(1, Math.min(uris.size(), jsc.defaultParallelism() * 4));
    return jsc.parallelize(uris, slices).map(uri -> how.count(uri, conf.get())).collect();
  }
}
