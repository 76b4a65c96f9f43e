package dev.spindle.spark.example;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** Parses {@code example}'s flags, refusing mistakes by name before any work. Main thread. */
final class ExampleOptions {
  private static final Set<String> FLAGS = Set.of("--epochs", "--limit", "--report",
      "--world-size", "--batch-size", "--test-limit", "--work", "--source", "--python",
      "--master");

  private ExampleOptions() {}

  static ExampleCommand.Options parse(String[] argv) throws java.io.IOException {
    if (argv.length == 0 || !argv[0].equals("fashion-mnist")) {
      throw new IllegalArgumentException("Unknown example: '"
          + (argv.length == 0 ? "" : argv[0]) + "' (available: fashion-mnist)");
    }
    Map<String, String> f = new LinkedHashMap<>();
    for (int i = 1; i < argv.length; i++) {
      if (!FLAGS.contains(argv[i])) {
        throw new IllegalArgumentException("Unknown flag for 'example': " + argv[i]
            + "; accepted: " + String.join(" ", new TreeSet<>(FLAGS)));
      }
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("Flag " + argv[i] + " of 'example' needs a value");
      }
      f.put(argv[i], argv[++i]);
    }
    int epochs = positive(f, "--epochs", 1);
    int limit = positive(f, "--limit", 60000);
    int world = positive(f, "--world-size", 2);
    int batch = positive(f, "--batch-size", 64);
    int testLimit = positive(f, "--test-limit", 10000);
    // Made last, once every flag is valid: a refused command line leaves no directory behind.
    boolean ownWork = !f.containsKey("--work");
    Path work = ownWork ? Files.createTempDirectory("spindle-example-") : Path.of(f.get("--work"));
    return new ExampleCommand.Options(epochs, limit, world, batch, testLimit,
        work.toAbsolutePath(), ownWork,
        Path.of(f.getOrDefault("--source", FashionMnistImport.DEBIAN_DIR.toString())),
        f.getOrDefault("--python", "/usr/bin/python3"),
        f.getOrDefault("--master", "local[" + Math.max(4, 2 * world) + "]"), f.get("--report"));
  }

  private static int positive(Map<String, String> f, String flag, int dflt) {
    String v = f.get(flag);
    if (v == null) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // fall through to the error naming the value
    }
    throw new IllegalArgumentException("Invalid " + flag + ": '" + v + "' (must be an integer > 0)");
  }
}
