package dev.spindle.spark.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Driver-side commit protocol for a job's output folder. Tasks write under {@code
 * OUTPUT/_temporary/<job>/} with a name unique to their attempt; only the attempt whose result the
 * driver received is renamed to its final name, after the whole job succeeded and passed its
 * failure budget; then {@code _manifest.json} is written last (via a temporary name), so a reader
 * that sees the manifest sees complete output. A failed or aborted job deletes its temporary
 * folder and leaves no committed file. Runs on the driver, one thread.
 */
public final class OutputCommitter {
  public static final String MANIFEST = "_manifest.json";
  private static final String TEMPORARY = "_temporary";

  private final Path output;
  private final FileSystem fs;
  private final String jobId;
  private final boolean overwrite;

  public OutputCommitter(String output, Configuration conf, boolean overwrite) throws IOException {
    this.output = new Path(output);
    this.fs = this.output.getFileSystem(conf);
    this.jobId = UUID.randomUUID().toString();
    this.overwrite = overwrite;
  }

  /** Checks the output folder can be written and creates the job's temporary folder. */
  public void setup() throws IOException {
    if (fs.exists(output)) {
      FileStatus status = fs.getFileStatus(output);
      if (status.isFile()) {
        throw new IOException("Output " + output + " is a file, not a folder");
      }
      if (!overwrite && !committedFiles().isEmpty()) {
        throw new IOException(
            "Output " + output + " already holds committed output; pass --overwrite to replace it");
      }
    }
    fs.mkdirs(jobTemporary());
  }

  /** The folder a task attempt writes into; it names its file {@link #attemptFile}. */
  public String jobTemporaryUri() {
    return fs.makeQualified(jobTemporary()).toString();
  }

  /** The temporary file name of one task attempt: unique per attempt, so attempts never collide. */
  public static Path attemptFile(String jobTemporaryUri, int partition, long attemptId) {
    return new Path(jobTemporaryUri, String.format("part-%05d.attempt-%d.arrow", partition, attemptId));
  }

  /**
   * Makes the given files visible under their final names, writes the manifest, and removes the
   * temporary folder (with any files of failed or speculative attempts).
   */
  public List<String> commit(List<CommittedFile> files, String manifestJson) throws IOException {
    if (overwrite) {
      for (Path old : committedFiles()) {
        fs.delete(old, false);
      }
    }
    List<String> committed = new ArrayList<>();
    for (CommittedFile file : files) {
      Path target = new Path(output, file.finalName());
      if (!fs.rename(new Path(file.tempPath()), target)) {
        throw new IOException("Could not commit " + file.tempPath() + " to " + target);
      }
      committed.add(file.finalName());
    }
    Path manifestTemp = new Path(jobTemporary(), MANIFEST);
    try (OutputStream out = fs.create(manifestTemp, true)) {
      out.write(manifestJson.getBytes(StandardCharsets.UTF_8));
    }
    if (!fs.rename(manifestTemp, new Path(output, MANIFEST))) {
      throw new IOException("Could not write " + new Path(output, MANIFEST));
    }
    cleanup();
    return committed;
  }

  /** Deletes everything this job wrote; committed output of earlier jobs stays. Idempotent. */
  public void abort() throws IOException {
    cleanup();
  }

  private void cleanup() throws IOException {
    fs.delete(jobTemporary(), true);
    Path temporary = new Path(output, TEMPORARY);
    FileStatus[] left = fs.exists(temporary) ? fs.listStatus(temporary) : new FileStatus[0];
    if (left.length == 0) {
      fs.delete(temporary, true);
    }
  }

  private Path jobTemporary() {
    return new Path(new Path(output, TEMPORARY), jobId);
  }

  private List<Path> committedFiles() throws IOException {
    List<Path> found = new ArrayList<>();
    if (!fs.exists(output)) {
      return found;
    }
    for (FileStatus f : fs.listStatus(output)) {
      String name = f.getPath().getName();
      if (name.equals(MANIFEST) || (name.startsWith("part-") && name.endsWith(".arrow"))) {
        found.add(f.getPath());
      }
    }
    return found;
  }
}
