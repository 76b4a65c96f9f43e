package dev.spindle.spark.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.IntStream;

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
 *     .aggregate("batch", 64, LastBatch.KEEP)
 *     .failureBudget(FailureBudget.fraction(0.01, 100))
 *     .build();
 * try (PipelineIterator<List<Image>> it = p.start()) {
 *   while (it.hasNext()) {
 *     consume(it.next());
 *   }
 * }
 * }</pre>
 *
 * Immutable once built; {@code start()} may be called from any thread, once (the source iterator is
 * single-use). The caller owns the returned iterator and must close it.
 */
public final class Pipeline<T> {
  private static final AtomicBoolean WARMED_UP = new AtomicBoolean();

  /** {@link #warmUp}'s pipelines, and items in each (a last, partial batch of 33). */
  private static final int WARM_UP_RUNS = 10;

  private static final int WARM_UP_ITEMS = 4_001;
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
      list.add(
          new StageSpec(
              d.name,
              d.kind,
              d.op,
              d.concurrency,
              d.order,
              d.io,
              d.batchSize,
              d.remainder,
              budget,
              previous == null ? null : previous.key,
              d.size,
              seqLabel,
              d.ends));
      if (d.kind.equals("aggregate")) {
        seqLabel = "batch";
      }
      previous = d;
    }
    this.specs = List.copyOf(list);
  }

  /**
   * Begins a pipeline description. {@code items} is pulled on one I/O-pool thread (it may block on
   * I/O) and must not be used by anyone else once started; it must not yield null. The pipeline
   * owns it: an {@link AutoCloseable} source is closed, on that same thread, when it is exhausted
   * or the pipeline stops.
   */
  public static <T> PipelineBuilder<T> source(String name, Iterator<? extends T> items) {
    return new PipelineBuilder<>(name, items);
  }

  /**
   * Has the JIT compile the engine before real work: runs {@value #WARM_UP_RUNS} short pipelines (a
   * source, a CPU pipe in input order, a batch aggregate keeping its remainder) of trivial items to
   * their end on two CPU threads of its own, and waits for them. Otherwise the engine's code
   * compiles during a job's first items, and its end-of-pipeline paths, rare in the profile, send
   * the compiled code back to the interpreter at the end of each of the first pipelines, to be
   * compiled again during the next (measured with {@code ImageBench}: 0.24-0.42 s of compiler time
   * in its second and third epochs without this, 0.08-0.23 s with it, on two cores that the workers
   * need). About 0.1-0.3 s; once per JVM.
   *
   * @return the items its pipelines delivered ({@value #WARM_UP_RUNS} x {@value #WARM_UP_ITEMS}),
   *     or 0 when a warm-up had already run or is running
   */
  public static long warmUp() {
    if (!WARMED_UP.compareAndSet(false, true)) {
      return 0;
    }
    return runWarmUp();
  }

  /**
   * {@link #warmUp}'s pipelines, run whether or not they ran before in this JVM (they are harmless
   * to run again; {@code samples.DecodeWarmUp} runs them in the background without taking {@link
   * #warmUp}'s once-per-JVM turn, which stays its caller's).
   *
   * @return the items its pipelines delivered ({@value #WARM_UP_RUNS} x {@value #WARM_UP_ITEMS})
   */
  public static long runWarmUp() {
    long items = 0;
    try (ExecutorPools pools = ExecutorPools.create("spindle-warm-up", 2)) {
      for (int run = 0; run < WARM_UP_RUNS; run++) {
        try (PipelineIterator<List<Integer>> it =
            source("warm-up", IntStream.range(0, WARM_UP_ITEMS).iterator())
                .pools(pools)
                .pipe("op", (Integer i) -> i + 1, 8, Order.INPUT)
                .sizedBy(i -> 1L)
                .aggregate("batch", 64, LastBatch.KEEP)
                .sizedBy(batch -> (long) batch.size())
                .queueBytes(64)
                .build()
                .start()) {
          while (it.hasNext()) {
            items += it.next().size();
          }
        }
      }
    }
    return items;
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
   * Starts every stage and returns the consuming end. Inside a Spark task the pipeline also closes
   * when the task completes and stops when the task is killed.
   *
   * @throws IllegalStateException when called a second time
   */
  public PipelineIterator<T> start() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException(
          "Pipeline '" + name + "' was already started (its source iterator is single-use)");
    }
    RunningPipeline<T> running =
        new RunningPipeline<>(
            name,
            source,
            specs,
            queueItems,
            queueBytes,
            stopTimeout,
            itemTimeout,
            pools == null ? ExecutorPools.shared() : pools);
    running.start(statsPeriod, statsListener);
    return running;
  }
}
