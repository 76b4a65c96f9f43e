package dev.spindle.spark.sql;

import dev.spindle.spark.feed.MixedInput;
import dev.spindle.spark.manifest.ClusterShardCounter;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestCache;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.ShardGroup;
import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.shard.HadoopConf;
import dev.spindle.spark.shard.StoredImages;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.UUID;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The physical scan, planned on the driver: the input's manifest (listed and counted once, tar
 * shards counted by a Spark job, cached as {@code _spindle_manifest.json} beside the data or at the
 * {@code manifest} option, and counted again when the shards changed; a preprocess output's own
 * {@code _manifest.json}, read as it is), then partitions of whole shards up to {@code
 * spark.spindle.partitionBytes}. Each scan has an id of its own, which names its quarantine files.
 * Driver thread.
 */
final class SpindleBatch implements Batch {
  private static final Logger LOG = LoggerFactory.getLogger(SpindleBatch.class);

  private final ScanSettings settings;
  private final StructType schema;
  private final String scanId = UUID.randomUUID().toString().substring(0, 8);
  private InputPartition[] partitions;
  private long total;

  SpindleBatch(ScanSettings settings, StructType schema) {
    this.settings = settings;
    this.schema = schema;
  }

  @Override
  public synchronized InputPartition[] planInputPartitions() {
    if (partitions == null && settings.mix() != null) {
      planMixture();
    } else if (partitions == null) {
      Manifest manifest = manifest().manifest();
      requireSameImages(manifest);
      List<ShardGroup> groups = ShardGroup.plan(manifest, settings.partitionBytes());
      partitions = groups.stream().map(SpindleInputPartition::new).toArray(InputPartition[]::new);
      total = manifest.totalSamples();
      LOG.info("spindle scan {} of {}: {} partitions", scanId, settings.input(), partitions.length);
    }
    JobLabel.totalIfUnknown(SparkSession.active().sparkContext(), total);
    return partitions.clone();
  }

  /**
   * A mixture's partitions: its epoch plan for one rank (every source's manifest loaded as {@code
   * feed --mix} loads it, cached next to its own data), cut into consecutive stretches of about
   * {@code spark.spindle.partitionBytes} of the sources' samples (by their mean size), at least one
   * sample each; in partition order they are the epoch's order.
   */
  private void planMixture() {
    MixedInput mix;
    try {
      mix = MixedInput.load(cache(), settings.mix().spec(), true);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Manifest catalog = mix.loaded().manifest();
    requireSameImages(catalog);
    EpochPlan plan = EpochPlan.create(catalog, settings.mix().plan(), mix.mixture());
    int samples = plan.rank(0).batches();
    double meanBytes = (double) catalog.totalBytes() / Math.max(1, catalog.totalSamples());
    long wanted = (long) Math.ceil(samples * meanBytes / settings.partitionBytes());
    int count = (int) Math.max(1, Math.min(samples, wanted));
    partitions = new InputPartition[count];
    for (int p = 0; p < count; p++) {
      int from = (int) ((long) samples * p / count);
      int to = (int) ((long) samples * (p + 1) / count);
      partitions[p] = new MixInputPartition(plan, catalog, p, from, to);
    }
    total = samples;
  }

  /** The readers' factory, with progress counters of this scan's job ({@link ProgressCounters}). */
  @Override
  public PartitionReaderFactory createReaderFactory() {
    JavaSparkContext jsc = sparkContext();
    return new SpindleReaderFactory(
        settings, schema, scanId, HadoopConf.of(jsc.sc()), ProgressCounters.register(jsc.sc()));
  }

  private ManifestCache cache() {
    JavaSparkContext jsc = sparkContext();
    return new ManifestCache(
        jsc.hadoopConfiguration(),
        settings.folderShardFiles(),
        settings.columns(),
        new ClusterShardCounter(jsc));
  }

  private ManifestCache.Loaded manifest() {
    ManifestCache cache = cache();
    try {
      ManifestCache.Loaded loaded = cache.load(settings.input(), settings.manifest(), true);
      LOG.info(
          "Manifest of {}: {} shards, {} samples ({})",
          settings.input(),
          loaded.manifest().shards().size(),
          loaded.manifest().totalSamples(),
          loaded.status());
      return loaded;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The images the scan was set up for (when the DataFrame was defined) must still be the input's:
   * an input that became, or stopped being, a preprocess output, or whose stored shape changed, is
   * refused before any task.
   */
  private void requireSameImages(Manifest manifest) {
    StoredImages now = manifest.stored();
    BatchImages planned = settings.sample().images();
    boolean same =
        now == null ? planned.decodes() : !planned.decodes() && planned.shape().equals(now.shape());
    if (!same) {
      throw new IllegalStateException(
          "The input "
              + settings.input()
              + " changed since the"
              + " DataFrame was defined: it "
              + (now == null
                  ? "is no longer a preprocess output"
                  : "is now a preprocess output of " + now.shape() + " images")
              + "; load it again");
    }
  }

  private static JavaSparkContext sparkContext() {
    return JavaSparkContext.fromSparkContext(SparkSession.active().sparkContext());
  }
}
