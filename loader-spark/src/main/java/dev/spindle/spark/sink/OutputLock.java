package dev.spindle.spark.sink;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock a job holds on its output folder from before its first task to after its commit: {@code
 * OUTPUT/_spindle_lock.json} ({@link LockFile}), naming the job, its user, host, driver pid and
 * start time, and a lease: the holder renews it from a daemon thread, {@code spindle-output-lock},
 * every sixth of its lease ({@code spark.spindle.output.staleLockSeconds}), writing its heartbeat
 * time. A second job on the same output is refused at start, naming the holder. A lock is stale,
 * and taken over (named in the new job's report), only when its holder is provably gone:
 *
 * <ul>
 *   <li>its lease ran out: not renewed for the longer of this job's lease and the holder's (the
 *       later of its heartbeat and the file's modification time counts);
 *   <li>or, sooner, its driver's pid no longer runs (or now belongs to a process started later) and
 *       the holder is certainly in this JVM's PID namespace ({@link ProcessSpace#certainlySame}:
 *       same host, kernel boot and {@code /proc/self/ns/pid}). A host name alone is not enough:
 *       containers with host networking share it across PID namespaces, where another job's pid
 *       means nothing here.
 * </ul>
 *
 * Creation is atomic where the file system allows it (local, HDFS); on object stores the holder
 * reads the lock back after writing it. A job whose lease lapsed (its driver paused or was cut off
 * from the file system for longer than it) may find its lock taken over: before each visible step
 * of its commit it calls {@link #requireHeld()} (and {@link #renew()} before the first and before
 * the manifest switch), which fail naming the job that took the lock. Driver side; {@link #close()}
 * from any thread, idempotent, releases the lock if it is still this job's.
 */
public final class OutputLock implements AutoCloseable {
  public static final String FILE = "_spindle_lock.json";
  private static final Logger LOG = LoggerFactory.getLogger(OutputLock.class);

  /**
   * Who holds (or held) a lock.
   *
   * @param bootId the kernel boot of its driver ({@link ProcessSpace}), or null where unknown or
   *     written before it was recorded
   * @param pidNamespace its driver's PID namespace, or null likewise
   */
  public record Holder(
      String job,
      String description,
      String user,
      String host,
      long pid,
      long processStartMs,
      String started,
      String bootId,
      String pidNamespace) {

    /** One phrase for messages: job, what it does, user, host, pid, start time. */
    public String describe() {
      return String.format(
          "job %s (%s) started %s by %s on %s, pid %d", job, description, started, user, host, pid);
    }

    ProcessSpace space() {
      return new ProcessSpace(host, bootId, pidNamespace);
    }

    /** This JVM as a holder of a lock for {@code job}. */
    static Holder current(String job, String description) {
      ProcessHandle self = ProcessHandle.current();
      ProcessSpace space = ProcessSpace.current();
      return new Holder(
          job,
          description,
          System.getProperty("user.name"),
          space.host(),
          self.pid(),
          startMs(self).orElse(0L),
          Instant.now().toString(),
          space.bootId(),
          space.pidNamespace());
    }
  }

  /** Thrown when another live job holds the output, or took it over from this one. */
  public static final class LockedException extends IOException {
    LockedException(String message) {
      super(message);
    }
  }

  private final FileSystem fs;
  private final Path file;
  private final Holder self;
  private final Duration lease;
  private final Holder replacedStale;
  private final String staleReason;
  private final Thread refresher;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile LockFile.Found takenOver; // what was found instead of this job's lock
  private volatile boolean lost;
  private volatile long renewedNanos; // nanoTime before the last renewal that was written

  private OutputLock(
      FileSystem fs,
      Path file,
      Holder self,
      Duration lease,
      Holder replacedStale,
      String staleReason,
      long renewedNanos) {
    this.fs = fs;
    this.file = file;
    this.self = self;
    this.lease = lease;
    this.replacedStale = replacedStale;
    this.staleReason = staleReason;
    this.renewedNanos = renewedNanos;
    long period = Math.max(200, lease.toMillis() / 6);
    this.refresher = new Thread(() -> refreshLoop(period), "spindle-output-lock");
    refresher.setDaemon(true);
    refresher.start();
  }

  /**
   * Takes the lock on {@code output} (which must exist) for {@code job}.
   *
   * @param lease how long this job may go without renewing, and how long another's lock must have
   *     gone without renewal to be stale (unless that one promised longer)
   * @throws LockedException if a live job holds it, naming that job
   */
  public static OutputLock acquire(
      FileSystem fs, Path output, String job, String description, Duration lease)
      throws IOException {
    Path file = new Path(output, FILE);
    Holder self = Holder.current(job, description);
    Holder stale = null;
    String staleReason = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      long before = System.nanoTime();
      if (AtomicFiles.createIfAbsent(fs, file, LockFile.encode(self, lease.toMillis()))
          && heldBy(fs, file, job)) {
        return new OutputLock(fs, file, self, lease, stale, staleReason, before);
      }
      LockFile.Found existing = LockFile.read(fs, file);
      if (existing == null) {
        continue; // released meanwhile
      }
      String dead = deadReason(existing, lease);
      if (dead == null) {
        throw new LockedException(
            "Output "
                + output
                + " is in use by "
                + describe(existing)
                + "; wait for it to finish or stop it (lock file "
                + file
                + ")");
      }
      LOG.warn("Removing the stale lock on {}: {} ({})", output, describe(existing), dead);
      // only the lock judged stale: one renewed or taken by another job meanwhile is read again
      if (existing.sameAs(LockFile.read(fs, file))) {
        stale = existing.holder();
        staleReason = dead;
        AtomicFiles.delete(fs, file);
      }
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

  /**
   * Checks that the lock is still this job's and renews its lease now: no other job can take it
   * over for a whole lease from here (unless clocks disagree by as much). Called before a commit's
   * first visible change and before its manifest switch. The check is a read, the renewal a write:
   * a driver paused between the two for a whole lease would write over a lock taken over meanwhile;
   * the job that took it then fails at its next check naming this one, and this one has nothing to
   * commit (the other removed its attempt files when it took over).
   *
   * @throws LockedException naming the job that took the lock over
   */
  public synchronized void renew() throws IOException {
    long before = System.nanoTime();
    LockFile.Found found = LockFile.read(fs, file);
    if (lost || found == null || !found.heldBy(self.job())) {
      throw lostTo(found);
    }
    try {
      AtomicFiles.replace(fs, file, LockFile.encode(self, lease.toMillis()));
    } catch (IOException e) {
      throw new OutputWriteException("Cannot renew the lock " + file, e);
    }
    renewedNanos = before;
  }

  /**
   * Fails if the lock was found taken over; renews it ({@link #renew()}) when its last renewal is
   * older than a third of the lease, so that each commit step starts with most of a lease ahead.
   */
  public void requireHeld() throws IOException {
    if (lost) {
      throw lostTo(takenOver);
    }
    if (System.nanoTime() - renewedNanos > lease.toNanos() / 3) {
      renew();
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
        if (heldBy(fs, file, self.job())) {
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
   * Renews the lock unless it was released or taken over; false when it no longer should be
   * refreshed. Under the monitor {@link #close()} releases it in, so a refresh never recreates a
   * released lock.
   */
  private synchronized boolean refresh() throws IOException {
    if (closed.get()) {
      return false;
    }
    try {
      renew();
      return true;
    } catch (LockedException e) {
      LOG.error("{}", e.getMessage());
      return false;
    }
  }

  /** Marks the lock lost to {@code found} and says so, naming the job that holds it now. */
  private LockedException lostTo(LockFile.Found found) {
    if (!lost) {
      takenOver = found;
      lost = true;
    }
    return new LockedException(
        "Job "
            + self.job()
            + " lost its lock on "
            + file.getParent()
            + " to "
            + (takenOver == null ? "nobody (the lock file was removed)" : describe(takenOver))
            + ": it was taken over as stale, as this job had not renewed it within its lease of "
            + lease.toSeconds()
            + " s (spark.spindle.output.staleLockSeconds; a driver paused or cut off from the"
            + " file system that long); this job commits nothing and leaves the other job's files"
            + " alone");
  }

  private static String describe(LockFile.Found found) {
    return found.holder() == null ? "a job whose lock cannot be read" : found.holder().describe();
  }

  private static boolean heldBy(FileSystem fs, Path file, String job) throws IOException {
    LockFile.Found found = LockFile.read(fs, file);
    return found != null && found.heldBy(job);
  }

  /** Why the holder is provably gone, or null while it may be alive. */
  static String deadReason(LockFile.Found e, Duration lease) {
    long leaseMs = Math.max(lease.toMillis(), e.leaseMs());
    long silentMs = System.currentTimeMillis() - e.lastRenewalMs();
    if (silentMs > leaseMs) {
      return String.format(
          "not refreshed for %d s (lease %d s; spark.spindle.output.staleLockSeconds=%d)",
          silentMs / 1000, leaseMs / 1000, lease.toSeconds());
    }
    if (e.holder() == null || !ProcessSpace.current().certainlySame(e.holder().space())) {
      return null; // another machine or PID namespace: its pid means nothing here
    }
    return deadPid(e.holder());
  }

  /** Why the holder's driver, in this JVM's PID namespace, is gone, or null while it runs. */
  private static String deadPid(Holder h) {
    Optional<ProcessHandle> process = ProcessHandle.of(h.pid());
    if (process.isEmpty() || !process.get().isAlive()) {
      return "its driver, pid " + h.pid() + " on " + h.host() + ", is not running";
    }
    Optional<Long> start = startMs(process.get());
    if (h.processStartMs() != 0
        && start.isPresent()
        && Math.abs(start.get() - h.processStartMs()) > 1000) {
      return "pid " + h.pid() + " on " + h.host() + " now belongs to a process started later";
    }
    return null;
  }

  private static Optional<Long> startMs(ProcessHandle p) {
    return p.info().startInstant().map(Instant::toEpochMilli);
  }

  /** This machine's name as locks record it. */
  public static String hostName() {
    return ProcessSpace.current().host();
  }

  /** This JVM's kernel boot id as its locks record it ({@code boot_id}), or null where unknown. */
  public static String bootId() {
    return ProcessSpace.current().bootId();
  }

  /**
   * This JVM's PID namespace as its locks record it ({@code pid_namespace}), or null where unknown:
   * with {@link #bootId()} and {@link #hostName()}, what a lock must name for its pid to count
   * here.
   */
  public static String pidNamespace() {
    return ProcessSpace.current().pidNamespace();
  }
}
