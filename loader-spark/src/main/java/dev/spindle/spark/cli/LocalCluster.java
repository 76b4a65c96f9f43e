package dev.spindle.spark.cli;

import java.io.File;
import java.util.Map;
import org.apache.spark.SparkConf;

/**
 * What {@code --master local-cluster[N,C,MB]} needs here. Spark starts N executor JVMs, each
 * launched the way a Spark installation's worker launches them: the launcher looks for the
 * installation's {@code jars/} folder and its Scala version. Without an installation, {@code
 * SPARK_TESTING=1} lets it go without the folder and {@code SPARK_SCALA_VERSION} names the version
 * (bin/spindle sets both for this master), and the executors get this JVM's classpath, which holds
 * Spark and Spindle. Main thread.
 */
final class LocalCluster {
  private LocalCluster() {}

  /**
   * Gives the executors this JVM's classpath, unless set.
   *
   * @throws IllegalArgumentException saying what is missing, when neither a Spark installation
   *     ({@code SPARK_HOME}) nor the two variables are in {@code env}
   */
  static void prepare(SparkConf conf, Map<String, String> env) {
    boolean installed =
        env.get("SPARK_HOME") != null && new File(env.get("SPARK_HOME"), "jars").isDirectory();
    boolean launchable =
        "1".equals(env.get("SPARK_TESTING")) && env.get("SPARK_SCALA_VERSION") != null;
    if (!installed && !launchable) {
      throw new IllegalArgumentException(
          "--master "
              + conf.get("spark.master")
              + " starts"
              + " executor JVMs the way a Spark installation does: set SPARK_HOME to one (with its"
              + " jars/ folder), or run without one through bin/spindle, which sets SPARK_TESTING=1"
              + " and SPARK_SCALA_VERSION=2.13 for this master (or set both yourself)");
    }
    conf.setIfMissing("spark.executor.extraClassPath", System.getProperty("java.class.path"));
  }
}
