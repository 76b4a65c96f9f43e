package dev.spindle.spark.job;

import dev.spindle.spark.shard.ShardCatalog;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Counts the samples of tar shards as a Spark job, a few shards per task, so a large input is
 * counted by the cluster rather than by the driver. Results in input order. Driver-side.
 */
public final class ClusterTarCounter implements ShardCatalog.TarCounter {
  private final JavaSparkContext jsc;

  public ClusterTarCounter(JavaSparkContext jsc) {
    this.jsc = jsc;
  }

  @Override
  public long[] count(List<String> uris) {
    HadoopConf conf = new HadoopConf(jsc.hadoopConfiguration());
    int slices = Math.max(1, Math.min(uris.size(), jsc.defaultParallelism() * 4));
    return jsc.parallelize(uris, slices).map(uri -> ShardCatalog.countTar(uri, conf.get()))
        .collect().stream().mapToLong(Long::longValue).toArray();
  }
}
