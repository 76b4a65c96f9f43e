package dev.spindle.spark.shard;

import java.io.Serializable;

/**
 * What the executor-local shard cache ({@link ShardCache}) did for some shard opens: the feed and
 * train reports' {@code "io"} counters {@code cache_*}. A value; sums with {@link #plus}.
 *
 * @param hits opens served from a local copy already in the cache
 * @param misses opens that fetched the shard whole from storage into the cache
 * @param bytesFetched bytes read from storage into the cache (the misses' shards)
 * @param bytesServed bytes read from the cache's local copies
 * @param evictions entries deleted to keep the cache within its bound
 * @param corrupt entries whose checksum or size did not match: deleted and fetched again, never
 *     served
 * @param unusable why the cache could not be used (its folder not writable, the disk full), the
 *     first reason seen; null when nothing went wrong. Those reads went to storage.
 */
public record CacheCounts(
    long hits,
    long misses,
    long bytesFetched,
    long bytesServed,
    long evictions,
    long corrupt,
    String unusable)
    implements Serializable {

  /** Nothing counted: a reader that does not use the cache, or a cache that is off. */
  public static final CacheCounts NONE = new CacheCounts(0, 0, 0, 0, 0, 0, null);

  /** The sum of both; the first reason the cache was unusable. */
  public CacheCounts plus(CacheCounts o) {
    return new CacheCounts(
        hits + o.hits,
        misses + o.misses,
        bytesFetched + o.bytesFetched,
        bytesServed + o.bytesServed,
        evictions + o.evictions,
        corrupt + o.corrupt,
        unusable != null ? unusable : o.unusable);
  }
}
