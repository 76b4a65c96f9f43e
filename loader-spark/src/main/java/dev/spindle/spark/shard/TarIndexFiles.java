package dev.spindle.spark.shard;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.attribute.FileTime;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The index files of tar shards ({@link TarIndex}, at {@link TarIndexes#fileOf}): written by the
 * counting tasks, read by the tasks that open a shard through an executor-wide cache bounded in
 * bytes ({@value #CACHE_BYTES}), least recently used first out, so a shard opened by many groups of
 * an epoch has its index fetched once per executor. What was found missing or refused is cached
 * too, and said once per file in the log. Any thread.
 */
final class TarIndexFiles {
  private static final Logger LOG = LoggerFactory.getLogger(TarIndexFiles.class);

  /** Bytes of indexes an executor keeps (about 4 M samples' ranges). */
  static final long CACHE_BYTES = 64L << 20;

  private static final int MAX_FILE_BYTES = 1 << 30;
  private static final Set<String> SAID = ConcurrentHashMap.newKeySet();

  /** Stores whose rename is a copy (sink's AtomicFiles knows the same ones). */
  private static final Set<String> OBJECT_STORES =
      Set.of("s3a", "s3", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "cosn", "obs");

  private static final Cache CACHE = new Cache(CACHE_BYTES);

  private TarIndexFiles() {}

  /**
   * Writes the index of the shard {@code uri} (whose file is {@code status}) from its walk; returns
   * null when it was written, else why not (the walk found no index, the shard lies outside the
   * indexes' base, the file could not be written: logged). Replaces the file in one visible step: a
   * temporary file renamed into place, or a single PUT where renames are not atomic (an object
   * store).
   */
  static String write(
      TarIndexes where,
      String uri,
      FileStatus status,
      TarShardReader.Walk walk,
      Configuration conf) {
    if (walk.notIndexed() != null) {
      return walk.notIndexed();
    }
    String file = where.fileOf(uri);
    if (file == null) {
      return "the shard is not below " + where.base();
    }
    try {
      byte[] bytes =
          new TarIndex(
                  status.getLen(),
                  status.getModificationTime(),
                  changeTime(status.getPath(), conf),
                  walk.starts(),
                  walk.ends())
              .toBytes();
      replace(new Path(file), bytes, conf);
      return null;
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot write {}, the index of {}: {}", file, uri, e.toString());
      return "cannot write " + file + ": " + e.getMessage();
    }
  }

  private static void replace(Path file, byte[] bytes, Configuration conf) throws IOException {
    FileSystem fs = file.getFileSystem(conf);
    String scheme = fs.getUri().getScheme();
    if (scheme != null && OBJECT_STORES.contains(scheme.toLowerCase(Locale.ROOT))) {
      try (OutputStream out = fs.create(file, true)) {
        out.write(bytes); // a single PUT: visible whole or not at all
      }
      return;
    }
    Path temp = new Path(file.getParent(), "." + file.getName() + "." + UUID.randomUUID());
    try {
      try (OutputStream out = fs.create(temp, false)) {
        out.write(bytes);
      }
      fs.delete(file, false);
      if (!fs.rename(temp, file)) {
        throw new IOException("rename " + temp + " to " + file + " failed");
      }
    } finally {
      fs.delete(temp, false);
    }
  }

  /**
   * The index of {@code shard} as the manifest records it, or null when there is none that
   * describes it (missing, damaged, taken of another version of the shard: said once in the log);
   * the shard is then read whole, in order. Fetches count into {@code counters}.
   *
   * @throws IOException when the storage fails
   */
  static TarIndex load(TarIndexes chain, Shard shard, Configuration conf, IoCounters counters)
      throws IOException {
    TarIndexes where = chain.covering(shard.uri());
    String file = where.fileOf(shard.uri());
    if (file == null) {
      return null;
    }
    String key =
        file + "\n" + shard.bytes() + "\n" + shard.modificationTime() + "\n" + shard.samples();
    Cache.Entry cached = CACHE.get(key);
    if (cached == null) {
      cached = fetch(where, file, shard, conf, counters);
      CACHE.put(key, cached);
    }
    String why = cached.why();
    if (cached.index() != null) {
      why = cached.index().changedSince(changeTime(new Path(shard.uri()), conf));
    }
    // a cache written before indexes lacks them all: said once for the folder, not per shard
    String once = cached.index() == null && cached.missing() ? where.root() : key + "\n" + why;
    if (why != null && SAID.add(once)) {
      LOG.warn("No usable index for {}: {}; reading it whole, in order", shard.uri(), why);
    }
    return why == null ? cached.index() : null;
  }

  /**
   * The inode change time (ns) of a file on the local file system, which every write moves and
   * which cannot be set back; -1 on any other file system (an object store's modification time is
   * the time of the write itself).
   */
  static long changeTime(Path path, Configuration conf) throws IOException {
    FileSystem fs = path.getFileSystem(conf);
    java.io.File file =
        fs instanceof LocalFileSystem local
            ? local.pathToFile(path)
            : fs instanceof RawLocalFileSystem raw ? raw.pathToFile(path) : null;
    if (file == null) {
      return -1;
    }
    try {
      FileTime ctime = (FileTime) Files.getAttribute(file.toPath(), "unix:ctime");
      return ctime.to(TimeUnit.NANOSECONDS);
    } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
      return -1;
    }
  }

  private static Cache.Entry fetch(
      TarIndexes where, String file, Shard shard, Configuration conf, IoCounters counters)
      throws IOException {
    Path path = new Path(file);
    byte[] bytes;
    try (InputStream in = path.getFileSystem(conf).open(path)) {
      bytes = in.readNBytes(MAX_FILE_BYTES);
    } catch (ChecksumException e) { // the file system's own checksum (a local .crc) refused it
      counters.request(0);
      return new Cache.Entry(null, file + ": " + e.getMessage());
    } catch (FileNotFoundException e) {
      counters.request(0);
      return new Cache.Entry(
          null,
          file
              + " does not exist (a manifest cache written before indexes were: delete it, or"
              + " count again, to write them; said once for "
              + where.root()
              + ")",
          true);
    }
    counters.request(bytes.length);
    TarIndex index;
    try {
      index = TarIndex.fromBytes(bytes);
    } catch (IllegalArgumentException e) {
      return new Cache.Entry(null, file + ": " + e.getMessage());
    }
    String mismatch = index.mismatch(shard);
    return mismatch == null
        ? new Cache.Entry(index, null)
        : new Cache.Entry(null, file + " does not describe the shard: " + mismatch);
  }

  /** Least recently used out first, bounded in bytes; synchronized. */
  private static final class Cache {
    record Entry(TarIndex index, String why, boolean missing) {
      Entry(TarIndex index, String why) {
        this(index, why, false);
      }

      long bytes() {
        return index == null ? 256 : index.memoryBytes();
      }
    }

    private final long capacity;
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);
    private long bytes;

    Cache(long capacity) {
      this.capacity = capacity;
    }

    synchronized Entry get(String key) {
      return entries.get(key);
    }

    synchronized void put(String key, Entry e) {
      Entry old = entries.put(key, e);
      bytes += e.bytes() - (old == null ? 0 : old.bytes());
      Iterator<Map.Entry<String, Entry>> eldest = entries.entrySet().iterator();
      while (bytes > capacity && eldest.hasNext()) {
        Map.Entry<String, Entry> out = eldest.next();
        if (out.getValue() != e) {
          bytes -= out.getValue().bytes();
          eldest.remove();
        }
      }
    }
  }

  /** Forgets every cached index (tests that rewrite index files in place). */
  static void forgetCached() {
    synchronized (CACHE) {
      CACHE.entries.clear();
      CACHE.bytes = 0;
    }
    SAID.clear();
  }
}
