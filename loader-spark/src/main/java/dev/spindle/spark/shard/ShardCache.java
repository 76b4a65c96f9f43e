package dev.spindle.spark.shard;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor-local shard cache ({@code spark.spindle.io.cache}, off by default): whole shard
 * files kept on the node's local disk, so a later open of a shard (the epoch's other read groups,
 * the next epoch, a restarted executor, another executor on the node) reads the local copy instead
 * of the object store or HDFS.
 *
 * <pre>
 *  open(shard) ── cache off, a file: URI, shard over the bound ──────────────► storage's stream
 *      │ key = (URI, size, modification time): a changed shard is another entry
 *      ├─ verified in this JVM ─► pin, touch ──────────────────────────────► local stream (hit)
 *      └─ entry lock (threads and executors: one fetch, the others wait for it)
 *           ├─ on disk, first use in this JVM: CRC-32C checked (corrupt: deleted, counted)
 *           └─ miss: make room (LRU by last use, never a pinned entry), read the shard whole
 *              into a temporary file, checksum it, rename into place ─────► local stream
 *  any local failure (folder unusable, disk full) ─► logged once, counted ─► storage's stream
 * </pre>
 *
 * <p>An entry open by a reader of this JVM is pinned and never evicted under it. An entry open in
 * another executor may be deleted: on POSIX its reader keeps reading the open file, whose space is
 * freed when it is closed. {@link CacheDir} holds the folder's layout and locks. One instance per
 * folder per JVM; any thread.
 */
final class ShardCache {
  private static final Logger LOG = LoggerFactory.getLogger(ShardCache.class);
  private static final Map<Path, ShardCache> CACHES = new ConcurrentHashMap<>();

  /** Opens a shard's stream on its storage; the caller's own open, used when not cached. */
  interface Storage {
    FSDataInputStream open() throws IOException;
  }

  /** An entry verified (or written) in this JVM, with the streams open on it now. */
  private static final class Entry {
    final long bytes;
    int pins; // guarded by the cache

    Entry(long bytes) {
      this.bytes = bytes;
    }
  }

  private final CacheDir dir; // null when unusable
  private final String unusable;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicBoolean warned = new AtomicBoolean();
  private long reserved; // bytes of this JVM's fetches in flight; guarded by this

  ShardCache(Path root, CacheDir.Outputs outputs) {
    CacheDir d = null;
    String why = null;
    try {
      d = new CacheDir(root, outputs);
      int left = d.cleanLeftovers();
      LOG.info(
          "Shard cache in {}: {} entries; {} files of unfinished fetches deleted",
          d.root(),
          d.entries().size(),
          left);
    } catch (CacheDir.LocalFailure e) {
      why = e.getMessage();
      LOG.warn("Shard cache off in this executor, shards are read from storage: {}", why);
    }
    this.dir = d;
    this.unusable = why;
  }

  ShardCache(Path root) {
    this(
        root,
        f ->
            Files.newOutputStream(
                f,
                StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE));
  }

  /**
   * The one entry point of the shard readers: the shard's local copy when the cache is on and holds
   * it (fetching it whole first on a miss), else {@code storage}'s stream. Which readers use it:
   * the tar reader ({@link TarShardReader}). Counts what it did into {@code tally}.
   *
   * @throws IOException only when storage fails (a local failure falls back to storage)
   */
  static FSDataInputStream open(Shard shard, Configuration conf, CacheTally tally, Storage storage)
      throws IOException {
    CacheSettings s = CacheSettings.current();
    if (!s.enabled() || isLocal(shard, conf)) {
      return storage.open();
    }
    ShardCache cache =
        CACHES.computeIfAbsent(s.dir().toAbsolutePath().normalize(), ShardCache::new);
    return cache.open(shard, conf, s.maxBytes(), tally, storage);
  }

  /** {@link #open(Shard, Configuration, CacheTally, Storage)} through this cache. */
  FSDataInputStream open(
      Shard shard, Configuration conf, long maxBytes, CacheTally tally, Storage storage)
      throws IOException {
    if (dir == null) {
      tally.unusable(unusable);
      return storage.open();
    }
    if (shard.bytes() > maxBytes) {
      return storage.open(); // it could never fit: read in place, evicting nothing
    }
    String key = key(shard);
    try {
      FSDataInputStream local = openEntry(key, tally, true);
      if (local == null) {
        local = fill(shard, conf, key, maxBytes, tally);
      }
      if (local != null) {
        return local;
      }
    } catch (CacheDir.LocalFailure e) {
      failed(e, tally);
    }
    return storage.open(); // not cached (no room, the shard changed) or the cache failed
  }

  /**
   * Under the entry's lock: a copy another task made meanwhile, one on disk, or a fetch; null when
   * the shard could not be cached.
   */
  private FSDataInputStream fill(
      Shard shard, Configuration conf, String key, long maxBytes, CacheTally tally)
      throws IOException {
    try (CacheDir.Held lock = dir.lockEntry(key)) {
      FSDataInputStream local = openEntry(key, tally, true);
      if (local == null && adopt(shard, key, tally)) {
        local = openEntry(key, tally, true);
      }
      if (local == null && fetch(shard, conf, key, maxBytes, tally)) {
        tally.miss(shard.bytes());
        local = openEntry(key, tally, false);
      }
      return local;
    }
  }

