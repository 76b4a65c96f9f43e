package dev.spindle.spark.feed;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Where the Python client ({@code loader-gpu/python}, package {@code spindle_bridge}) is. */
public final class PythonClient {
  private PythonClient() {}

  /**
   * {@code loader-gpu/python} under the working directory or one of its parents, or under the
   * Spindle jar's ({@code spindle.app.jar}).
   *
   * @throws IllegalStateException if there is none
   */
  public static Path dir() {
    List<Path> starts = new ArrayList<>();
    starts.add(Path.of("").toAbsolutePath());
    String jar = System.getProperty("spindle.app.jar");
    if (jar != null) {
      starts.add(Path.of(jar).toAbsolutePath());
    }
    for (Path s : starts) {
      for (Path d = s; d != null; d = d.getParent()) {
        Path candidate = d.resolve("loader-gpu/python");
        if (Files.isDirectory(candidate.resolve("spindle_bridge"))) {
          return candidate;
        }
      }
    }
    throw new IllegalStateException(
        "Cannot find loader-gpu/python (the Python client) above "
            + starts
            + "; run from the Spindle checkout");
  }
}
