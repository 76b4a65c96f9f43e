package dev.spindle.spark.example;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Removes the example's own temporary work directory. Stateless; main thread. */
final class WorkDirs {
  private WorkDirs() {}

  /** Deletes {@code dir} and everything under it; nothing if it does not exist. */
  static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      List<Path> deepestFirst = all.sorted(Comparator.reverseOrder()).toList();
      for (Path p : deepestFirst) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove the example's work directory " + dir, e);
    }
  }
}
