package dev.spindle.spark.sink;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Driver-side commit protocol for a job's output folder. The manifest is the truth: a reader trusts
 * {@code _manifest.json} and the files it lists, nothing else.
 *
 * <pre>
 *  setup()   before any task: output writable? take {@link OutputLock}; remove what dead jobs
 *            left (_temporary/, part files no manifest lists); refuse committed output unless
 *            overwrite; create _temporary/&lt;job&gt;/
 *  tasks     write _temporary/&lt;job&gt;/part-NNNNN.attempt-&lt;id&gt;.arrow (or .parquet)
 *  commit()  the lock still ours? (its lease checked and renewed, before each step too) →
 *            rename the one received attempt per partition to part-NNNNN-&lt;job tag&gt;.arrow
 *            (new names: the old output's files stay untouched) → replace _manifest.json in
 *            one atomic step → delete the old output's files → delete _temporary/&lt;job&gt;/
 *  abort()   delete _temporary/&lt;job&gt;/ (on every failure path)
 *  close()   release the lock; remove the folders setup() created if they are empty (a failed
 *            job leaves no empty output folder behind)
 * </pre>
 *
 * {@link #precheck} refuses, before a job starts, what {@code setup()} would refuse without the
 * lock.
 *
 * <p>At every instant the manifest lists a complete output, the old one until the switch and the
 * new one after it, whether the driver dies or not; what an interrupted job leaves behind is
 * unlisted and removed by the next job on that output. Runs on the driver, one thread.
 */
public final class OutputCommitter implements AutoCloseable {
  public static final String MANIFEST = "_manifest.json";
  static final String TEMPORARY = "_temporary";
  private static final Logger LOG = LoggerFactory.getLogger(OutputCommitter.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern OWN_PART =
      Pattern.compile("part-\\d{5}-[0-9a-f]{8}\\.(arrow|parquet)");
  private static final Pattern OWN_TEMP =
      Pattern.compile(
          "\\.("
              + Pattern.quote(MANIFEST)
              + "|"
              + Pattern.quote(OutputLock.FILE)
              + ")\\.[0-9a-f-]{36}");

  /**
   * How to commit.
   *
   * @param overwrite replace committed output (else refuse it)
   * @param staleLock the lock's lease: this job renews it every sixth of this, and another job's
   *     lock counts as stale after this long without renewal ({@link OutputLock})
   * @param format the format of the files the tasks write (their extension)
   */
  public record Settings(boolean overwrite, Duration staleLock, OutputFormat format) {}

  /**
   * Test only, a JVM system property: the driver pauses this many milliseconds before each step of
   * a commit, so a fault test can kill a driver JVM mid-commit. Not a Spark setting on purpose: no
   * user configuration can slow a commit down.
   */
  public static final String STEP_DELAY_PROPERTY = "spindle.test.commitStepDelayMs";

  /**
   * What {@link #setup()} found and removed.
   *
   * @param staleLock the dead job whose lock was taken over, or null
   * @param staleReason why it was judged dead, or null
   * @param removed files and folders left by dead jobs, removed
   */
  public record Recovery(OutputLock.Holder staleLock, String staleReason, List<String> removed) {}

  private final Path output;
  private final FileSystem fs;
  private final String jobId;
  private final String tag;
  private final String description;
  private final Settings settings;
  private OutputLock lock;

  /** The output folder and its parents that {@link #setup} created, deepest first. */
  private List<Path> created = List.of();

  private java.util.function.Consumer<String> stepHook = step -> {};

  public OutputCommitter(String output, Configuration conf, String description, Settings settings)
      throws IOException {
    this.output = new Path(output);
    this.fs = this.output.getFileSystem(conf);
    this.jobId = UUID.randomUUID().toString();
    this.tag = jobId.replace("-", "").substring(0, 8);
    this.description = description;
    this.settings = settings;
  }

  /**
   * Before any task: checks the output can be written, takes its lock, removes what dead jobs left,
   * refuses committed output unless overwriting, and creates the job's temporary folder.
   *
   * @throws OutputLock.LockedException when another live job holds the output
   */
  public Recovery setup() throws IOException {
    ensureFolder();
    try {
      lock = OutputLock.acquire(fs, output, jobId, description, settings.staleLock());
    } catch (OutputLock.LockedException e) {
      throw e;
    } catch (IOException e) {
      throw new OutputWriteException("Output " + output + " is not writable", e);
    }
    try {
      List<String> removed = removeLeftovers();
      if (!settings.overwrite() && holdsOutput()) {
        throw new IOException(committedOutput(output));
      }
      createJobTemporary();
      return new Recovery(lock.replacedStale().orElse(null), lock.staleReason(), removed);
    } catch (IOException | RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  /**
   * Before a job starts (before its Spark session, on the driver): refuses what {@link #setup}
   * would refuse without taking the lock, with the same messages: an output that is a file, or that
   * holds committed output (its manifest) without {@code overwrite}; or a new output whose nearest
   * existing parent is a file or, on the local file system, not writable. Creates nothing; {@link
   * #setup} checks again under the lock.
   */
  public static void precheck(String output, Configuration conf, boolean overwrite)
      throws IOException {
    Path out = new Path(output);
    FileSystem fs = out.getFileSystem(conf);
    Path existing = out;
    while (existing != null && !fs.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return; // nothing exists, not even the root: the job's own attempt says why
    }
    if (fs.getFileStatus(existing).isFile()) {
      throw new IOException(
          existing.equals(out)
              ? notAFolder(out)
              : "Output " + out + " cannot be created: " + existing + " is a file");
    }
    if (existing.equals(out) && !overwrite && fs.exists(new Path(out, MANIFEST))) {
      throw new IOException(committedOutput(out));
    }
    if (fs instanceof LocalFileSystem local
        && !Files.isWritable(local.pathToFile(existing).toPath())) {
      throw new OutputWriteException(
          "Output " + out + " is not writable",
          new AccessDeniedException(existing + " (Permission denied)"));
    }
  }

  /** The folder a task attempt writes into; it names its file {@link #attemptFile}. */
  public String jobTemporaryUri() {
    return fs.makeQualified(jobTemporary()).toString();
  }

  /** The temporary file name of one task attempt: unique per attempt, so attempts never collide. */
  public static Path attemptFile(
      String jobTemporaryUri, int partition, long attemptId, OutputFormat format) {
    return new Path(
        jobTemporaryUri,
        String.format("part-%05d.attempt-%d.%s", partition, attemptId, format.extension()));
  }

  /** The committed name of a partition's file: {@code part-00007-1a2b3c4d.arrow}. */
  public String finalName(int partition) {
    return String.format("part-%05d-%s.%s", partition, tag, settings.format().extension());
  }

  /** This job's identity, as its lock names it. */
  public String jobId() {
    return jobId;
  }

  /**
   * Makes the given files visible under their final names, switches the manifest to the new output
   * in one step, then deletes the old output's files and the job's temporary folder. Nothing of the
   * old output is touched before the switch.
   *
   * <p>The lock's lease is checked and renewed before the first rename and before the switch, and
   * checked (renewed when a third of it has passed) before every rename: a job whose lock another
   * job took over fails naming that job, removes the parts it renamed (their names carry this job's
   * tag: no other job's file is touched) and never switches the manifest. What remains open is a
   * driver that pauses for longer than a whole lease between a check and the step after it; closing
   * that would need the file system to refuse a rename by a lock token, which none offers (and an
   * object store's rename is a copy, so its steps are not atomic at all).
   *
   * @throws OutputLock.LockedException when another job took the output's lock over
   */
  public List<String> commit(List<CommittedFile> files, String manifestJson) throws IOException {
    lock.renew();
    Set<String> old = listedFiles();
    List<String> committed = new ArrayList<>();
    try {
      for (CommittedFile file : files) {
        step("rename " + file.tempPath());
        lock.requireHeld();
        Path target = new Path(output, finalName(file.partition()));
        if (!rename(new Path(file.tempPath()), target)) {
          throw new IOException("Could not commit " + file.tempPath() + " to " + target);
        }
        committed.add(target.getName());
      }
      step("switch manifest");
      lock.renew();
    } catch (OutputLock.LockedException e) {
      removeOwn(committed, e);
      throw e;
    }
    Path manifest = new Path(output, MANIFEST);
    try {
      AtomicFiles.replace(fs, manifest, manifestJson.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new OutputWriteException("Cannot write " + manifest, e);
    }
    step("delete old files");
    for (String name : old) {
      if (!committed.contains(name)) {
        AtomicFiles.delete(fs, new Path(output, name));
      }
    }
    deleteTemporary();
    return committed;
  }

  /** Deletes the part files this job renamed before it found its lock taken over. */
  private void removeOwn(List<String> committed, IOException failure) {
    for (String name : committed) {
      try {
        AtomicFiles.delete(fs, new Path(output, name));
      } catch (IOException e) {
        failure.addSuppressed(e);
      }
    }
  }

  /** A commit's rename; a refusal (read-only, quota) names both files, as its cause may not. */
  private boolean rename(Path from, Path to) throws IOException {
    try {
      return fs.rename(from, to);
    } catch (IOException e) {
      throw new OutputWriteException("Cannot commit " + from + " to " + to, e);
    }
  }

  /** Deletes everything this job wrote; committed output stays. Idempotent. */
  public void abort() throws IOException {
    deleteTemporary();
  }

  /** {@link #abort()} while already failing with {@code failure}: its own error is attached. */
  public void abortAfter(Throwable failure) {
    try {
      abort();
    } catch (IOException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Releases the output's lock, then removes the folders {@link #setup} created while they are
   * empty: a job that failed leaves no empty output folder behind. Idempotent.
   */
  @Override
  public void close() {
    if (lock != null) {
      lock.close();
    }
    for (Path folder : created) {
      try {
        if (!fs.exists(folder) || fs.listStatus(folder).length > 0 || !fs.delete(folder, false)) {
          break; // committed output, or another job's: kept, and so are its parents
        }
      } catch (IOException e) {
        LOG.warn("Could not remove the empty output folder {}: {}", folder, e.toString());
        break;
      }
    }
    created = List.of();
  }

  private void ensureFolder() throws IOException {
    try {
      if (fs.exists(output) && fs.getFileStatus(output).isFile()) {
        throw new IOException(notAFolder(output));
      }
      List<Path> missing = new ArrayList<>();
      for (Path p = output; p != null && !fs.exists(p); p = p.getParent()) {
        missing.add(p);
      }
      if (!fs.mkdirs(output)) {
        throw new IOException("mkdirs failed");
      }
      created = missing;
    } catch (org.apache.hadoop.security.AccessControlException e) {
      throw new OutputWriteException("Output " + output + " is not writable", e);
    }
  }

  private static String notAFolder(Path output) {
    return "Output " + output + " is a file, not a folder";
  }

  private static String committedOutput(Path output) {
    return "Output " + output + " already holds committed output; pass --overwrite to replace it";
  }

  /**
   * Under the lock, so every job that wrote here is gone: its attempts under {@code _temporary},
   * part files no manifest lists (a commit cut short before its switch, or the old files after it)
   * and the temporary copies of an interrupted manifest or lock write are removed.
   */
  private List<String> removeLeftovers() throws IOException {
    List<String> removed = new ArrayList<>();
    Path temporary = new Path(output, TEMPORARY);
    if (fs.exists(temporary)) {
      for (FileStatus f : fs.listStatus(temporary)) {
        removed.add(TEMPORARY + "/" + f.getPath().getName());
      }
      fs.delete(temporary, true);
    }
    Set<String> listed = listedFiles();
    for (FileStatus f : fs.listStatus(output)) {
      String name = f.getPath().getName();
      boolean orphan = OWN_PART.matcher(name).matches() && !listed.contains(name);
      if (orphan || OWN_TEMP.matcher(name).matches()) {
        AtomicFiles.delete(fs, f.getPath());
        removed.add(name);
      }
    }
    if (!removed.isEmpty()) {
      LOG.warn("Removed what interrupted jobs left in {}: {}", output, removed);
    }
    return removed;
  }

  private boolean holdsOutput() throws IOException {
    for (FileStatus f : fs.listStatus(output)) {
      String name = f.getPath().getName();
      if (name.equals(MANIFEST) || (name.startsWith("part-") && OutputFormat.isOutputFile(name))) {
        return true;
      }
    }
    return false;
  }

  /** The files the current manifest lists (empty when there is none). */
  private Set<String> listedFiles() throws IOException {
    Set<String> names = new HashSet<>();
    Path manifest = new Path(output, MANIFEST);
    Map<?, ?> json;
    try (InputStream in = fs.open(manifest)) {
      json = JSON.readValue(in, Map.class);
    } catch (FileNotFoundException e) {
      return names;
    }
    if (json.get("files") instanceof List<?> files) {
      for (Object f : files) {
        if (f instanceof Map<?, ?> m && m.get("path") != null) {
          names.add(String.valueOf(m.get("path")));
        }
      }
    }
    return names;
  }

  /**
   * Removes the job's own temporary folder, then {@code _temporary} itself if nothing else is in
   * it, never recursively: a job that lost its lock aborts while the job that took the lock over
   * creates its own folder there, which a recursive delete after an "empty" listing would take with
   * it (and its tasks' files later). On the local file system the parent goes by one {@code rmdir},
   * which fails when it is not empty.
   */
  private void deleteTemporary() throws IOException {
    fs.delete(jobTemporary(), true);
    Path temporary = new Path(output, TEMPORARY);
    try {
      if (fs instanceof LocalFileSystem local) {
        Files.deleteIfExists(local.pathToFile(temporary).toPath());
      } else if (fs.exists(temporary) && fs.listStatus(temporary).length == 0) {
        fs.delete(temporary, false);
      }
    } catch (IOException e) { // not empty (another job's folder), or gone: theirs to remove
      LOG.debug("Kept {}: {}", temporary, e.toString());
    }
  }

  /**
   * Creates the job's temporary folder, again if a job that lost the lock removed the empty {@code
   * _temporary} between the parent's creation and the folder's ({@link #deleteTemporary}).
   */
  private void createJobTemporary() throws IOException {
    for (int attempt = 0; attempt < 3; attempt++) {
      if (fs.mkdirs(jobTemporary())) {
        return;
      }
    }
    throw new IOException("Could not create " + jobTemporary());
  }

  private Path jobTemporary() {
    return new Path(new Path(output, TEMPORARY), jobId);
  }

  /** Test only: {@code hook} runs before each commit step (a test crashes the commit there). */
  void onStep(java.util.function.Consumer<String> hook) {
    this.stepHook = hook;
  }

  /** Test only: the lock, to abandon it as a killed driver would. */
  OutputLock lock() {
    return lock;
  }

  private void step(String name) {
    stepHook.accept(name);
    long delayMs = Long.getLong(STEP_DELAY_PROPERTY, 0L);
    if (delayMs > 0) {
      try {
        Thread.sleep(delayMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
