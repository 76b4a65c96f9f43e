package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.metrics.SpindlePlugin;
import dev.spindle.spark.samples.DecodeWarmUp;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/**
 * Starts the SparkSession a command runs on, and owns it (the command stops it): the embedded
 * default ({@code local[*]}, bound to loopback), the master given by {@code --master}, or the one
 * spark-submit configured. Main thread.
 */
final class Sessions {
  private Sessions() {}

  /**
   * A new session for {@code command} with {@code settings} on top of the {@code spark.*} system
   * properties (as spark-submit sets them).
   *
   * @throws IllegalArgumentException when the master cannot run here (see {@link LocalCluster})
   */
  static SparkSession start(String command, String master, Map<String, String> settings) {
    SparkConf conf = conf(master, settings);
    conf.setIfMissing("spark.app.name", "spindle " + command);
    conf.setIfMissing("spark.ui.showConsoleProgress", "false");
    SpindlePlugin.enable(conf);
    // the series' prefix; Spark's default, the application id, is not known yet when the plugin
    // registers its source in local mode (Spark then warns and uses a bare name)
    conf.setIfMissing("spark.metrics.namespace", "spindle");
    String effective = conf.get("spark.master");
    if (effective.startsWith("local")) {
      conf.setIfMissing("spark.driver.host", "127.0.0.1");
      conf.setIfMissing("spark.driver.bindAddress", "127.0.0.1");
      // bin/spindle asks for the UI (on loopback: it exports SPARK_LOCAL_IP); embedded uses
      // (tests, notebooks) get none unless they set spark.ui.enabled
      conf.setIfMissing("spark.ui.enabled", System.getProperty("spindle.ui", "false"));
    } else {
      String appJar = System.getProperty("spindle.app.jar");
      if (appJar != null && !conf.contains("spark.jars")) {
        conf.set("spark.jars", appJar); // executors of a real cluster need Spindle's classes
      }
    }
    if (effective.startsWith("local-cluster")) {
      LocalCluster.prepare(conf, System.getenv());
    }
    // Spark's own implementation's builder: SparkSession.builder() first looks that class up
    // through Scala reflection, whose start costs about a second of the command's start
    SparkSession session =
        org.apache.spark.sql.classic.SparkSession.builder().config(conf).getOrCreate();
    if (Boolean.getBoolean("spindle.ui") && session.sparkContext().uiWebUrl().isDefined()) {
      System.err.println("spindle: Spark UI at " + session.sparkContext().uiWebUrl().get());
    }
    return session;
  }

  /**
   * Readies the decode path ({@link DecodeWarmUp}: its native decoder and the pipeline engine) when
   * a session on {@code master} with {@code settings} will decode images in this JVM (a local
   * master: this JVM is its executor), so that it runs while the command's checks and Spark's start
   * keep one core busy.
   */
  static void warmUpDecode(String master, Map<String, String> settings) {
    String effective = master(master, settings);
    if ((effective.equals("local") || effective.startsWith("local["))
        && SpindleConfig.get(settings, SpindleConfig.FIELDS).hasImage()) {
      DecodeWarmUp.start();
    }
  }

  /**
   * The master a session started with {@code master} ({@code --master}, or null) and {@code
   * settings} runs on, known before it starts.
   */
  static String master(String master, Map<String, String> settings) {
    return conf(master, settings).get("spark.master");
  }

  /** The {@code spark.*} system properties, the master, then {@code settings}. */
  private static SparkConf conf(String master, Map<String, String> settings) {
    SparkConf conf = new SparkConf(true);
    if (master != null) {
      conf.setMaster(master);
    } else if (!conf.contains("spark.master")) {
      conf.setMaster("local[*]");
    }
    settings.forEach(conf::set);
    return conf;
  }
}
