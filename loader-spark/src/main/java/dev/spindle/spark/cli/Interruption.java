package dev.spindle.spark.cli;

import java.io.PrintStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;

/**
 * Ctrl-C (SIGINT) while {@code bin/spindle} runs a command. Without a handler the JVM would exit at
 * once: Spark's shutdown hook stops the context under the running job, Hadoop's closes the file
 * systems under its cleanup, the job's {@code _temporary} attempt files and output lock stay
 * behind, and the user reads a stack trace. Instead, while a command runs Spark jobs ({@link
 * #guard}), the first SIGINT cancels the session's jobs (and every job started after it), so the
 * job fails on the main thread and cleans up as any failed job does (its attempt files, its lock,
 * the output folder it created); the command then prints {@code interrupted by the user} once,
 * writes {@code --report} saying so, and exits {@value #EXIT} (128 + SIGINT, as a shell reports
 * it). A second SIGINT, or a cleanup that outlasts {@link #GRACE}, exits without waiting. A command
 * that runs no Spark job exits at once.
 *
 * <p>Installed by {@link SpindleMain#main} only: the command line run inside another program
 * (tests, notebooks) leaves that program's signals alone. The handler runs on the JVM's signal
 * thread; the state is static because a JVM has one SIGINT.
 */
final class Interruption {
  /** The exit code of an interrupted command. */
  static final int EXIT = 130;

  /** How long an interrupted job may take to clean up before the JVM exits anyway. */
  static final Duration GRACE = Duration.ofSeconds(60);

  static final String MESSAGE = "interrupted by the user";

  private static final AtomicBoolean HAPPENED = new AtomicBoolean();
  private static volatile boolean guarded;
  private static volatile SparkContext running;
  private static volatile PrintStream err = System.err;

  private Interruption() {}

  /**
   * Handles SIGINT from now on, printing to {@code stderr}. Uses {@code sun.misc.Signal}, the JDK's
   * only way to handle a signal (Spark's own SignalUtils uses it too), through reflection so that
   * compiling against the JDK's internal API leaves no warning; where it is missing, SIGINT keeps
   * the JVM's default.
   */
  static void install(PrintStream stderr) {
    err = stderr;
    try {
      Class<?> signal = Class.forName("sun.misc.Signal");
      Class<?> handler = Class.forName("sun.misc.SignalHandler");
      InvocationHandler onSignal =
          (proxy, method, args) ->
              switch (method.getName()) {
                case "handle" -> {
                  onSignal();
                  yield null;
                }
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> "spindle's SIGINT handler";
              };
      Object h =
          Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler}, onSignal);
      signal
          .getMethod("handle", signal, handler)
          .invoke(null, signal.getConstructor(String.class).newInstance("INT"), h);
    } catch (ReflectiveOperationException | RuntimeException e) {
      stderr.println("spindle: Ctrl-C will not clean up after a job: " + e);
    }
  }

  /** From now on the command runs Spark jobs: SIGINT cancels them and waits for the cleanup. */
  static void guard() {
    guarded = true;
  }

  /**
   * {@code sc} runs the command's jobs until {@link #detach}; when SIGINT came already, its jobs
   * are cancelled now.
   */
  static void attach(SparkContext sc) {
    running = sc;
    if (HAPPENED.get()) {
      cancel(sc);
    }
  }

  /** The command's session is stopping: nothing left to cancel. */
  static void detach() {
    running = null;
  }

  /** Whether SIGINT came. */
  static boolean happened() {
    return HAPPENED.get();
  }

  /**
   * Fails the command on the main thread where it can stop before any work (before its session
   * starts, before its job).
   *
   * @throws CancellationException when SIGINT came
   */
  static void throwIfHappened() {
    if (HAPPENED.get()) {
      throw new CancellationException(MESSAGE);
    }
  }

  private static void onSignal() {
    if (!HAPPENED.compareAndSet(false, true)) {
      err.println("spindle: interrupted again: exiting without cleaning up");
      Runtime.getRuntime().halt(EXIT);
    }
    if (!guarded) {
      err.println("spindle: " + MESSAGE);
      System.exit(EXIT);
    }
    err.println(
        "spindle: stopping: cancelling the job and removing its temporary files"
            + " (Ctrl-C again exits at once)");
    SparkContext sc = running;
    if (sc != null) {
      cancel(sc);
    }
    Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(GRACE.toMillis());
              } catch (InterruptedException e) {
                return;
              }
              err.println(
                  "spindle: "
                      + MESSAGE
                      + "; the job did not stop within "
                      + GRACE.toSeconds()
                      + " s: exiting");
              System.exit(EXIT);
            },
            "spindle-interrupt-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }

  /** Cancels {@code sc}'s running jobs and every job started from now on. */
  private static void cancel(SparkContext sc) {
    try {
      sc.addSparkListener(
          new SparkListener() {
            @Override
            public void onJobStart(SparkListenerJobStart start) {
              sc.cancelJob(start.jobId(), MESSAGE);
            }
          });
      sc.cancelAllJobs();
    } catch (RuntimeException e) { // a context that is stopping: no job runs on it any more
      err.println("spindle: " + e.getMessage());
    }
  }
}
