package dev.spindle.spark.shard;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;
import org.apache.hadoop.conf.Configuration;

/**
 * The shard cache's folder: one committed entry per shard, {@code <key>.data} (the shard's bytes)
 * with {@code <key>.crc} beside it (CRC-32C, size and URI). An entry exists once its {@code .data}
 * is there: a fetch writes {@code <key>.tmp}, then renames the checksum, then the data into place
 * (atomic renames), so a fetch killed at any point leaves a temporary file or a lone checksum,
 * never a {@code .data} that is not whole. Last use is the {@code .data}'s modification time,
 * touched on every open (LRU across every executor sharing the folder).
 *
 * <p>Locks: writes of an entry happen under its stripe's lock (one of 256 by key, {@code
 * locks/NN.lock}), eviction under {@code locks/evict.lock}; each is a JVM lock (threads) plus an OS
 * file lock (other executors on the node), which the OS drops when its process dies, so a killed
 * executor never blocks the others. Any thread; the JVM locks are shared by every instance on the
 * same folder.
 */
final class CacheDir {
  private static final Map<Path, ReentrantLock[]> JVM_LOCKS = new ConcurrentHashMap<>();
  private static final int STRIPES = 256;
  private static final int BUFFER = 1 << 20;

  /** Where a fetch writes its temporary file (tests put a full disk here). */
  interface Outputs {
    OutputStream create(Path file) throws IOException;
  }

  /** A committed entry as listed: its key, size and last use. */
  record Stored(String key, long bytes, FileTime lastUse) {}

  /** The local side failed (folder unusable, disk full): the read goes to storage instead. */
  static final class LocalFailure extends IOException {
    LocalFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** A held lock; closing releases it (OS lock, then the JVM lock). */
  static final class Held implements AutoCloseable {
    private final ReentrantLock jvm;
    private final FileChannel channel;

    private Held(ReentrantLock jvm, FileChannel channel) {
      this.jvm = jvm;
      this.channel = channel;
    }

    @Override
    public void close() throws LocalFailure {
      try {
        channel.close(); // releases the OS lock
      } catch (IOException e) {
        throw new LocalFailure("Cannot release a shard cache lock: " + e, e);
      } finally {
        jvm.unlock();
      }
    }
  }

  private final Path root;
  private final Path locks;
  private final ReentrantLock[] jvmLocks; // STRIPES stripes, then the eviction lock
  private final Outputs outputs;

  /**
   * Makes the folder (and its {@code locks/}) and checks it can be written.
   *
   * @throws LocalFailure naming the folder and why it cannot be used
   */
  CacheDir(Path root, Outputs outputs) throws LocalFailure {
    this.root = root.toAbsolutePath().normalize();
    this.locks = this.root.resolve("locks");
    this.outputs = outputs;
    this.jvmLocks = JVM_LOCKS.computeIfAbsent(this.root, r -> newLocks());
    try {
      Files.createDirectories(locks);
      Path probe = this.root.resolve(".probe-" + UUID.randomUUID());
      Files.write(probe, new byte[1]);
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new LocalFailure("shard cache folder " + this.root + " cannot be used: " + e, e);
    }
  }

  private static ReentrantLock[] newLocks() {
    ReentrantLock[] l = new ReentrantLock[STRIPES + 1];
    for (int i = 0; i < l.length; i++) {
      l[i] = new ReentrantLock();
    }
    return l;
  }

  Path root() {
    return root;
  }

  Path data(String key) {
    return root.resolve(key + ".data");
  }

  Path checksum(String key) {
    return root.resolve(key + ".crc");
  }

  Path temporary(String key) {
    return root.resolve(key + ".tmp");
  }

  /** Waits for the lock under which {@code key}'s entry is written. */
  Held lockEntry(String key) throws LocalFailure {
    int stripe = Integer.parseInt(key.substring(0, 2), 16);
    return lock(jvmLocks[stripe], String.format("%02x.lock", stripe), true);
  }

  /** The entry's lock if no one holds it now, else null. */
  Held tryLockEntry(String key) throws LocalFailure {
    int stripe = Integer.parseInt(key.substring(0, 2), 16);
    return lock(jvmLocks[stripe], String.format("%02x.lock", stripe), false);
  }

  /** Waits for the lock under which entries are evicted to make room. */
  Held lockEviction() throws LocalFailure {
    return lock(jvmLocks[STRIPES], "evict.lock", true);
  }

