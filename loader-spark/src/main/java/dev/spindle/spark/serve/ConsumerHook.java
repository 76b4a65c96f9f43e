package dev.spindle.spark.serve;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

/**
 * A per-JVM wrapper around every feed task's {@link BatchConsumer}: none (the consumer as it is)
 * unless someone {@link #install}s one. Tests install one that slows each batch down, so that a
 * fault (an executor killed, a worker lost) lands while tasks still run: the product path never
 * sleeps, and no {@code spark.spindle.*} key turns test behaviour on. Executor JVMs get theirs from
 * an executor plugin on the test class path ({@code spark.plugins}). {@code bench io} installs one
 * in its own JVM that hashes what each batch delivered.
 *
 * <p>Threads: {@link #install} and {@link #uninstall} from any thread; {@link #wrap} on task
 * threads when a task starts (a task keeps the wrapper it started with).
 */
public final class ConsumerHook {
  private static final AtomicReference<UnaryOperator<BatchConsumer>> INSTALLED =
      new AtomicReference<>(UnaryOperator.identity());

  private ConsumerHook() {}

  /** Wraps the consumer of every feed task started in this JVM from now on with {@code wrapper}. */
  public static void install(UnaryOperator<BatchConsumer> wrapper) {
    INSTALLED.set(Objects.requireNonNull(wrapper, "wrapper"));
  }

  /** Feed tasks started from now on use their consumers as they are. */
  public static void uninstall() {
    INSTALLED.set(UnaryOperator.identity());
  }

  /** {@code consumer} with the installed wrapper around it (itself when none is installed). */
  static BatchConsumer wrap(BatchConsumer consumer) {
    return INSTALLED.get().apply(consumer);
  }
}
