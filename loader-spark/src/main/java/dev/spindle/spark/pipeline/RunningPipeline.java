package dev.spindle.spark.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A started pipeline: wires queues and stages, runs the source task, and is the consumer's
 * iterator. See {@link PipelineIterator} for the threading contract.
 */
final class RunningPipeline<T> implements PipelineIterator<T> {
  private static final Logger LOG = LoggerFactory.getLogger(RunningPipeline.class);
  private static final long WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final Set<RunningPipeline<?>> LIVE = ConcurrentHashMap.newKeySet();

  private final RunState run;
  private final long startNanos = System.nanoTime();
  private final long stopTimeoutNanos;
  private final long itemTimeoutNanos;
  private final List<ItemQueue> queues = new ArrayList<>();
  private final List<Stage> stages = new ArrayList<>();
  private final SourceTask source;
  private final ItemQueue last;
  private final StageMeter sink = new StageMeter("sink", "sink", 1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile Thread consumer;
  private volatile Future<?> sourceFuture;
  private volatile ScheduledFuture<?> ticker;
  private volatile Consumer<PipelineStats> listener;
  private SparkTask task;
  private Entry next;
  private long lastTaken;

  RunningPipeline(
      String name,
      Iterator<?> items,
      List<StageSpec> specs,
      int queueItems,
      long queueBytes,
      Duration stopTimeout,
      Duration itemTimeout,
      ExecutorPools pools) {
    this.run = new RunState(name, pools, this::onStop);
    this.stopTimeoutNanos = stopTimeout.toNanos();
    this.itemTimeoutNanos = itemTimeout.toNanos();
    for (int i = 0; i < specs.size(); i++) {
      queues.add(new ItemQueue(queueItems, queueBytes));
    }
    this.source = new SourceTask(specs.get(0), items, queues.get(0), run);
    for (int i = 1; i < specs.size(); i++) {
      StageSpec s = specs.get(i);
      ItemQueue in = queues.get(i - 1);
      ItemQueue out = queues.get(i);
      stages.add(
          s.kind().equals("pipe")
              ? new PipeStage(s, in, out, run)
              : new AggregateStage(s, in, out, run));
    }
    this.last = queues.get(queues.size() - 1);
    wire();
  }

  private void wire() {
    Runnable producer = source::wake;
    for (int i = 0; i < stages.size(); i++) {
      Stage s = stages.get(i);
      queues.get(i).wire(producer, s);
      producer = s;
    }
    last.wire(producer, this::wakeConsumer);
  }

  void start(Duration statsPeriod, Consumer<PipelineStats> statsListener) {
    LIVE.add(this);
    ExecutorStats.started(this);
    this.task = SparkTask.current(this::close);
    run.enter();
    try {
      sourceFuture = run.pools.io().submit(source);
    } catch (RuntimeException e) {
      run.exit();
      close();
      throw e;
    }
    if (statsListener != null) {
      this.listener = statsListener;
      long ms = Math.max(1, statsPeriod.toMillis());
      ticker =
          run.pools.scheduler().scheduleAtFixedRate(this::report, ms, ms, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (lastTaken != 0) {
      sink.timed(lastTaken);
      lastTaken = 0;
    }
    consumer = Thread.currentThread(); // before polling, so the next offer can wake it
    long waitStart = System.nanoTime();
    while (true) {
      throwIfFailed();
      throwIfKilled(); // also while items are ready: a slow consumer never waits for one
      Entry e = last.poll();
      if (e != null) {
        sink.blockedGet.set(false);
        next = e;
        return true;
      }
      if (last.drained()) {
        sink.finish();
        throwIfFailed();
        close();
        return false;
      }
      sink.blockedGet.set(true);
      if (System.nanoTime() - waitStart > itemTimeoutNanos) {
        stalled();
      }
      await();
    }
  }

  private void stalled() {
    run.fail(
        "sink",
        String.format(
            "Pipeline '%s' stalled: no item for %d ms (item timeout)." + " Statistics: %s",
            run.pipeline, itemTimeoutNanos / 1_000_000, stats()),
        null);
    throwIfFailed();
  }

  @Override
  @SuppressWarnings("unchecked")
  public T next() {
    if (!hasNext()) {
      throw new NoSuchElementException("Pipeline '" + run.pipeline + "' has no more items");
    }
    Entry e = next;
    next = null;
    sink.items.increment();
    lastTaken = System.nanoTime();
    return (T) e.item();
  }

  private void throwIfFailed() {
    PipelineFailure f = run.failure();
    if (f != null) {
      close();
      throw f;
    }
  }

  /** Ends the pipeline and throws Spark's {@code TaskKilledException} when its task was killed. */
  private void throwIfKilled() {
    if (task != null && task.killed()) {
      sink.blockedGet.set(false);
      close();
      task.throwIfKilled();
    }
  }

  private void await() {
    LockSupport.parkNanos(this, WAIT_NANOS);
    throwIfKilled();
    if (Thread.currentThread().isInterrupted()) {
      sink.blockedGet.set(false);
      close();
      throw new CancellationException(
          "Pipeline '" + run.pipeline + "' cancelled: the consumer thread was interrupted");
    }
  }

  private void wakeConsumer() {
    Thread t = consumer;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Runs once, on whichever thread stops the pipeline first. */
  private void onStop() {
    queues.forEach(ItemQueue::close);
    stages.forEach(Stage::drain);
    source.wake();
    wakeConsumer();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    run.stop();
    if (next != null && Thread.currentThread() == consumer) {
      // Closed elsewhere, the consumer may be about to take it: then it is the consumer's.
      Items.release(next.item());
      next = null;
    }
    awaitStages();
    ScheduledFuture<?> t = ticker;
    if (t != null) {
      t.cancel(false);
    }
    source.meter.finish();
    stages.forEach(s -> s.meter.finish());
    sink.finish();
    run.log.summarize();
    report();
    ExecutorStats.closed(this);
    LIVE.remove(this);
  }

  /** Waits for the source and running ops, interrupting the source half-way through. */
  private void awaitStages() {
    boolean interrupted = Thread.interrupted();
    try {
      boolean quiet = awaitQuiet(stopTimeoutNanos / 2);
      if (!quiet && sourceFuture != null) {
        sourceFuture.cancel(true);
        quiet = awaitQuiet(stopTimeoutNanos - stopTimeoutNanos / 2);
      }
      if (!quiet) {
        LOG.warn(
            "Pipeline '{}': {} source or op tasks still running {} ms after close;"
                + " their items are released when they return",
            run.pipeline,
            run.active(),
            stopTimeoutNanos / 1_000_000);
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private boolean awaitQuiet(long nanos) {
    try {
      return run.awaitQuiet(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return run.active() == 0;
    }
  }

  private void report() {
    Consumer<PipelineStats> l = listener;
    if (l == null) {
      return;
    }
    try {
      l.accept(stats());
    } catch (RuntimeException e) {
      listener = null;
      LOG.warn(
          "Pipeline '{}': statistics listener failed; it is not called again", run.pipeline, e);
    }
  }

  @Override
  public PipelineStats stats() {
    List<StageStats> list = new ArrayList<>();
    list.add(source.meter.snapshot());
    stages.forEach(s -> list.add(s.meter.snapshot()));
    list.add(sink.snapshot());
    return new PipelineStats(run.pipeline, (System.nanoTime() - startNanos) / 1e6, list);
  }

  @Override
  public List<QuarantineEntry> quarantine() {
    return run.quarantine();
  }

  /** The meters of every stage, source to sink. */
  List<StageMeter> meters() {
    List<StageMeter> list = new ArrayList<>();
    list.add(source.meter);
    stages.forEach(s -> list.add(s.meter));
    list.add(sink);
    return list;
  }

  /** Pipelines started and not yet closed in this JVM (for leak checks). */
  static int live() {
    return LIVE.size();
  }

  /** Source tasks and ops still running (for tests). */
  int active() {
    return run.active();
  }

  /** How often errors of this stage and reason were seen (for tests). */
  long failureCount(String stage, String reason) {
    return run.log.count(stage, reason);
  }
}
