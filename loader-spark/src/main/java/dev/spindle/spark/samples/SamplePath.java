package dev.spindle.spark.samples;

import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.image.ImageException;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.pipeline.ExecutorPools;
import dev.spindle.spark.pipeline.LastBatch;
import dev.spindle.spark.pipeline.Order;
import dev.spindle.spark.pipeline.Pipeline;
import dev.spindle.spark.pipeline.PipelineBuilder;
import dev.spindle.spark.pipeline.PipelineFailure;
import dev.spindle.spark.pipeline.PipelineIterator;
import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.pipeline.QuarantineEntry;
import dev.spindle.spark.shard.Sample;
import java.time.Duration;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * One task's run of the executor-side sample path that {@code preprocess}, {@code feed} and the
 * {@code spindle} DataSource share; each adds only its sink (see the package documentation).
 * Started by {@link #start}; the task thread pulls batches of rows with {@link #next()} and turns
 * them into its Arrow batch with {@link #fill}. One consumer thread; {@link #close()}, {@link
 * #stats()}, {@link #quarantine()} and {@link #decodeNanos()} from any thread, also after close.
 *
 * @param <T> the items the source yields
 */
public final class SamplePath<T extends IndexedSample> implements AutoCloseable {
  /** The source stage's name: a failure there is a storage error, not a bad sample. */
  public static final String READ = "read";

  private final PathSpec spec;
  private final BufferAllocator allocator;
  private final LongAdder decodeNanos = new LongAdder();
  private final LongAdder imagesDecoded = new LongAdder();
  private final LongAdder produced = new LongAdder();
  private final LongAdder bad = new LongAdder();
  private final LongAdder hostCopyBytes = new LongAdder();
  private final PipelineIterator<List<Decoded<T>>> rows;

  /**
   * What a running path tells its task while it runs: the samples that left its decode stage so far
   * ({@code samples}: decoded or checked, bad ones included: rows before they are batched), of them
   * {@code bad}, and the pipeline's statistics. Called every {@link #PROGRESS_PERIOD} on the
   * pipeline's statistics thread, and once when the path closes.
   */
  @FunctionalInterface
  public interface Progress {
    void produced(long samples, long bad, PipelineStats stats);
  }

  /** How often a running path reports its {@link Progress}. */
  public static final Duration PROGRESS_PERIOD = Duration.ofMillis(250);

  private SamplePath(
      PathSpec spec,
      Iterator<? extends T> source,
      BufferAllocator allocator,
      Progress progress,
      ExecutorPools pools) {
    this.spec = spec;
    this.allocator = allocator;
    PipelineBuilder<List<Decoded<T>>> b =
        Pipeline.source(READ, source)
            .keyedBy(IndexedSample::id)
            .sizedBy(IndexedSample::bytes)
            .pipe(spec.stage(), this::decode, spec.concurrency(), Order.INPUT)
            .sizedBy(Decoded::bytes)
            .aggregate("batch", spec.batchSize(), LastBatch.KEEP, d -> d.item().endsBatch());
    if (spec.bad() == PathSpec.BadSamples.QUARANTINE) {
      b.failureBudget(spec.stage(), spec.budget());
    }
    if (progress != null) {
      b.statsListener(
          PROGRESS_PERIOD, stats -> progress.produced(produced.sum(), bad.sum(), stats));
    }
    this.rows = b.pools(pools).named(spec.owner()).build().start();
  }

  /**
   * Starts the path on the executor-wide pools. The path owns {@code source} from now on (an {@link
   * AutoCloseable} source is closed when it ends); decoded pixels come from {@code allocator},
   * which must outlive the path. The caller closes the path.
   */
  public static <T extends IndexedSample> SamplePath<T> start(
      PathSpec spec, Iterator<? extends T> source, BufferAllocator allocator) {
    return start(spec, source, allocator, null);
  }

  /**
   * {@link #start(PathSpec, Iterator, BufferAllocator)}, telling {@code progress} (null: nobody)
   * what the path produced as it runs, sample by sample rather than batch by batch.
   */
  public static <T extends IndexedSample> SamplePath<T> start(
      PathSpec spec, Iterator<? extends T> source, BufferAllocator allocator, Progress progress) {
    return new SamplePath<>(spec, source, allocator, progress, ExecutorPools.shared());
  }

  /**
   * {@link #start(PathSpec, Iterator, BufferAllocator)} on {@code pools} instead of the
   * executor-wide pools: for a caller outside Spark that sizes its own threads ({@code bench
   * images}), and closes {@code pools} after the path.
   */
  public static <T extends IndexedSample> SamplePath<T> startOn(
      ExecutorPools pools, PathSpec spec, Iterator<? extends T> source, BufferAllocator allocator) {
    return new SamplePath<>(spec, source, allocator, null, pools);
  }

  /** Threads of the executor-wide CPU pool the path decodes on. */
  public static int cpuThreads() {
    return ExecutorPools.shared().cpuThreads();
  }

  /**
   * The next batch of rows in source order ({@code batchSize} rows, the last one fewer), or null at
   * the end. The rows are the caller's: close each one.
   *
   * @throws PipelineFailure when the source failed, an op threw an {@link Error}, or a bad sample
   *     exceeded the failure budget ({@link #stoppedByBudget})
   */
  public List<Decoded<T>> next() {
    return rows.hasNext() ? rows.next() : null;
  }

  /**
   * Copies the rows' pixels (decoded, or a preprocess output's stored pixels, which the decode
   * stage only checked), labels, keys, indices and extra fields into rows {@code 0..} of {@code
   * batch}, row {@code r} of the list into row {@code r}; rows with a problem are left unset and
   * returned (the caller sets them, in any order, before it seals: {@link ImageBatch#seal} refuses
   * a row left unset). Does not seal the batch. Task thread; for paths with {@link
   * PathSpec#images()}.
   */
  public static BitSet fill(ImageBatch batch, List<? extends Decoded<?>> rows) {
    BitSet bad = new BitSet(rows.size());
    for (int r = 0; r < rows.size(); r++) {
      Decoded<?> d = rows.get(r);
      if (d.problem() != null) {
        bad.set(r);
        continue;
      }
      Sample s = d.item().sample();
      if (batch.hasImage()) { // a batch without an image column: nothing was decoded
        placePixels(batch, r, d, s);
      }
      batch.setRow(r, s.label(), s.key(), d.item().index());
      if (batch.extraFields() > 0) {
        batch.setFields(r, s.fields());
      }
    }
    return bad;
  }

  private static void placePixels(ImageBatch batch, int r, Decoded<?> d, Sample s) {
    long rowBytes = batch.rowBytes();
    if (d.pixels() != null) {
      batch.imageData().setBytes(r * rowBytes, d.pixels(), 0, rowBytes);
    } else if (s.stored() != null && s.image().length == rowBytes) {
      batch.imageData().setBytes(r * rowBytes, s.image(), 0, rowBytes);
    } else {
      throw new IllegalStateException(
          "Row "
              + r
              + " holds no pixels for this batch: the path"
              + " neither decoded it nor holds its "
              + rowBytes
              + " stored bytes");
    }
  }

  /** True when {@code f} is the decode stage running out of its failure budget. */
  public static boolean stoppedByBudget(PipelineFailure f) {
    return !f.stage().equals(READ) && !f.stage().equals("sink") && !(f.getCause() instanceof Error);
  }

  /** Samples quarantined so far (bad samples dropped from the flow), as the pipeline lists them. */
  public List<QuarantineEntry> quarantine() {
    return rows.quarantine();
  }

  /** {@link #quarantine()} as records with shard, key and index (keys made by {@link SampleId}). */
  public List<QuarantineRecord> quarantined() {
    return quarantine().stream().map(q -> SampleId.record(q.key(), q.reason())).toList();
  }

  public PipelineStats stats() {
    return rows.stats();
  }

  /** Time spent decoding and transforming, summed over the decode threads. */
  public long decodeNanos() {
    return decodeNanos.sum();
  }

  /**
   * Images decoded and transformed so far ({@link ImageTransform#apply} calls that succeeded); 0
   * for a preprocess output's stored pixels, which are only checked and copied.
   */
  public long imagesDecoded() {
    return imagesDecoded.sum();
  }

  /** Stops the pipeline and releases every row still inside it; idempotent. */
  @Override
  public void close() {
    rows.close();
  }

  /** The decode stage's op: one item on a CPU pool thread; counts it, and whether it is bad. */
  private Decoded<T> decode(T item) throws ImageException {
    try {
      Decoded<T> d = decodeOne(item);
      if (d.problem() != null) {
        bad.increment();
      }
      return d;
    } catch (ImageException | RuntimeException e) {
      bad.increment(); // quarantined by the pipeline
      throw e;
    } finally {
      produced.increment();
    }
  }

  private Decoded<T> decodeOne(T item) throws ImageException {
    Sample s = item.sample();
    if (!s.usable()) {
      return reject(item, s.problem(), null);
    }
    BatchImages images = spec.images();
    if (images == null) {
      return Decoded.ok(item, null);
    }
    RowTarget target = item.target();
    if (target != null) {
      return into(item, s, images, target);
    }
    if (s.stored() != null || !images.decodes()) {
      return stored(item, s, images);
    }
    ImageTransform transform = images.transform();
    ArrowBuf pixels = allocator.buffer(transform.outputBytes());
    long start = System.nanoTime();
    try {
      transform.apply(s.image(), 0, s.image().length, item.index(), pixels, 0);
      imagesDecoded.increment();
      return Decoded.ok(item, pixels);
    } catch (ImageException e) {
      pixels.close();
      return reject(item, "cannot decode " + s.imageName() + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      pixels.close();
      if (spec.bad() == PathSpec.BadSamples.QUARANTINE) {
        throw e; // the pipeline lists it naming its class: more likely a bug than bad data
      }
      return Decoded.bad(item, "decoder failed on " + s.imageName() + ": " + e);
    } catch (Error e) {
      pixels.close();
      throw e;
    } finally {
      decodeNanos.add(System.nanoTime() - start);
    }
  }

  /**
   * Decodes {@code item} straight into its row {@code target} (no buffer of its own, nothing to
   * copy afterwards), or, for a preprocess output's stored row, copies its stored pixels there: the
   * one host copy of that path, counted in {@link #hostCopyBytes()}. A sample that fails leaves the
   * row for its consumer to fill (a stand-in).
   */
  private Decoded<T> into(T item, Sample s, BatchImages images, RowTarget target)
      throws ImageException {
    ArrowBuf row = target.begin();
    try {
      if (row == null) {
        return Decoded.bad(item, "its batch was given up (the task is stopping)");
      }
      if (s.stored() != null || !images.decodes()) {
        Decoded<T> checked = stored(item, s, images);
        if (checked.problem() == null) {
          row.setBytes(target.offset(), s.image(), 0, images.rowBytes());
          hostCopyBytes.add(images.rowBytes());
        }
        return checked.problem() == null ? Decoded.placed(item) : checked;
      }
      return decodeInto(item, s, images.transform(), row, target.offset());
    } finally {
      target.end();
    }
  }

  private Decoded<T> decodeInto(T item, Sample s, ImageTransform t, ArrowBuf row, long offset)
      throws ImageException {
    long start = System.nanoTime();
    try {
      t.apply(s.image(), 0, s.image().length, item.index(), row, offset);
      imagesDecoded.increment();
      return Decoded.placed(item);
    } catch (ImageException e) {
      return reject(item, "cannot decode " + s.imageName() + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (spec.bad() == PathSpec.BadSamples.QUARANTINE) {
        throw e; // the pipeline lists it naming its class: more likely a bug than bad data
      }
      return Decoded.bad(item, "decoder failed on " + s.imageName() + ": " + e);
    } finally {
      decodeNanos.add(System.nanoTime() - start);
    }
  }

  /**
   * Image bytes the path copied on the host: a preprocess output's stored pixels copied into their
   * rows ({@link IndexedSample#target()}); decoded images are written in place, not copied. (What
   * {@link #fill} copies is its caller's to count.)
   */
  public long hostCopyBytes() {
    return hostCopyBytes.sum();
  }

  /**
   * A preprocess output's stored row: nothing to decode; its size is checked here (a bad one is a
   * bad sample) and {@link #fill} copies it.
   */
  private Decoded<T> stored(T item, Sample s, BatchImages images) throws ImageException {
    if (s.stored() == null || images.decodes()) {
      throw new IllegalStateException(
          SampleId.of(s.shard(), s.key(), item.index())
              + " is "
              + (s.stored() == null
                  ? "an encoded sample in a path of stored pixels"
                  : "a stored row in a path that decodes"));
    }
    if (s.image().length != images.rowBytes()) {
      return reject(
          item,
          s.imageName()
              + " holds "
              + s.image().length
              + " bytes; the"
              + " preprocess output's image_shape "
              + images.shape()
              + " needs "
              + images.rowBytes(),
          null);
    }
    return Decoded.ok(item, null);
  }

  private Decoded<T> reject(T item, String reason, ImageException cause) throws ImageException {
    if (spec.bad() == PathSpec.BadSamples.KEEP) {
      return Decoded.bad(item, reason);
    }
    throw cause == null ? new ImageException(reason) : new ImageException(reason, cause);
  }
}
