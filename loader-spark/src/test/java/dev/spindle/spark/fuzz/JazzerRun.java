package dev.spindle.spark.fuzz;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Fuzzes one {@link FuzzTarget} with Jazzer's standalone driver in a child JVM (Jazzer fuzzes one
 * target per process) and reads the result off libFuzzer's output. The child gets Spark's JVM
 * flags, the target's heap, this JVM's classpath, and instruments {@code dev.spindle.**}. Its work
 * directory holds the grown corpus ({@code corpus/}, the seed corpus is read beside it and never
 * written), findings ({@code crash-*}, {@code timeout-*}, {@code oom-*}) and {@code jazzer.log}.
 * Any thread; one call, one child.
 */
public final class JazzerRun {
  private static final Pattern STATUS =
      Pattern.compile(
          "^#(\\d+)\\s+(INITED|DONE|NEW|REDUCE|pulse)\\s+cov: (\\d+) ft: (\\d+) corp: (\\d+)/");
  private static final Pattern STAT = Pattern.compile("^stat::(\\w+):\\s+(\\d+)");
  private static final String[] FINDINGS = {"crash-", "timeout-", "oom-", "leak-", "slow-unit-"};

  private final FuzzTarget target;
  private final Path work;
  private final String classpath;
  private final List<String> jvmFlags;

  /**
   * @param classpath the child's classpath: the test classpath with Jazzer and the targets
   * @param jvmFlags flags every JVM running Spindle's code needs (Spark's --add-opens and so on)
   */
  public JazzerRun(FuzzTarget target, Path work, String classpath, List<String> jvmFlags) {
    this.target = target;
    this.work = work;
    this.classpath = classpath;
    this.jvmFlags = List.copyOf(jvmFlags);
  }

  /**
   * Fuzzes for {@code seconds} (0: no time bound) or {@code runs} inputs (0: no count bound),
   * whichever comes first, under {@code nice} when {@code niceness > 0}.
   */
  public FuzzResult run(int seconds, long runs, int niceness)
      throws IOException, InterruptedException {
    Path corpus = Files.createDirectories(work.resolve("corpus"));
    Path log = work.resolve("jazzer.log");
    List<String> cmd = command(seconds, runs, niceness, corpus);
    long start = System.nanoTime();
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    long limit = seconds > 0 ? seconds + 120L : Long.MAX_VALUE / 2;
    if (!p.waitFor(limit, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
    }
    double wall = (System.nanoTime() - start) / 1e9;
    return parse(
        Files.readAllLines(log, StandardCharsets.ISO_8859_1), p.exitValue(), wall, log, corpus);
  }

  /**
   * This JVM's peak RSS in MB. A child that {@code ProcessBuilder} starts (posix_spawn, sharing
   * this JVM's memory until it execs) begins with that peak as its own, which libFuzzer's RSS check
   * reads ({@code ru_maxrss} survives {@code execve}): inside a large test JVM every target started
   * past its limit. The limit is raised by it, so it bounds what the target itself adds.
   */
  private static long inheritedPeakMb() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux: nothing inherited to allow for
    }
    return 0;
  }

  private List<String> command(int seconds, long runs, int niceness, Path corpus) {
    List<String> cmd = new ArrayList<>();
    if (niceness > 0) {
      cmd.addAll(List.of("nice", "-n", Integer.toString(niceness)));
    }
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmFlags);
    cmd.addAll(
        List.of(
            "-Xmx" + target.heapMb() + "m",
            "-XX:+UseSerialGC",
            "-Dspindle.image.nativeJpeg=true",
            "-Djavacpp.platform=linux-x86_64",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp",
            target.classpath(classpath),
            "com.code_intelligence.jazzer.Jazzer",
            "--target_class=" + target.className(),
            "--instrumentation_includes=dev.spindle.**",
            "--reproducer_path=" + work,
            "-timeout=" + target.timeoutSeconds(),
            "-rss_limit_mb=" + (target.heapMb() + 1536 + inheritedPeakMb()),
            "-max_len=" + target.maxLen(),
            "-artifact_prefix=" + work + File.separator,
            "-print_final_stats=1"));
    if (seconds > 0) {
      cmd.add("-max_total_time=" + seconds);
    }
    if (runs > 0) {
      cmd.add("-runs=" + runs);
    }
    cmd.add(corpus.toString());
    cmd.add(target.corpus().toString());
    return cmd;
  }

  private FuzzResult parse(List<String> lines, int exit, double wall, Path log, Path corpus)
      throws IOException {
    long seedCov = -1;
    long cov = 0;
    long ft = 0;
    long corp = 0;
    long execs = 0;
    long eps = 0;
    long added = 0;
    long rss = 0;
    boolean javaFinding = false;
    for (String line : lines) {
      Matcher m = STATUS.matcher(line);
      if (m.find()) {
        cov = Long.parseLong(m.group(3));
        ft = Long.parseLong(m.group(4));
        corp = Long.parseLong(m.group(5));
        execs = Math.max(execs, Long.parseLong(m.group(1)));
        if (m.group(2).equals("INITED") && seedCov < 0) {
          seedCov = cov;
        }
      }
      Matcher s = STAT.matcher(line);
      if (s.find()) {
        long v = Long.parseLong(s.group(2));
        switch (s.group(1)) {
          case "number_of_executed_units" -> execs = v;
          case "average_exec_per_sec" -> eps = v;
          case "new_units_added" -> added = v;
          case "peak_rss_mb" -> rss = v;
          default -> {}
        }
      }
      javaFinding |= line.startsWith("== Java Exception") || line.contains("Java Assertion Error");
    }
    List<String> findings = findings();
    int crashes = findings.size() + (exit != 0 && findings.isEmpty() ? 1 : 0);
    if (crashes == 0 && javaFinding) {
      crashes = 1;
    }
    return new FuzzResult(
        target.name(),
        execs,
        eps,
        Math.round(wall * 10) / 10.0,
        Math.max(seedCov, 0),
        cov,
        ft,
        added,
        corp,
        rss,
        crashes,
        findings,
        exit,
        log.toString());
  }

  private List<String> findings() throws IOException {
    try (Stream<Path> files = Files.list(work)) {
      return files
          .filter(
              f -> {
                String n = f.getFileName().toString();
                return Stream.of(FINDINGS).anyMatch(n::startsWith);
              })
          .map(Path::toString)
          .sorted()
          .toList();
    }
  }
}
