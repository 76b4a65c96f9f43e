package dev.spindle.spark.feed;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;

/** A Hadoop {@link Configuration} that travels to executors inside a task. */
final class ShippedConf implements Serializable {
  private transient Configuration conf;

  ShippedConf(Configuration conf) {
    this.conf = conf;
  }

  Configuration get() {
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
