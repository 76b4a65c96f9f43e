package dev.spindle.spark.manifest;

import dev.spindle.spark.shard.InputListing;
import java.io.IOException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * A folder that a {@code preprocess} job is writing, or was killed writing before its first commit:
 * it holds the job's lock and no {@code _manifest.json}. Whatever part files a cut-short commit
 * copied or renamed there are no output (no manifest names them), yet read as an input they would
 * pass for Parquet shards, or leave a folder of no layout; so such a folder is refused as an input,
 * saying so. Only Spindle's own lock counts: a {@code _temporary/} folder alone may be another
 * writer's (Spark's), whose folders are read as before. Found in the listing the catalog makes
 * anyway: no request of its own. Stateless; driver.
 */
final class UncommittedOutput {
  /** The output's lock, as {@code sink.OutputLock} names it (manifest may not import sink). */
  static final String LOCK = "_spindle_lock.json";

  private UncommittedOutput() {}

  /**
   * Throws when {@code listing} (of the folder {@code root}, which has no manifest) holds a
   * preprocess job's lock at its top.
   */
  static void refuse(String input, Path root, InputListing.Listing listing) throws IOException {
    String prefix = root.toUri().getPath().replaceAll("/+$", "") + "/";
    for (FileStatus f : listing.files()) {
      String relative = f.getPath().toUri().getPath();
      if (!relative.startsWith(prefix)) {
        continue;
      }
      relative = relative.substring(prefix.length());
      if (relative.equals(LOCK)) {
        throw new IOException(message(input));
      }
    }
  }

  private static String message(String input) {
    return "Input "
        + input
        + " holds no committed preprocess output: it has no "
        + PreprocessedInput.MANIFEST
        + " but the lock "
        + LOCK
        + " of a preprocess job that is writing it or was interrupted before its commit;"
        + " its part files are not an output. Wait for that job, or run preprocess with --output "
        + input
        + " again (it removes what an interrupted job left)";
  }
}
