package dev.spindle.spark.fuzz;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bin/fuzz [TARGET...] [--seconds N] [--runs N] [--nice N] [--work DIR] [--report FILE]}:
 * fuzzes the {@link FuzzTarget}s named (all by default) one after another, each in its own Jazzer
 * JVM ({@link JazzerRun}), and writes a JSON report: per target executions, coverage (seed, end,
 * new), features, corpus, peak RSS and crashes, plus the load average before and after. Exit code 0
 * when no target crashed, 1 when one did, 2 for a usage error. Main thread only.
 */
public final class FuzzMain {
  private FuzzMain() {}

  public static void main(String[] args) throws Exception {
    List<FuzzTarget> targets = new ArrayList<>();
    int seconds = 0;
    long runs = 0;
    int niceness = 0;
    Path work = Path.of("target", "fuzz");
    Path report = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--seconds" -> seconds = Integer.parseInt(value(args, ++i, a));
        case "--runs" -> runs = Long.parseLong(value(args, ++i, a));
        case "--nice" -> niceness = Integer.parseInt(value(args, ++i, a));
        case "--work" -> work = Path.of(value(args, ++i, a));
        case "--report" -> report = Path.of(value(args, ++i, a));
        default ->
            targets.add(
                FuzzTarget.named(a)
                    .orElseThrow(
                        () -> usage("Unknown fuzz target '" + a + "' (targets: " + names() + ")")));
      }
    }
    if (seconds <= 0 && runs <= 0) {
      seconds = 60;
    }
    report = report != null ? report : work.resolve("fuzz-report.json");
    List<FuzzResult> results = new ArrayList<>();
    String before = loadAverage();
    for (FuzzTarget t : targets.isEmpty() ? FuzzTarget.ALL : targets) {
      Path dir = Files.createDirectories(work.resolve(t.name()));
      System.err.printf("fuzz: %s (%s) ...%n", t.name(), t.parser());
      FuzzResult r = new JazzerRun(t, dir, classpath(), jvmFlags()).run(seconds, runs, niceness);
      System.err.printf(
          "fuzz: %s: %,d executions (%,d/s), coverage %d (+%d over the seeds), "
              + "%d features, %d crash(es)%n",
          t.name(),
          r.executions(),
          r.execsPerSecond(),
          r.coverage(),
          r.newCoverage(),
          r.features(),
          r.crashes());
      results.add(r);
    }
    write(report, results, before, loadAverage(), String.join(" ", args));
    System.err.println("fuzz: report " + report.toAbsolutePath());
    System.exit(results.stream().anyMatch(r -> r.crashes() > 0) ? 1 : 0);
  }

  /** The classpath a Jazzer child needs: this JVM's test classpath. */
  public static String classpath() {
    return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
  }

  /** This JVM's module and access flags (Spark's), for the child. */
  public static List<String> jvmFlags() {
    return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(
            f ->
                f.startsWith("--add-")
                    || f.equals("-XX:+IgnoreUnrecognizedVMOptions")
                    || f.startsWith("-Dio.netty"))
        .toList();
  }

  static String loadAverage() throws IOException {
    Path proc = Path.of("/proc/loadavg");
    return Files.exists(proc) ? Files.readString(proc).trim() : "unknown";
  }

  private static void write(
      Path report, List<FuzzResult> results, String loadBefore, String loadAfter, String command)
      throws IOException {
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = json.createObjectNode();
    root.put("command", "bin/fuzz " + command);
    root.put("finished", Instant.now().toString());
    root.put("cpus", Runtime.getRuntime().availableProcessors());
    root.put("loadavg_before", loadBefore);
    root.put("loadavg_after", loadAfter);
    ObjectNode targets = root.putObject("targets");
    for (FuzzResult r : results) {
      ObjectNode t = targets.putObject(r.target());
      t.put("parser", FuzzTarget.named(r.target()).orElseThrow().parser());
      t.put("executions", r.executions());
      t.put("exec_per_s", r.execsPerSecond());
      t.put("seconds", r.seconds());
      t.put("seed_coverage", r.seedCoverage());
      t.put("coverage", r.coverage());
      t.put("new_coverage", r.newCoverage());
      t.put("features", r.features());
      t.put("new_units", r.newUnits());
      t.put("corpus", r.corpusSize());
      t.put("peak_rss_mb", r.peakRssMb());
      t.put("crashes", r.crashes());
      ArrayNode files = t.putArray("crash_files");
      r.crashFiles().forEach(files::add);
      t.put("exit_code", r.exitCode());
      t.put("log", r.log());
    }
    root.put("total_executions", results.stream().mapToLong(FuzzResult::executions).sum());
    root.put("total_crashes", results.stream().mapToInt(FuzzResult::crashes).sum());
    Files.createDirectories(report.toAbsolutePath().getParent());
    json.writeValue(report.toFile(), root);
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length) {
      throw usage("Missing value after " + flag);
    }
    return args[i];
  }

  private static String names() {
    return String.join(", ", FuzzTarget.ALL.stream().map(FuzzTarget::name).toList());
  }

  private static IllegalArgumentException usage(String message) {
    System.err.println("fuzz: " + message);
    System.err.println(
        "usage: bin/fuzz [TARGET...] [--seconds N] [--runs N] [--nice N]"
            + " [--work DIR] [--report FILE]");
    System.exit(2);
    return new IllegalArgumentException(message);
  }
}
