package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.SparkHadoopUtil;

/**
 * A Hadoop {@link Configuration} that travels to executors inside a task; and, before any
 * SparkSession exists, the configuration its SparkContext will have ({@link #beforeSession}).
 */
public final class HadoopConf implements Serializable {
  private transient Configuration conf;

  public HadoopConf(Configuration conf) {
    this.conf = conf;
  }

  /**
   * The Hadoop configuration a SparkContext started with {@code spark} gets ({@code spark.hadoop.*}
   * keys, S3 credentials from the environment, {@code core-site.xml} and {@code hive-site.xml} on
   * the classpath), for checks of paths on the driver before the session starts: they then see the
   * file systems the job will see. Built by Spark's own {@code SparkHadoopUtil}, as the
   * SparkContext builds its configuration, so the two cannot drift apart.
   */
  public static Configuration beforeSession(SparkConf spark) {
    return SparkHadoopUtil.get().newConfiguration(spark);
  }

  public Configuration get() {
    return conf;
  }

  private void writeObject(ObjectOutputStream out) throws IOException {
    conf.write(out);
  }

  private void readObject(ObjectInputStream in) throws IOException {
    conf = new Configuration(false);
    conf.readFields(in);
  }
}
