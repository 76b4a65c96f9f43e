package dev.spindle.spark.metrics;

import dev.spindle.gpu.feed.GpuFeeder;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The feeders open in this JVM, for the executor's gauges ({@link ExecutorMetrics}). Whoever holds
 * feeders registers a view of them once, before it opens the first (the serving side does so in its
 * classes' static initialisers), so this package need not know who holds them: the sinks sit above
 * metrics in the flow. Registration lasts for the JVM's life. Any thread.
 */
public final class ActiveFeeders {
  private static final List<Supplier<? extends Collection<GpuFeeder>>> SOURCES =
      new CopyOnWriteArrayList<>();

  private ActiveFeeders() {}

  /** Adds {@code source}, read whenever a gauge reports; the same feeder from two counts once. */
  public static void register(Supplier<? extends Collection<GpuFeeder>> source) {
    SOURCES.add(source);
  }

  /** The registered sources' feeders now, each once, in registration order. */
  static List<GpuFeeder> all() {
    Set<GpuFeeder> all = new LinkedHashSet<>();
    SOURCES.forEach(s -> all.addAll(s.get()));
    return List.copyOf(all);
  }
}
