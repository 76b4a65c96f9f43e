package dev.spindle.spark.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Describes a pipeline in the order data flows: {@link Pipeline#source} → {@link #pipe} … → {@link
 * #aggregate} → {@link #build()}. {@link #keyedBy} and {@link #sizedBy} describe the items at the
 * point of the flow where they are called. Every argument is checked when given, naming the bad
 * value. One thread, one pipeline: {@code pipe} and {@code aggregate} return this builder, retyped
 * to the new item type.
 *
 * @param <T> type of the items at this point of the flow
 */
public final class PipelineBuilder<T> {
  /** Default bound of every queue, in items. */
  public static final int DEFAULT_QUEUE_ITEMS = 64;

  /** Default bound of every queue, in bytes (64 MiB). */
  public static final long DEFAULT_QUEUE_BYTES = 64L << 20;

  /** Default longest wait of {@code hasNext()} for one item before the pipeline is failed. */
  public static final Duration DEFAULT_ITEM_TIMEOUT = Duration.ofMinutes(10);

  /** Default time {@code close()} waits for running ops. */
  public static final Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(2);

  final Iterator<?> source;
  final List<Def> defs = new ArrayList<>();
  final Map<String, FailureBudget> budgets = new HashMap<>();
  String name = "pipeline";
  FailureBudget defaultBudget = FailureBudget.none();
  int queueItems = DEFAULT_QUEUE_ITEMS;
  long queueBytes = DEFAULT_QUEUE_BYTES;
  Duration stopTimeout = DEFAULT_STOP_TIMEOUT;
  Duration itemTimeout = DEFAULT_ITEM_TIMEOUT;
  Duration statsPeriod;
  Consumer<PipelineStats> statsListener;
  ExecutorPools pools;
  private boolean built;

  PipelineBuilder(String sourceName, Iterator<?> source) {
    this.source = Objects.requireNonNull(source, "source iterator");
    defs.add(new Def(checkName(sourceName), "source", null, 1, Order.INPUT, false, 0, null));
  }

  /**
   * Adds a stage that applies {@code op} to every item on the CPU pool, with at most {@code
   * concurrency} items in flight (a limit, not a thread count), emitting in {@code order}.
   */
  public <R> PipelineBuilder<R> pipe(
      String name, Op<? super T, ? extends R> op, int concurrency, Order order) {
    return addPipe(name, op, concurrency, order, false);
  }

  /** Like {@link #pipe}, for ops that block on I/O: they run on the elastic I/O pool. */
  public <R> PipelineBuilder<R> pipeIo(
      String name, Op<? super T, ? extends R> op, int concurrency, Order order) {
    return addPipe(name, op, concurrency, order, true);
  }

  /**
   * Groups consecutive items into lists of {@code size}, in the order they arrive; {@code
   * remainder} decides the last, shorter one (dropped items are released, not quarantined). Each
   * list is new and belongs to whoever takes it. A batch's byte size is the sum of its items'.
   */
  public PipelineBuilder<List<T>> aggregate(String name, int size, LastBatch remainder) {
    checkOpen();
    if (size <= 0) {
      throw new IllegalArgumentException(
          "Invalid batch size for stage '" + name + "': " + size + " (must be > 0)");
    }
    Objects.requireNonNull(remainder, "remainder");
    defs.add(new Def(checkName(name), "aggregate", null, 1, Order.INPUT, false, size, remainder));
    return retype();
  }

  /**
   * {@link #aggregate(String, int, LastBatch)} whose groups also close after an item for which
   * {@code ends} is true (groups of varying sizes, at most {@code size}: a token budget's batches).
   * {@code ends} runs on the thread that drains the aggregate.
   */
  public PipelineBuilder<List<T>> aggregate(
      String name, int size, LastBatch remainder, Predicate<? super T> ends) {
    aggregate(name, size, remainder);
    Objects.requireNonNull(ends, "ends");
    defs.get(defs.size() - 1).ends = item -> ends.test(cast(item));
    return retype();
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object item) {
    return (T) item;
  }

  /** Keys the items at this point for the quarantine list (default: "item N", N their position). */
  public PipelineBuilder<T> keyedBy(Function<? super T, String> key) {
    checkOpen();
    last().key = erase(Objects.requireNonNull(key, "key"));
    return this;
  }

  /** Sizes the items at this point for the byte bound of the queue they enter. */
  public PipelineBuilder<T> sizedBy(ToLongFunction<? super T> bytes) {
    checkOpen();
    last().size = eraseSize(Objects.requireNonNull(bytes, "bytes"));
    return this;
  }

  /** The failure budget of every stage without its own (default {@link FailureBudget#none()}). */
  public PipelineBuilder<T> failureBudget(FailureBudget budget) {
    checkOpen();
    this.defaultBudget = Objects.requireNonNull(budget, "budget");
    return this;
  }

  /** The failure budget of the stage called {@code stage}. */
  public PipelineBuilder<T> failureBudget(String stage, FailureBudget budget) {
    checkOpen();
    budgets.put(Objects.requireNonNull(stage, "stage"), Objects.requireNonNull(budget, "budget"));
    return this;
  }

  /** Bound of every queue in items (default {@value #DEFAULT_QUEUE_ITEMS}). */
  public PipelineBuilder<T> queueItems(int items) {
    checkOpen();
    if (items <= 0) {
      throw new IllegalArgumentException("Invalid queue size: " + items + " items (must be > 0)");
    }
    this.queueItems = items;
    return this;
  }

  /**
   * Bound of every queue in bytes, as measured by {@link #sizedBy} (default 64 MiB). An item larger
   * than the bound still passes, alone.
   */
  public PipelineBuilder<T> queueBytes(long bytes) {
    checkOpen();
    if (bytes <= 0) {
      throw new IllegalArgumentException("Invalid queue size: " + bytes + " bytes (must be > 0)");
    }
    this.queueBytes = bytes;
    return this;
  }

  /** Calls {@code listener} with fresh statistics every {@code period} and once at the end. */
  public PipelineBuilder<T> statsListener(Duration period, Consumer<PipelineStats> listener) {
    checkOpen();
    Objects.requireNonNull(period, "period");
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("Invalid statistics period: " + period + " (must be > 0)");
    }
    this.statsPeriod = period;
    this.statsListener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /** How long {@code close()} waits for running ops (default 2 s). */
  public PipelineBuilder<T> stopTimeout(Duration timeout) {
    checkOpen();
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("Invalid stop timeout: " + timeout + " (must be >= 0)");
    }
    this.stopTimeout = timeout;
    return this;
  }

  /**
   * Longest time {@code hasNext()} waits for one item (default 10 min): past it the pipeline is
   * considered stalled and fails with a {@link PipelineFailure} that carries the statistics.
   */
  public PipelineBuilder<T> itemTimeout(Duration timeout) {
    checkOpen();
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("Invalid item timeout: " + timeout + " (must be > 0)");
    }
    this.itemTimeout = timeout;
    return this;
  }

  /** The pools to run on (default {@link ExecutorPools#shared()}). */
  public PipelineBuilder<T> pools(ExecutorPools pools) {
    checkOpen();
    this.pools = Objects.requireNonNull(pools, "pools");
    return this;
  }

  /** Names the pipeline in logs, errors and statistics (default "pipeline"). */
  public PipelineBuilder<T> named(String name) {
    checkOpen();
    this.name = Objects.requireNonNull(name, "name");
    return this;
  }

  /** The pipeline; the builder cannot be used afterwards. */
  public Pipeline<T> build() {
    checkOpen();
    for (String stage : budgets.keySet()) {
      if (defs.stream().noneMatch(d -> d.name.equals(stage) && !d.kind.equals("source"))) {
        throw new IllegalArgumentException("Failure budget for unknown stage: '" + stage + "'");
      }
    }
    built = true;
    return new Pipeline<>(this);
  }

  private <R> PipelineBuilder<R> addPipe(
      String name, Op<? super T, ? extends R> op, int concurrency, Order order, boolean io) {
    checkOpen();
    Objects.requireNonNull(op, "op");
    Objects.requireNonNull(order, "order");
    if (concurrency <= 0) {
      throw new IllegalArgumentException(
          "Invalid concurrency for stage '" + name + "': " + concurrency + " (must be > 0)");
    }
    @SuppressWarnings("unchecked")
    Op<Object, Object> erased = (Op<Object, Object>) op;
    defs.add(new Def(checkName(name), "pipe", erased, concurrency, order, io, 0, null));
    return retype();
  }

  private String checkName(String stage) {
    if (stage == null || stage.isBlank()) {
      throw new IllegalArgumentException("Invalid stage name: '" + stage + "' (must not be blank)");
    }
    if (stage.equals("sink") || defs.stream().anyMatch(d -> d.name.equals(stage))) {
      throw new IllegalArgumentException("Duplicate stage name: '" + stage + "'");
    }
    return stage;
  }

  private void checkOpen() {
    if (built) {
      throw new IllegalStateException("Pipeline '" + name + "' was already built");
    }
  }

  private Def last() {
    return defs.get(defs.size() - 1);
  }

  @SuppressWarnings("unchecked")
  private <R> PipelineBuilder<R> retype() {
    return (PipelineBuilder<R>) this;
  }

  @SuppressWarnings("unchecked")
  private static Function<Object, String> erase(Function<?, String> f) {
    return (Function<Object, String>) f;
  }

  @SuppressWarnings("unchecked")
  private static ToLongFunction<Object> eraseSize(ToLongFunction<?> f) {
    return (ToLongFunction<Object>) f;
  }

  /** One stage as recorded; {@code key} and {@code size} describe its output items. */
  static final class Def {
    final String name;
    final String kind;
    final Op<Object, Object> op;
    final int concurrency;
    final Order order;
    final boolean io;
    final int batchSize;
    final LastBatch remainder;
    Function<Object, String> key;
    ToLongFunction<Object> size;
    Predicate<Object> ends;

    Def(
        String name,
        String kind,
        Op<Object, Object> op,
        int concurrency,
        Order order,
        boolean io,
        int batchSize,
        LastBatch remainder) {
      this.name = name;
      this.kind = kind;
      this.op = op;
      this.concurrency = concurrency;
      this.order = order;
      this.io = io;
      this.batchSize = batchSize;
      this.remainder = remainder;
    }
  }
}
