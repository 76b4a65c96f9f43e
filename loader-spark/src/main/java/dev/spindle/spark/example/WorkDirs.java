package dev.spindle.spark.example;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.fs.FileUtil;

/** Removes the example's own temporary work directory. Stateless; main thread. */
final class WorkDirs {
  private WorkDirs() {}

  /**
   * Deletes {@code dir} and everything under it (links are removed, never followed); nothing if it
   * does not exist.
   */
  static void delete(Path dir) {
    if (Files.exists(dir) && !FileUtil.fullyDelete(dir.toFile())) {
      throw new UncheckedIOException(
          new IOException("Cannot remove the example's work directory " + dir));
    }
  }
}
