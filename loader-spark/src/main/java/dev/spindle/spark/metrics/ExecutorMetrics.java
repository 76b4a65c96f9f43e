package dev.spindle.spark.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import dev.spindle.gpu.feed.FeederStats;
import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.gpu.ring.SlotState;
import dev.spindle.spark.pipeline.ExecutorStats;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * The gauges {@link SpindlePlugin} registers in one executor's plugin metric registry (Spark
 * prefixes them {@code <app>.<executor>.plugin.dev.spindle.spark.metrics.SpindlePlugin.}):
 *
 * <ul>
 *   <li>per pipeline stage {@code S} (registered when a pipeline with that stage first starts in
 *       this JVM): {@code stage.S.items}, {@code stage.S.failures}, {@code stage.S.blockedMs}
 *       (running totals over this JVM's life), {@code stage.S.queueOccupancy}, {@code
 *       stage.S.busyFraction} (mean over the running pipelines, 0 when none runs), {@code
 *       stage.S.running} (pipelines running it);
 *   <li>{@code quarantined}: samples dropped and quarantined by every stage;
 *   <li>{@code feeder.h2dBytes}, {@code feeder.h2dGbps}, {@code feeder.slotsBusy} (slots not FREE
 *       now), {@code feeder.slotsReady}, {@code feeder.trainerWaitMs}: summed over this JVM's open
 *       feeders ({@link ActiveFeeders}: installed or serving ranks); 0 when none is.
 * </ul>
 *
 * <p>Gauges read the values when a sink reports (every {@code *.sink.*.period}), never on the hot
 * path. Created and closed on Spark's plugin thread.
 */
final class ExecutorMetrics implements AutoCloseable {
  private final MetricRegistry registry;
  private final Consumer<String> onStage = this::registerStage;

  ExecutorMetrics(MetricRegistry registry) {
    this.registry = registry;
  }

  void register() {
    gauge("quarantined", ExecutorStats::quarantined);
    feederLong("feeder.h2dBytes", FeederStats::h2dBytes);
    feederDouble("feeder.h2dGbps", FeederStats::wallGbps);
    feederLong(
        "feeder.slotsBusy",
        f -> java.util.Arrays.stream(f.ring().current()).sum() - f.ring().current(SlotState.FREE));
    feederLong("feeder.slotsReady", f -> f.ring().current(SlotState.READY));
    feederDouble("feeder.trainerWaitMs", f -> f.ring().consumerWaitNanos() / 1e6);
    ExecutorStats.onStage(onStage);
  }

  private synchronized void registerStage(String stage) {
    String p = "stage." + metricName(stage) + ".";
    gauge(p + "items", () -> ExecutorStats.stage(stage).items());
    gauge(p + "failures", () -> ExecutorStats.stage(stage).failures());
    gauge(p + "blockedMs", () -> ExecutorStats.stage(stage).blockedMs());
    gauge(p + "queueOccupancy", () -> ExecutorStats.stage(stage).queueOccupancy());
    gauge(p + "busyFraction", () -> ExecutorStats.stage(stage).busyFraction());
    gauge(p + "running", () -> ExecutorStats.stage(stage).running());
  }

  /** {@code name} with every character outside {@code [A-Za-z0-9_]} replaced by '_'. */
  static String metricName(String name) {
    return name.replaceAll("[^A-Za-z0-9_]", "_");
  }

  private void gauge(String name, Gauge<? extends Number> g) {
    if (!registry.getGauges().containsKey(name)) {
      registry.register(name, g);
    }
  }

  private void feederLong(String name, ToLongFunction<FeederStats> f) {
    gauge(name, () -> ActiveFeeders.all().stream().map(GpuFeeder::stats).mapToLong(f).sum());
  }

  private void feederDouble(String name, ToDoubleFunction<FeederStats> f) {
    gauge(name, () -> ActiveFeeders.all().stream().map(GpuFeeder::stats).mapToDouble(f).sum());
  }

  @Override
  public void close() {
    ExecutorStats.removeListener(onStage);
  }
}
