package dev.spindle.spark.train;

import dev.spindle.spark.shard.HadoopConf;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Optional;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;

/**
 * Where {@code train} keeps, per rank, what outlives a trainer and its task: the checkpoints the
 * trainer saved ({@code rank-R.checkpoint.json}, the record {@code spindle_bridge.checkpoint}
 * keeps: {@link CheckpointRecord}), the loader state it last saved ({@code rank-R.state.json}, a
 * loader state document: how far it got), how its last attempt ended ({@code rank-R.exit.json}),
 * and, per attempt, the failure that stops the other ranks ({@code failed-RUN-A.json}), in one
 * directory of any Hadoop file system, so that a restarted rank resumes on whichever node Spark
 * places it. Each file is replaced whole (written beside, then renamed over it), so a reader sees
 * an old or a new version, never a part. Shipped to executors; any thread.
 */
final class TrainStateStore implements Serializable {
  private final String dir;
  private final HadoopConf conf;

  TrainStateStore(String dir, HadoopConf conf) {
    this.dir = dir;
    this.conf = conf;
  }

  String location() {
    return dir;
  }

  /** The state rank {@code rank}'s trainer last saved, if it saved one. */
  Optional<String> state(int rank) throws IOException {
    return read("rank-" + rank + ".state.json");
  }

  void saveState(int rank, String json) throws IOException {
    write("rank-" + rank + ".state.json", json);
  }

  /** The record of the checkpoints rank {@code rank}'s trainer saved, if it saved any. */
  Optional<String> checkpoint(int rank) throws IOException {
    return read("rank-" + rank + ".checkpoint.json");
  }

  void saveCheckpoint(int rank, String json) throws IOException {
    write("rank-" + rank + ".checkpoint.json", json);
  }

  /**
   * The failure ({@link TrainerExit} JSON) that ended attempt {@code attempt} of run {@code runId},
   * if a rank recorded one: every rank's task stops its trainer when it sees it.
   */
  Optional<String> failure(String runId, int attempt) throws IOException {
    return read(failureName(runId, attempt));
  }

  /**
   * Records the failure that ends the attempt, unless another rank's came first: ranks that fail
   * together (in one executor, or a shared state directory) race here, and the first rename wins.
   */
  void saveFailure(String runId, int attempt, String json) throws IOException {
    if (failure(runId, attempt).isPresent()) {
      return;
    }
    try {
      write(failureName(runId, attempt), json);
    } catch (FileAlreadyExistsException e) {
      // another rank's failure landed between the check and the rename: it is the one recorded
    }
  }

  private static String failureName(String runId, int attempt) {
    return "failed-" + runId + "-" + attempt + ".json";
  }

  /** How rank {@code rank}'s last attempt ended ({@link TrainerExit} JSON), if recorded. */
  Optional<String> exit(int rank) throws IOException {
    return read("rank-" + rank + ".exit.json");
  }

  void saveExit(int rank, String json) throws IOException {
    write("rank-" + rank + ".exit.json", json);
  }

  /** Forgets how the ranks' attempts ended (before the ranks start again). */
  void clearExits(int world) throws IOException {
    FileSystem fs = fs();
    for (int r = 0; r < world; r++) {
      fs.delete(new Path(dir, "rank-" + r + ".exit.json"), false);
    }
  }

  /** Removes the directory and everything in it. */
  void delete() throws IOException {
    fs().delete(new Path(dir), true);
  }

  private Optional<String> read(String name) throws IOException {
    try (FSDataInputStream in = fs().open(new Path(dir, name))) {
      return Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (FileNotFoundException e) {
      return Optional.empty();
    }
  }

  /** Writes {@code name.new}, then renames it over {@code name} (atomic where renames are). */
  private synchronized void write(String name, String text) throws IOException {
    Path target = new Path(dir, name);
    Path fresh = new Path(dir, name + "." + java.util.UUID.randomUUID() + ".new");
    FileContext fc = FileContext.getFileContext(target.toUri(), conf.get());
    try (OutputStream out =
        fc.create(
            fresh,
            EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE),
            Options.CreateOpts.createParent())) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    try {
      fc.rename(fresh, target, Options.Rename.OVERWRITE);
    } catch (IOException e) {
      fc.delete(fresh, false);
      throw e;
    }
  }

  private FileSystem fs() throws IOException {
    Path p = new Path(dir);
    return p.getFileSystem(conf.get());
  }
}
