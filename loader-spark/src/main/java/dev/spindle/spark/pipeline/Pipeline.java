package dev.spindle.spark.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A described, not yet running pipeline. Start with {@link #source}, describe the stages on the
 * returned {@link PipelineBuilder}, {@code build()}, then {@link #start()} once:
 *
 * <pre>{@code
 * Pipeline<List<Image>> p = Pipeline.source("read", samples)
 *     .keyedBy(Sample::key)
 *     .pipe("decode", Decoder::decode, 4, Order.INPUT)
 *     .sizedBy(Image::bytes)
 *     .pipe("resize", Resizer::resize, 4, Order.INPUT)
 *     .aggregate("batch", 64, Remainder.KEEP)
 *     .failureBudget(FailureBudget.fraction(0.01, 100))
 *     .build();
 * try (PipelineIterator<List<Image>> it = p.start()) {
 *   while (it.hasNext()) {
 *     consume(it.next());
 *   }
 * }
 * }</pre>
 *
 * Immutable once built; {@code start()} may be called from any thread, once (the source iterator
 * is single-use). The caller owns the returned iterator and must close it.
 */
public final class Pipeline<T> {
  private final String name;
  private final Iterator<?> source;
  private final List<StageSpec> specs;
  private final int queueItems;
  private final long queueBytes;
  private final Duration stopTimeout;
  private final Duration itemTimeout;
  private final Duration statsPeriod;
  private final Consumer<PipelineStats> statsListener;
  private final ExecutorPools pools;
  private final AtomicBoolean started = new AtomicBoolean();

  Pipeline(PipelineBuilder<?> b) {
    this.name = b.name;
    this.source = b.source;
    this.queueItems = b.queueItems;
    this.queueBytes = b.queueBytes;
    this.stopTimeout = b.stopTimeout;
    this.itemTimeout = b.itemTimeout;
    this.statsPeriod = b.statsPeriod;
    this.statsListener = b.statsListener;
    this.pools = b.pools;
    List<StageSpec> list = new ArrayList<>();
    String seqLabel = "item";
    PipelineBuilder.Def previous = null;
    for (PipelineBuilder.Def d : b.defs) {
      FailureBudget budget = b.budgets.getOrDefault(d.name, b.defaultBudget);
      list.add(new StageSpec(d.name, d.kind, d.op, d.concurrency, d.order, d.io, d.batchSize,
          d.remainder, budget, previous == null ? null : previous.key, d.size, seqLabel));
      if (d.kind.equals("aggregate")) {
        seqLabel = "batch";
      }
      previous = d;
    }
    this.specs = List.copyOf(list);
  }

  /**
   * Begins a pipeline description. {@code items} is pulled on one I/O-pool thread (it may block
   * on I/O) and must not be used by anyone else once started; it must not yield null. The
   * pipeline owns it: an {@link AutoCloseable} source is closed, on that same thread, when it is
   * exhausted or the pipeline stops.
   */
  public static <T> PipelineBuilder<T> source(String name, Iterator<? extends T> items) {
    return new PipelineBuilder<>(name, items);
  }

  /** The pipeline's name. */
  public String name() {
    return name;
  }

  /** Stage names in data-flow order, source first. */
  public List<String> stageNames() {
    return specs.stream().map(StageSpec::name).toList();
  }

  /**
   * Starts every stage and returns the consuming end. Inside a Spark task the pipeline also
   * closes when the task completes and stops when the task is killed.
   *
   * @throws IllegalStateException when called a second time
   */
  public PipelineIterator<T> start() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("Pipeline '" + name
          + "' was already started (its source iterator is single-use)");
    }
    RunningPipeline<T> running = new RunningPipeline<>(name, source, specs, queueItems,
        queueBytes, stopTimeout, itemTimeout, pools == null ? ExecutorPools.shared() : pools);
    running.start(statsPeriod, statsListener);
    return running;
  }
}