  /**
   * The entry's local stream if this JVM knows it is whole; null if not (or it was evicted). Its
   * reads count as served; the open counts as a hit when {@code hit}.
   */
  private FSDataInputStream openEntry(String key, CacheTally tally, boolean hit)
      throws CacheDir.LocalFailure {
    Entry e = pin(key);
    if (e == null) {
      return null;
    }
    try {
      FileChannel ch = FileChannel.open(dir.data(key), StandardOpenOption.READ);
      dir.touch(key);
      if (hit) {
        tally.hit();
      }
      return new FSDataInputStream(new CachedFileStream(ch, e.bytes, tally, () -> unpin(e)));
    } catch (NoSuchFileException evictedElsewhere) {
      unpin(e);
      entries.remove(key, e);
      return null;
    } catch (IOException ex) {
      unpin(e);
      throw new CacheDir.LocalFailure("Cannot open " + dir.data(key) + ": " + ex, ex);
    }
  }

  /**
   * An entry on disk that this JVM has not checked yet (an earlier executor's): its checksum is
   * verified once; a corrupt one is deleted, logged and counted, and never served.
   */
  private boolean adopt(Shard shard, String key, CacheTally tally) throws CacheDir.LocalFailure {
    if (!Files.exists(dir.data(key))) {
      return false;
    }
    switch (dir.verify(key, shard.bytes())) {
      case GOOD -> {
        entries.put(key, new Entry(shard.bytes()));
        return true;
      }
      case CORRUPT -> {
        LOG.warn(
            "Shard cache entry {} of {} does not match its checksum: deleted, fetching the shard"
                + " again",
            dir.data(key),
            shard.uri());
        tally.corrupt();
        dir.delete(key);
        return false;
      }
      default -> {
        return false;
      }
    }
  }

  /** Fetches the shard whole into the cache; false when it could not be cached (read direct). */
  private boolean fetch(
      Shard shard, Configuration conf, String key, long maxBytes, CacheTally tally)
      throws IOException {
    if (!reserve(shard.bytes(), maxBytes, tally)) {
      return false;
    }
    try {
      long crc = dir.download(shard.uri(), shard.bytes(), conf, key);
      if (crc < 0) {
        return false; // storage holds other bytes than were counted: the reader sees them
      }
      dir.commit(key, crc, shard.bytes(), shard.uri());
      entries.put(key, new Entry(shard.bytes()));
      return true;
    } finally {
      synchronized (this) {
        reserved -= shard.bytes();
      }
      CacheDir.deleteQuietly(dir.temporary(key));
    }
  }

  /**
   * Makes room for {@code bytes} by evicting the least recently used entries that no reader of this
   * JVM holds open, and reserves it; false when that cannot be done.
   */
  private boolean reserve(long bytes, long maxBytes, CacheTally tally)
      throws CacheDir.LocalFailure {
    try (CacheDir.Held lock = dir.lockEviction()) {
      long total;
      synchronized (this) {
        total = reserved;
      }
      var stored = dir.entries();
      for (CacheDir.Stored s : stored) {
        total += s.bytes();
      }
      int evicted = 0;
      for (int i = 0; i < stored.size() && total + bytes > maxBytes; i++) {
        if (evict(stored.get(i).key())) {
          total -= stored.get(i).bytes();
          evicted++;
        }
      }
      tally.evicted(evicted);
      synchronized (this) {
        if (total + bytes > maxBytes) {
          return false;
        }
        reserved += bytes;
        return true;
      }
    }
  }

  private synchronized boolean evict(String key) {
    Entry e = entries.get(key);
    if (e != null && e.pins > 0) {
      return false;
    }
    entries.remove(key);
    return dir.delete(key);
  }

  private synchronized Entry pin(String key) {
    Entry e = entries.get(key);
    if (e != null) {
      e.pins++;
    }
    return e;
  }

  private synchronized void unpin(Entry e) {
    e.pins--;
  }

  /** A local failure: logged once per executor (then at debug), counted; the read goes direct. */
  private void failed(CacheDir.LocalFailure e, CacheTally tally) {
    tally.unusable(e.getMessage());
    if (warned.compareAndSet(false, true)) {
      LOG.warn("Shard cache not used for a read, reading from storage instead: {}", e.getMessage());
    } else {
      LOG.debug("Shard cache not used for a read: {}", e.getMessage());
    }
  }

  /** A shard on the node's own file system ({@code file:}) is on local disk already. */
  private static boolean isLocal(Shard shard, Configuration conf) throws IOException {
    return "file"
        .equals(new org.apache.hadoop.fs.Path(shard.uri()).getFileSystem(conf).getScheme());
  }

  /** The entry key: the shard's URI, size and modification time, hashed (SHA-256, 128 bits). */
  static String key(Shard shard) {
    String id = shard.uri() + "\n" + shard.bytes() + "\n" + shard.modificationTime();
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(h, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
