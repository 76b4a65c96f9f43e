package dev.spindle.spark.iobench;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The counted store, for benchmarks: any Hadoop file system seen as an object store would be,
 * counting in {@link StoreCounters} (across the JVM) the read requests and bytes its callers cost
 * and, separately, its listing and status calls, and pausing a configurable latency before each
 * (requests in flight at once wait at once, as on a real store). The request model is {@link
 * CountedInputStream}'s. Never in the product: only {@code bench io} and tests register it.
 *
 * <p>Registered under its own scheme: {@code fs.counted.impl} = this class. The mapping is {@code
 * counted:///P} ↔ {@code T/P}, where {@code T} is the scheme and authority of {@code
 * fs.counted.target} (default {@code file:///}): {@code counted:///data/shard-00000.tar} reads
 * {@code file:///data/shard-00000.tar}. The path is kept whole, so a data set's shard names, sample
 * keys and manifest order are those of the same files read directly, and any store (HDFS, S3A) can
 * be the target without encoding its authority (a host and port, a bucket) into ours. {@code
 * fs.counted.latency.ms} (default 0) is the latency, read when an instance is created: with several
 * latencies in one JVM, disable Hadoop's cache of instances ({@code
 * fs.counted.impl.disable.cache=true}).
 *
 * <p>Why {@link FileSystem} and not {@code FilterFileSystem}: the latter passes every call it
 * forwards (some 60, {@code openFile} among them) straight to the wrapped store, so a reader using
 * one this class forgot would read uncounted. Here the file system's primitives (open, status,
 * listing, create, rename, delete, mkdirs) translate paths and count; everything else is {@link
 * FileSystem}'s own default, built on those primitives: {@code openFile} builders open through
 * {@link #open} (their read policy and length options are hints an object store uses to save a
 * HEAD; this store never costs one on open), {@code exists} and {@code globStatus} count status and
 * listing calls, {@code listFiles} lists through {@link #listStatus}. Writes are translated, not
 * counted.
 *
 * <p>Statuses carry the wrapped store's length, kind, replication, block size and times under the
 * counted path; permissions and owners are the defaults (readers here use none of them). The
 * wrapped file system comes from Hadoop's cache and is shared: closing this one leaves it open.
 * Thread-safe as the wrapped one is.
 */
public final class CountingFileSystem extends FileSystem {
  public static final String SCHEME = "counted";
  public static final String IMPL_KEY = "fs.counted.impl";
  public static final String TARGET_KEY = "fs.counted.target";
  public static final String LATENCY_KEY = "fs.counted.latency.ms";
  private static final URI ROOT = URI.create(SCHEME + ":///");

  private FileSystem inner;
  private URI target;
  private long latencyNanos;
  private Path workingDir;

  /** {@code counted:///} + the absolute path of {@code file}: the same file through this store. */
  public static String uriOf(java.nio.file.Path file) {
    return SCHEME + "://" + file.toAbsolutePath().toUri().getRawPath();
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    setConf(conf);
    if (name.getAuthority() != null && !name.getAuthority().isEmpty()) {
      throw new IllegalArgumentException(
          "Invalid counted-store URI: "
              + name
              + " (no authority: counted:///PATH reads PATH of "
              + TARGET_KEY
              + ")");
    }
    long ms = conf.getLong(LATENCY_KEY, 0);
    if (ms < 0) {
      throw new IllegalArgumentException(
          "Invalid " + LATENCY_KEY + ": " + ms + " (must be >= 0 milliseconds)");
    }
    latencyNanos = ms * 1_000_000L;
    target = URI.create(conf.get(TARGET_KEY, "file:///"));
    inner = FileSystem.get(target, conf);
    workingDir = outer(inner.getWorkingDirectory());
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public URI getUri() {
    return ROOT;
  }

  /** Opens the file; the open costs no request, its first read does. */
  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    FSDataInputStream in = inner.open(toInner(f), bufferSize);
    StoreCounters.opened();
    return new FSDataInputStream(new CountedInputStream(in, latencyNanos, makeQualified(f)));
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    StoreCounters.statused();
    pause(latencyNanos);
    return outer(inner.getFileStatus(toInner(f)));
  }

  @Override
  public FileStatus[] listStatus(Path f) throws FileNotFoundException, IOException {
    StoreCounters.listed();
    pause(latencyNanos);
    return Arrays.stream(inner.listStatus(toInner(f))).map(this::outer).toArray(FileStatus[]::new);
  }

  /** One listing call for the whole folder (a store pages it; the pages are not counted apart). */
  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path f) throws IOException {
    StoreCounters.listed();
    pause(latencyNanos);
    RemoteIterator<FileStatus> it = inner.listStatusIterator(toInner(f));
    return new RemoteIterator<>() {
      @Override
      public boolean hasNext() throws IOException {
        return it.hasNext();
      }

      @Override
      public FileStatus next() throws IOException {
        return outer(it.next());
      }
    };
  }

  @Override
  public FSDataOutputStream create(
      Path f,
      FsPermission permission,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    return inner.create(
        toInner(f), permission, overwrite, bufferSize, replication, blockSize, progress);
  }

  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress)
      throws IOException {
    return inner.append(toInner(f), bufferSize, progress);
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    return inner.rename(toInner(src), toInner(dst));
  }

  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    return inner.delete(toInner(f), recursive);
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    return inner.mkdirs(toInner(f), permission);
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = makeQualified(dir);
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }

  /** {@code counted:///P} (or {@code /P}, relative to the working folder) as the target's path. */
  Path toInner(Path p) {
    Path q = makeQualified(p); // refuses another scheme or an authority: "Wrong FS"
    return new Path(target.getScheme(), target.getAuthority(), q.toUri().getPath());
  }

  private static Path outer(Path innerPath) {
    return new Path(SCHEME, null, innerPath.toUri().getPath());
  }

  private FileStatus outer(FileStatus s) {
    return new FileStatus(
        s.getLen(),
        s.isDirectory(),
        s.getReplication(),
        s.getBlockSize(),
        s.getModificationTime(),
        s.getAccessTime(),
        null,
        null,
        null,
        outer(s.getPath()));
  }

  /** The store's latency, on the calling thread; an interrupt ends it as an I/O interruption. */
  static void pause(long nanos) throws InterruptedIOException {
    if (nanos <= 0) {
      return;
    }
    StoreCounters.waiting();
    try {
      Thread.sleep(nanos / 1_000_000L, (int) (nanos % 1_000_000L));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      InterruptedIOException io = new InterruptedIOException("Interrupted in the store's latency");
      io.initCause(e);
      throw io;
    } finally {
      StoreCounters.doneWaiting();
    }
  }
}
