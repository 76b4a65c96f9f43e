package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;

/**
 * How to count one shard file ({@link ShardFiles#counting}); serializable, so that a {@link
 * ShardCatalog.Counter} may run it in Spark tasks. Implementations are stateless and may be called
 * from any thread.
 */
@FunctionalInterface
public interface FileCounting extends Serializable {
  /**
   * Counts one file. A file that cannot be a shard is a result ({@link FileCount#refused()}), not
   * an exception.
   *
   * @throws IOException when the storage fails
   */
  FileCount count(String uri, Configuration conf) throws IOException;
}
