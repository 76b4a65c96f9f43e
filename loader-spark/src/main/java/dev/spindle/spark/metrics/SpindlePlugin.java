package dev.spindle.spark.metrics;

import java.util.Map;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Spark plugin ({@code spark.plugins=dev.spindle.spark.metrics.SpindlePlugin}) that exports each
 * executor's Spindle statistics through Spark's metrics system, so its sinks (JMX, Prometheus
 * servlet, CSV, Graphite…) carry them: see {@link ExecutorMetrics} for the series. No driver
 * part. Spark creates it by reflection on each executor (the driver, in local mode).
 */
public final class SpindlePlugin implements SparkPlugin {
  /** The value of {@code spark.plugins} that loads this plugin. */
  public static final String CLASS_NAME = SpindlePlugin.class.getName();

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
      }

      @Override
      public void shutdown() {
        if (metrics != null) {
          metrics.close();
        }
      }
    };
  }
}
