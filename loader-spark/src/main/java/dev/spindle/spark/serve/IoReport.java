package dev.spindle.spark.serve;

import dev.spindle.spark.shard.CacheCounts;
import dev.spindle.spark.shard.IoCounts;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The feed and train reports' {@code "io"} object, summed over task outcomes: what the tasks' shard
 * opens cost. What they asked of storage ({@link TaskOutcome#io()}, {@link IoCounts#toReport}:
 * {@code bytes_read}, {@code read_requests}, {@code shard_opens}, {@code shard_opens_indexed},
 * {@code shard_opens_compressed}; a fetch into the shard cache counts as one request for the whole
 * shard, reads of its local copy not at all). The shard cache's counters ({@link
 * TaskOutcome#cache()}): {@code cache_hits}, {@code cache_misses}, {@code cache_bytes_fetched}
 * (read from storage into the cache), {@code cache_bytes_served} (read from local copies), {@code
 * cache_evictions}, {@code cache_corrupt} (entries that failed their checksum: deleted, fetched
 * again), {@code cache_unusable} (why the cache could not be used, the first reason an executor
 * saw, or null). Driver thread.
 */
public final class IoReport {
  private IoCounts io = IoCounts.NONE;
  private CacheCounts cache = CacheCounts.NONE;

  /** Adds what {@code o}'s shard opens did. */
  public void add(TaskOutcome o) {
    if (o.io() != null) {
      io = io.plus(o.io());
    }
    if (o.cache() != null) {
      cache = cache.plus(o.cache());
    }
  }

  /** The report's {@code "io"} object. */
  public Map<String, Object> toReport() {
    Map<String, Object> io = new LinkedHashMap<>(this.io.toReport());
    io.put("cache_hits", cache.hits());
    io.put("cache_misses", cache.misses());
    io.put("cache_bytes_fetched", cache.bytesFetched());
    io.put("cache_bytes_served", cache.bytesServed());
    io.put("cache_evictions", cache.evictions());
    io.put("cache_corrupt", cache.corrupt());
    io.put("cache_unusable", cache.unusable());
    return io;
  }
}
