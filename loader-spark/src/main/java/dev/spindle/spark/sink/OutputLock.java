package dev.spindle.spark.sink;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock a job holds on its output folder from before its first task to after its commit: {@code
 * OUTPUT/_spindle_lock.json}, naming the job, its user, host, driver pid and start time. A second
 * job on the same output is refused at start, naming the holder. A lock whose holder is provably
 * gone is stale and is taken over (and named in the new job's report): on the same host when the
 * pid no longer runs (or now belongs to a process started later); from another host when the holder
 * has not refreshed the lock for {@code staleAfter}. The holder refreshes it from a daemon thread,
 * {@code spindle-output-lock}, every {@code staleAfter / 6}.
 *
 * <p>Creation is atomic where the file system allows it (local, HDFS); on object stores the holder
 * reads the lock back after writing it. Before committing, a job calls {@link #verifyHeld()} so
 * that a job whose lock was taken over (it stopped refreshing, e.g. paused for longer than {@code
 * staleAfter}) fails instead of committing. Driver side; {@link #close()} from any thread,
 * idempotent, releases the lock if it is still this job's.
 */
public final class OutputLock implements AutoCloseable {
  public static final String FILE = "_spindle_lock.json";
  private static final Logger LOG = LoggerFactory.getLogger(OutputLock.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Who holds (or held) a lock. */
  public record Holder(
      String job,
      String description,
      String user,
      String host,
      long pid,
      long processStartMs,
      String started) {

    /** One phrase for messages: job, what it does, user, host, pid, start time. */
    public String describe() {
      return String.format(
          "job %s (%s) started %s by %s on %s, pid %d", job, description, started, user, host, pid);
    }

    Map<String, Object> toJson() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("job", job);
      m.put("description", description);
      m.put("user", user);
      m.put("host", host);
      m.put("pid", pid);
      m.put("process_start_ms", processStartMs);
      m.put("started", started);
      return m;
    }

    static Holder fromJson(Map<?, ?> m) {
      return new Holder(
          String.valueOf(m.get("job")),
          String.valueOf(m.get("description")),
          String.valueOf(m.get("user")),
          String.valueOf(m.get("host")),
          ((Number) m.get("pid")).longValue(),
          ((Number) m.get("process_start_ms")).longValue(),
          String.valueOf(m.get("started")));
    }

    /** This JVM as a holder of a lock for {@code job}. */
    static Holder current(String job, String description) {
      ProcessHandle self = ProcessHandle.current();
      return new Holder(
          job,
          description,
          System.getProperty("user.name"),
          hostName(),
          self.pid(),
          startMs(self).orElse(0L),
          Instant.now().toString());
    }
  }

  /** Thrown when another live job holds the output. */
  public static final class LockedException extends IOException {
    LockedException(String message) {
      super(message);
    }
  }

  private final FileSystem fs;
  private final Path file;
  private final Holder self;
  private final byte[] content;
  private final Holder replacedStale;
  private final String staleReason;
  private final Thread refresher;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile boolean lost;

  private OutputLock(
      FileSystem fs,
      Path file,
      Holder self,
      byte[] content,
      Holder replacedStale,
      String staleReason,
      Duration staleAfter) {
    this.fs = fs;
    this.file = file;
    this.self = self;
    this.content = content;
    this.replacedStale = replacedStale;
    this.staleReason = staleReason;
    long period = Math.max(200, staleAfter.toMillis() / 6);
    this.refresher = new Thread(() -> refreshLoop(period), "spindle-output-lock");
    refresher.setDaemon(true);
    refresher.start();
  }

  /**
   * Takes the lock on {@code output} (which must exist) for {@code job}.
   *
   * @throws LockedException if a live job holds it, naming that job
   */
  public static OutputLock acquire(
      FileSystem fs, Path output, String job, String description, Duration staleAfter)
      throws IOException {
    Path file = new Path(output, FILE);
    Holder self = Holder.current(job, description);
    byte[] content = JSON.writeValueAsBytes(self.toJson());
    Holder stale = null;
    String staleReason = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      if (AtomicFiles.createIfAbsent(fs, file, content) && ownedBy(fs, file, job)) {
        return new OutputLock(fs, file, self, content, stale, staleReason, staleAfter);
      }
      Existing existing = read(fs, file);
      if (existing == null) {
        continue; // released meanwhile
      }
      String dead = deadReason(existing, staleAfter);
      if (dead == null) {
        throw new LockedException(
            "Output "
                + output
                + " is in use by "
                + (existing.holder == null
                    ? "a job whose lock cannot be read"
                    : existing.holder.describe())
                + "; wait for it to finish or stop it (lock file "
                + file
                + ")");
      }
      stale = existing.holder;
      staleReason = dead;
      LOG.warn(
          "Removing the stale lock on {}: {} ({})",
          output,
          stale == null ? "unreadable lock" : stale.describe(),
          dead);
      AtomicFiles.delete(fs, file);
    }
    throw new LockedException("Could not take the lock " + file + ": other jobs keep taking it");
  }

  /** The stale holder this lock replaced, if any. */
  public Optional<Holder> replacedStale() {
    return Optional.ofNullable(replacedStale);
  }

  /** Why the replaced holder was judged gone, or null. */
  public String staleReason() {
    return staleReason;
  }

  /** Fails if the lock is no longer this job's (taken over as stale while this job ran). */
  public void verifyHeld() throws IOException {
    if (lost || !ownedBy(fs, file, self.job())) {
      lost = true;
      throw new LockedException(
          "Job "
              + self.job()
              + " lost its lock on "
              + file.getParent()
              + " (another job took it over as stale); nothing was committed");
    }
  }

  /** Test only: stops refreshing and leaves the lock file, as a killed driver does. */
  void abandon() throws InterruptedException {
    closed.set(true);
    refresher.interrupt();
    refresher.join(5000);
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    refresher.interrupt();
    try {
      synchronized (this) { // after a refresh in flight, before any other: none follows release
        if (ownedBy(fs, file, self.job())) {
          AtomicFiles.delete(fs, file);
        }
      }
    } catch (IOException e) {
      LOG.warn("Could not release the lock {}: {}", file, e.toString());
    }
  }

  private void refreshLoop(long periodMs) {
    while (!closed.get()) {
      try {
        Thread.sleep(periodMs);
        if (!refresh()) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      } catch (IOException e) {
        LOG.warn("Could not refresh the lock {}: {}", file, e.toString());
      }
    }
  }

  /**
   * Rewrites the lock (a new modification time) unless it was released or taken over; false when it
   * no longer should be refreshed. Under the monitor {@link #close()} releases it in, so a refresh
   * never recreates a released lock.
   */
  private synchronized boolean refresh() throws IOException {
    if (closed.get()) {
      return false;
    }
    if (!ownedBy(fs, file, self.job())) {
      lost = true;
      LOG.error("Lock {} was taken over by another job; this job will not commit", file);
      return false;
    }
    AtomicFiles.replace(fs, file, content);
    return true;
  }

  /** A lock file as found: its holder (null if unreadable) and last modification. */
  private record Existing(Holder holder, long modifiedMs) {}

  private static Existing read(FileSystem fs, Path file) throws IOException {
    long modified;
    byte[] bytes;
    try {
      modified = fs.getFileStatus(file).getModificationTime();
      try (InputStream in = fs.open(file)) {
        bytes = in.readNBytes(1 << 16);
      }
    } catch (FileNotFoundException e) {
      return null;
    }
    try {
      return new Existing(Holder.fromJson(JSON.readValue(bytes, Map.class)), modified);
    } catch (IOException | RuntimeException e) {
      return new Existing(null, modified);
    }
  }

  private static boolean ownedBy(FileSystem fs, Path file, String job) throws IOException {
    Existing e = read(fs, file);
    return e != null && e.holder != null && e.holder.job().equals(job);
  }

  /** Why the holder is provably gone, or null while it may be alive. */
  private static String deadReason(Existing e, Duration staleAfter) {
    long silentMs = System.currentTimeMillis() - e.modifiedMs;
    if (e.holder == null || !e.holder.host().equals(hostName())) {
      return silentMs > staleAfter.toMillis()
          ? String.format(
              "not refreshed for %d s (spark.spindle.output.staleLockSeconds=%d)",
              silentMs / 1000, staleAfter.toSeconds())
          : null;
    }
    Optional<ProcessHandle> process = ProcessHandle.of(e.holder.pid());
    if (process.isEmpty() || !process.get().isAlive()) {
      return "its driver, pid " + e.holder.pid() + " on " + e.holder.host() + ", is not running";
    }
    Optional<Long> start = startMs(process.get());
    if (e.holder.processStartMs() != 0
        && start.isPresent()
        && Math.abs(start.get() - e.holder.processStartMs()) > 1000) {
      return "pid "
          + e.holder.pid()
          + " on "
          + e.holder.host()
          + " now belongs to a process started later";
    }
    return null;
  }

  private static Optional<Long> startMs(ProcessHandle p) {
    return p.info().startInstant().map(Instant::toEpochMilli);
  }

  /** This machine's name as locks record it. */
  public static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      String env = System.getenv("HOSTNAME");
      return env != null ? env : "unknown-host";
    }
  }
}