  private Held lock(ReentrantLock jvm, String file, boolean wait) throws LocalFailure {
    if (wait) {
      jvm.lock();
    } else if (!jvm.tryLock()) {
      return null;
    }
    FileChannel ch = null;
    try {
      ch =
          FileChannel.open(
              locks.resolve(file), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock held = wait ? ch.lock() : ch.tryLock();
      if (held == null) {
        ch.close();
        jvm.unlock();
        return null;
      }
      return new Held(jvm, ch);
    } catch (IOException | RuntimeException e) {
      closeQuietly(ch);
      jvm.unlock();
      throw new LocalFailure("Cannot lock " + locks.resolve(file) + ": " + e, e);
    }
  }

  /**
   * Reads the shard whole from storage into {@code key}'s temporary file, checksumming it.
   *
   * @return the CRC-32C, or -1 when storage held another number of bytes than {@code bytes} (the
   *     shard changed since it was counted: not cached)
   * @throws LocalFailure when the temporary file cannot be written (the disk full)
   * @throws IOException when storage fails
   */
  long download(String uri, long bytes, Configuration conf, String key) throws IOException {
    org.apache.hadoop.fs.Path src = new org.apache.hadoop.fs.Path(uri);
    CRC32C crc = new CRC32C();
    byte[] buf = new byte[BUFFER];
    long n = 0;
    try (InputStream in = src.getFileSystem(conf).open(src, BUFFER);
        OutputStream out = local(temporary(key))) {
      for (int r = in.read(buf); r > 0 && n <= bytes; r = in.read(buf)) {
        crc.update(buf, 0, r);
        out.write(buf, 0, r);
        n += r;
      }
    }
    return n == bytes ? crc.getValue() : -1;
  }

  private OutputStream local(Path file) throws LocalFailure {
    OutputStream out;
    try {
      out = outputs.create(file);
    } catch (IOException e) {
      throw new LocalFailure("Cannot write " + file + ": " + e, e);
    }
    return new FilterOutputStream(out) {
      @Override
      public void write(byte[] b, int off, int len) throws LocalFailure {
        try {
          out.write(b, off, len);
        } catch (IOException e) {
          throw new LocalFailure("Cannot write " + file + ": " + e, e);
        }
      }

      @Override
      public void close() throws LocalFailure {
        try {
          out.close();
        } catch (IOException e) {
          throw new LocalFailure("Cannot write " + file + ": " + e, e);
        }
      }
    };
  }

  /** Commits the downloaded temporary file: its checksum, then the data, renamed into place. */
  void commit(String key, long crc, long bytes, String uri) throws LocalFailure {
    Path crcTemp = root.resolve(key + ".crc.tmp");
    String text = String.format("crc32c %08x bytes %d%n%s%n", crc, bytes, uri);
    try {
      Files.writeString(crcTemp, text, StandardCharsets.UTF_8);
      Files.move(crcTemp, checksum(key), StandardCopyOption.ATOMIC_MOVE);
      Files.move(temporary(key), data(key), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      deleteQuietly(crcTemp);
      throw new LocalFailure("Cannot commit shard cache entry " + data(key) + ": " + e, e);
    }
  }

  /** What checking an entry found. */
  enum Check {
    GOOD,
    ABSENT,
    CORRUPT
  }

  /**
   * Checks a committed entry against its checksum file: size and CRC-32C of every byte. ABSENT when
   * its data or checksum is gone (evicted meanwhile).
   */
  Check verify(String key, long bytes) throws LocalFailure {
    try (FileChannel ch = FileChannel.open(data(key), StandardOpenOption.READ)) {
      String[] recorded = Files.readString(checksum(key), StandardCharsets.UTF_8).split("\\s+");
      if (recorded.length < 4
          || ch.size() != bytes
          || !recorded[3].equals(Long.toString(bytes))
          || !recorded[1].equals(String.format("%08x", crcOf(ch)))) {
        return Check.CORRUPT;
      }
      return Check.GOOD;
    } catch (NoSuchFileException gone) {
      return Check.ABSENT;
    } catch (IOException e) {
      throw new LocalFailure("Cannot read shard cache entry " + data(key) + ": " + e, e);
    }
  }

  private static long crcOf(FileChannel ch) throws IOException {
    CRC32C crc = new CRC32C();
    ByteBuffer buf = ByteBuffer.allocate(BUFFER);
    while (ch.read(buf) > 0) {
      buf.flip();
      crc.update(buf);
      buf.clear();
    }
    return crc.getValue();
  }

  /** Marks the entry used now. */
  void touch(String key) {
    try {
      Files.setLastModifiedTime(data(key), FileTime.fromMillis(System.currentTimeMillis()));
    } catch (IOException ignored) {
      // last use only orders eviction; an entry evicted meanwhile is found missing when opened
    }
  }

  /** Deletes an entry (data first: without it the entry does not exist); true if it was there. */
  boolean delete(String key) {
    boolean had = deleteQuietly(data(key));
    deleteQuietly(checksum(key));
    return had;
  }

  /** The committed entries, least recently used first. */
  List<Stored> entries() throws LocalFailure {
    List<Stored> out = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(root, "*.data")) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        try {
          BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
          out.add(new Stored(name.substring(0, name.length() - 5), a.size(), a.lastModifiedTime()));
        } catch (NoSuchFileException evictedMeanwhile) {
          // another executor deleted it between the listing and here
        }
      }
    } catch (IOException e) {
      throw new LocalFailure("Cannot list shard cache folder " + root + ": " + e, e);
    }
    out.sort(Comparator.comparing(Stored::lastUse));
    return out;
  }

  /**
   * Deletes what killed fetches left: temporary files and checksums without data, of entries no one
   * is writing now (their lock is free). Returns how many files it deleted.
   */
  int cleanLeftovers() throws LocalFailure {
    int n = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(root, "*.{tmp,crc}")) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        String key = name.substring(0, name.indexOf('.'));
        if (!key.matches("[0-9a-f]{32}") || name.endsWith(".crc") && Files.exists(data(key))) {
          continue;
        }
        try (Held free = tryLockEntry(key)) {
          if (free != null && deleteQuietly(f)) {
            n++;
          }
        }
      }
    } catch (IOException e) {
      throw new LocalFailure("Cannot list shard cache folder " + root + ": " + e, e);
    }
    return n;
  }

  static boolean deleteQuietly(Path f) {
    try {
      return Files.deleteIfExists(f);
    } catch (IOException e) {
      return false;
    }
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // already failing
      }
    }
  }
}
