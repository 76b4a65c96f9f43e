package dev.spindle.spark.metrics;

import dev.spindle.spark.config.SpindleConfig;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Spark plugin ({@code spark.plugins=dev.spindle.spark.metrics.SpindlePlugin}) that exports each
 * executor's Spindle statistics through Spark's metrics system, so its sinks (JMX, Prometheus
 * servlet, CSV, Graphite…) carry them: see {@link ExecutorMetrics} for the series; and writes the
 * executor's trace when {@code spark.spindle.trace.file} is set ({@link Traces}). No driver part.
 * Spark creates it by reflection on each executor (the driver, in local mode).
 */
public final class SpindlePlugin implements SparkPlugin {
  /** The value of {@code spark.plugins} that loads this plugin. */
  public static final String CLASS_NAME = SpindlePlugin.class.getName();

  /**
   * Adds this plugin to {@code conf}'s {@code spark.plugins}, after the plugins already there,
   * unless it is listed already or {@code spark.spindle.metrics.plugin} is false. Called by the
   * command line before it starts its session.
   */
  public static void enable(SparkConf conf) {
    if (!SpindleConfig.METRICS_PLUGIN.parse(
        conf.get(SpindleConfig.METRICS_PLUGIN.key(), SpindleConfig.METRICS_PLUGIN.defaultValue()),
        SpindleConfig.METRICS_PLUGIN.key())) {
      return;
    }
    String plugins = conf.get("spark.plugins", "").trim();
    if (java.util.Arrays.stream(plugins.split(","))
        .map(String::trim)
        .anyMatch(CLASS_NAME::equals)) {
      return;
    }
    conf.set("spark.plugins", plugins.isEmpty() ? CLASS_NAME : plugins + "," + CLASS_NAME);
  }

  @Override
  public DriverPlugin driverPlugin() {
    return null;
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      private ExecutorMetrics metrics;

      @Override
      public void init(PluginContext ctx, Map<String, String> extraConf) {
        metrics = new ExecutorMetrics(ctx.metricRegistry());
        metrics.register();
        Traces.start(ctx.conf(), ctx.executorID());
      }

      @Override
      public void shutdown() {
        if (metrics != null) {
          metrics.close();
        }
        Traces.stop();
      }
    };
  }
}
