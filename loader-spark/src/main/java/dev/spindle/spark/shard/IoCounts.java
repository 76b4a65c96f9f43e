package dev.spindle.spark.shard;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Storage reads of tasks, summed: the reports' {@code "io"} object. Immutable.
 *
 * @param bytesRead bytes read from tar shards' storage (their index files included; other formats
 *     count their opens only)
 * @param readRequests reads issued to storage: an open's first read, each ranged read, each read
 *     after a seek or skip
 * @param shardOpens shard readers opened (one per shard per read group)
 * @param shardOpensIndexed of those, tars read through their member index (planned samples only)
 * @param shardOpensCompressed of those, compressed tars: no index is possible, each is read whole,
 *     in order, up to its last planned sample
 */
public record IoCounts(
    long bytesRead,
    long readRequests,
    long shardOpens,
    long shardOpensIndexed,
    long shardOpensCompressed)
    implements Serializable {
  public static final IoCounts NONE = new IoCounts(0, 0, 0, 0, 0);

  public IoCounts plus(IoCounts o) {
    return new IoCounts(
        bytesRead + o.bytesRead,
        readRequests + o.readRequests,
        shardOpens + o.shardOpens,
        shardOpensIndexed + o.shardOpensIndexed,
        shardOpensCompressed + o.shardOpensCompressed);
  }

  /** The report's entries, snake_case. */
  public Map<String, Object> toReport() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("bytes_read", bytesRead);
    m.put("read_requests", readRequests);
    m.put("shard_opens", shardOpens);
    m.put("shard_opens_indexed", shardOpensIndexed);
    m.put("shard_opens_compressed", shardOpensCompressed);
    return m;
  }
}
