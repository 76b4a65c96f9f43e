package dev.spindle.spark.cli;

import dev.spindle.spark.progress.ProgressPrinter;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The steps every Spark command shares: the checks that need no cluster, then its job on a session
 * of its own (cancelled by Ctrl-C: {@link Interruption}), and the line it prints at its end.
 */
final class Jobs {
  /** How long a failed job's tasks may take to end before its session stops anyway. */
  private static final Duration SETTLE = Duration.ofSeconds(30);

  private Jobs() {}

  /** What a command does on the session it runs on; returns its report. */
  @FunctionalInterface
  interface Job<R> {
    R run(SparkSession session) throws Exception;
  }

  /** The checks of a command's paths that need no cluster, run before its session starts. */
  @FunctionalInterface
  interface Check {
    void run(Preflight preflight) throws IOException;

    /** No check. */
    Check NONE = preflight -> {};
  }

  /**
   * Runs {@code check}, then {@code job} on a new session ({@code spark}'s master, {@code
   * settings}) showing its progress as {@code progress} asks; the progress stops before the
   * session, which is stopped however the job ends.
   *
   * @throws IOException from {@code check}, before the session starts
   * @throws ParameterException when the master cannot run here, before the job
   */
  static <R> R run(
      CommandLine cl,
      String command,
      SparkOptions spark,
      ProgressFlags progress,
      Map<String, String> settings,
      Check check,
      Job<R> job)
      throws Exception {
    return run(
        cl,
        command,
        spark.master,
        progress.with(settings),
        check,
        session -> {
          try (ProgressPrinter shown = progress.start(session)) {
            return job.run(session);
          }
        });
  }

  /** {@link #run(CommandLine, String, String, Map, Check, Job)} without checks. */
  static <R> R run(
      CommandLine cl, String command, String master, Map<String, String> settings, Job<R> job)
      throws Exception {
    return run(cl, command, master, settings, Check.NONE, job);
  }

  /**
   * Runs {@code check}, then {@code job} on a new session on {@code master}, stopped however the
   * job ends. From here on Ctrl-C cancels the job and lets it clean up ({@link Interruption}).
   *
   * @throws IOException from {@code check}, before the session starts
   * @throws java.util.concurrent.CancellationException when Ctrl-C came before the job started
   */
  static <R> R run(
      CommandLine cl,
      String command,
      String master,
      Map<String, String> settings,
      Check check,
      Job<R> job)
      throws Exception {
    Interruption.guard();
    Sessions.warmUpDecode(master, settings);
    check.run(Preflight.of(settings));
    Interruption.throwIfHappened();
    SparkSession session = session(cl, command, master, settings);
    RunningTasks tasks = RunningTasks.attach(session.sparkContext());
    try {
      Interruption.attach(session.sparkContext());
      Interruption.throwIfHappened();
      return job.run(session);
    } catch (Exception | Error e) {
      settle(session, tasks, e);
      throw e;
    } finally {
      Interruption.detach();
      session.stop();
    }
  }

  /**
   * After {@code failure}: the session's jobs are cancelled and their tasks end before it stops.
   */
  private static void settle(SparkSession session, RunningTasks tasks, Throwable failure) {
    try {
      tasks.cancelAndAwait(session.sparkContext(), SETTLE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure.addSuppressed(e);
    } catch (RuntimeException e) {
      failure.addSuppressed(e); // a context that stopped already: nothing runs on it
    }
  }

  /**
   * The session {@code command} runs on and owns (the command stops it).
   *
   * @throws ParameterException when the master cannot run here, saying what it needs
   */
  static SparkSession session(
      CommandLine cl, String command, String master, Map<String, String> settings) {
    try {
      return Sessions.start(command, master, settings);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage());
    }
  }

  /** Prints the one-line summary of a report's fields. */
  static void summary(CommandLine cl, Map<String, Object> fields) {
    cl.getOut().println(Summary.line(fields));
  }

  /** The same, saying where the quarantined samples are listed and ending with {@code notes}. */
  static void summary(
      CommandLine cl, Map<String, Object> fields, ReportOption report, List<String> notes) {
    cl.getOut().println(Summary.line(fields, report.file, notes));
  }
}
