package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.Device;
import dev.spindle.gpu.device.DeviceBuffer;
import dev.spindle.gpu.device.DeviceDiscovery;
import dev.spindle.gpu.device.IpcExport;
import dev.spindle.gpu.device.PinnedPool;
import dev.spindle.gpu.ring.Lease;
import dev.spindle.gpu.ring.PrefetchRing;
import dev.spindle.gpu.ring.Slot;
import java.time.Duration;
import java.util.BitSet;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.rounding.SegmentRoundingPolicy;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves Arrow batches into device memory through a prefetch ring: producers {@link #offer} batches
 * (their threads are the fillers: one staging {@code memcpy} into a pinned slot, never a CUDA
 * call), one copy thread per feeder enqueues the host-to-device copies and normalisation on its
 * stream, trainers lease batches with {@link #next} and release them by closing the {@link
 * DeviceBatch}.
 *
 * <p>Zero copy: with a pinned pool ({@link FeederConfig#pinnedPoolBytes()}), producers that build
 * batches with {@link #newPinnedAllocator} skip the staging copy; the copy engine reads their image
 * buffer in place. Producers that {@link #claimSlot claim a slot} write each row into it directly
 * (on a host device into the memory trainers read: no copy at all). Other batches are staged as
 * usual.
 *
 * <p>Threads: {@link #offer} and {@link #next} from any number of threads; the feeder starts one
 * daemon copy thread. Ownership: the feeder owns its device, ring memory and copy thread, and frees
 * them in {@link #close()}; leased batches are views into that memory. One feeder per GPU per JVM
 * is the intended use (see {@link GpuFeeders}).
 *
 * <p>Failures: a bad batch throws to the producer that offered it and leaves the ring intact; a
 * copy-thread error, a lease held past its deadline, or {@link #fail} stops the feeder, and every
 * later {@link #offer} / {@link #next} throws {@code RingFailedException} with the first cause.
 */
public final class GpuFeeder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GpuFeeder.class);
  private final Device device;
  private final FeederConfig config;
  private final SlotArena arena;
  private final PinnedPool pool;
  private final PrefetchRing<SlotMemory> ring;
  private final CopyWorker worker;
  private final Thread copyThread;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile int leasesRevoked;

  /** Image bytes producers' {@link #offer}s copied into slots on the host (staging copies). */
  private final LongAdder hostCopyBytes = new LongAdder();

  private GpuFeeder(Device device, FeederConfig config) throws InterruptedException {
    this.device = device;
    this.config = config;
    this.arena =
        new SlotArena(
            device,
            config.slots(),
            config.maxRows(),
            config.normalize(),
            config.images(),
            config.fields());
    try {
      this.pool =
          config.pinnedPoolBytes() > 0 ? new PinnedPool(device, config.pinnedPoolBytes()) : null;
    } catch (RuntimeException | Error e) {
      arena.close();
      throw e;
    }
    this.ring =
        new PrefetchRing<>(
            config.slots(),
            arena.slots::get,
            config.leaseTimeout().toNanos(),
            TimeUnit.NANOSECONDS);
    this.worker = new CopyWorker(device, arena, ring, config);
    this.copyThread = new Thread(worker, "spindle-feeder-copy-" + label(device));
    copyThread.setDaemon(true);
    try {
      copyThread.start();
      worker.awaitStarted(60, TimeUnit.SECONDS);
    } catch (InterruptedException | RuntimeException e) {
      ring.close();
      copyThread.join(TimeUnit.SECONDS.toMillis(10));
      arena.close();
      if (pool != null) {
        pool.close();
      }
      throw e;
    }
    LOG.info(
        "GPU feeder on {}: {} slots of {} rows, {} ({} host slab(s))",
        device.description(),
        config.slots(),
        config.maxRows(),
        config.normalize(),
        arena.hostSlabCount());
  }

  /**
   * Opens a feeder on {@code device}, which it then owns (closes it on failure and in {@link
   * #close()}).
   */
  public static GpuFeeder open(Device device, FeederConfig config) {
    try {
      return new GpuFeeder(device, config);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      device.close();
      throw new IllegalStateException("Interrupted while starting the feeder on " + device, e);
    } catch (RuntimeException | Error e) {
      try {
        device.close();
      } catch (RuntimeException ex) {
        e.addSuppressed(ex);
      }
      throw e;
    }
  }

  /** Opens a feeder on the device {@link DeviceDiscovery} picks for {@code choice} and ordinal. */
  public static GpuFeeder open(DeviceDiscovery.Choice choice, int ordinal, FeederConfig config) {
    return open(DeviceDiscovery.open(choice, ordinal), config);
  }

  /**
   * Copies {@code root} into a free slot and publishes it; blocks while the ring is full
   * (backpressure). The caller keeps ownership of {@code root} and may reuse it on return.
   *
   * @throws TimeoutException if no slot became free within {@code timeout}
   * @throws IllegalArgumentException if the batch does not match the configuration (the ring is
   *     unaffected)
   */
  public void offer(VectorSchemaRoot root, Duration timeout)
      throws TimeoutException, InterruptedException {
    offer(root, new BitSet(), timeout);
  }

  /**
   * {@link #offer(VectorSchemaRoot, Duration)} with loss weights: the rows set in {@code
   * unweighted} (padding, stand-ins of quarantined samples) get weight 0 ({@link
   * DeviceBatch#weight}), the others 1. The caller keeps {@code unweighted}.
   */
  public void offer(VectorSchemaRoot root, BitSet unweighted, Duration timeout)
      throws TimeoutException, InterruptedException {
    Slot<SlotMemory> slot = ring.claim(timeout.toNanos(), TimeUnit.NANOSECONDS);
    boolean published = false;
    try {
      long copied = BatchWriter.write(root, unweighted, slot.payload(), config, pool);
      ring.publish(slot);
      hostCopyBytes.add(copied);
      published = true;
    } finally {
      if (!published) {
        ring.abandon(slot);
      }
    }
  }

  /**
   * Claims a free slot for a batch written into it row by row ({@link SlotWriter}: decoded pixels
   * straight into the memory the trainer reads on a host device, into the pinned slot the copy
   * engine reads on CUDA), waiting while the ring is full (backpressure). Publish or close it.
   *
   * @throws TimeoutException if no slot became free within {@code timeout}
   * @throws IllegalStateException if the feeder has extra fields: a slot writer writes images,
   *     labels and keys only, so such batches are {@link #offer offered} as Arrow batches
   */
  public SlotWriter claimSlot(Duration timeout) throws TimeoutException, InterruptedException {
    if (!config.fields().isEmpty()) {
      throw new IllegalStateException(
          "Feeder on "
              + device.description()
              + " has extra fields "
              + config.fields().stream().map(SlotField::name).toList()
              + ": offer its batches as Arrow batches (a SlotWriter writes no fields)");
    }
    Slot<SlotMemory> slot = ring.claim(timeout.toNanos(), TimeUnit.NANOSECONDS);
    return new SlotWriter(
        ring,
        slot,
        device.kind(),
        arena.device.address(),
        config.inputBytesPerImage(),
        config.maxRows());
  }

  /**
   * A new root allocator whose buffers live in this feeder's pinned pool: batches built with it are
   * copied to the device in place, without the filler's staging copy. The caller owns it and must
   * release every buffer from it before closing the feeder (the allocator itself closes cleanly
   * only after the feeder dropped its holds: after the copies completed, or after {@link
   * #close()}). {@link #offer} keeps a reference to a batch's image buffer until its copy
   * completes, so the root may be closed right after {@code offer}.
   *
   * @throws IllegalStateException if the config has no pinned pool
   */
  public BufferAllocator newPinnedAllocator(long limit) {
    if (pool == null) {
      throw new IllegalStateException(
          "Feeder on "
              + device.description()
              + " has no pinned pool (FeederConfig.withPinnedPool)");
    }
    return new RootAllocator(
        RootAllocator.configBuilder()
            .allocationManagerFactory(PinnedAllocationManager.factory(pool))
            .roundingPolicy(new SegmentRoundingPolicy(1024L))
            .maxAllocation(limit)
            .build());
  }

  /**
   * Leases the next batch in publication order, waiting up to {@code timeout}.
   *
   * @return the batch (close it), or null once {@link #endOfInput()} was called and all batches
   *     were leased
   * @throws TimeoutException if no batch became ready in time
   */
  public DeviceBatch next(Duration timeout) throws TimeoutException, InterruptedException {
    Lease<SlotMemory> lease = ring.lease(timeout.toNanos(), TimeUnit.NANOSECONDS);
    return lease == null ? null : new DeviceBatch(this, lease);
  }

  /** No more batches will be offered; consumers drain the ring, then {@link #next} returns null. */
  public void endOfInput() {
    ring.endOfInput();
  }

  /** Stops the feeder with {@code cause} (e.g. the producing job failed); consumers see it. */
  public void fail(Throwable cause) {
    ring.fail(cause);
  }

  /** The device the feeder copies to. */
  public Device device() {
    return device;
  }

  /**
   * The device slab holding every slot, exported for CUDA IPC so a trainer process can map it once;
   * {@link DeviceBatch#imagePointer()} and {@link DeviceBatch#labelsPointer()} are then sent as
   * offsets from {@link IpcExport#base()}. Empty on host devices. Any thread, while the feeder is
   * open; the handle is valid until {@link #close()}.
   */
  public Optional<IpcExport> exportDeviceMemory() {
    if (closed.get()) {
      throw new IllegalStateException("Feeder on " + device.description() + " is closed");
    }
    return arena.device.exportIpc();
  }

  /** The configuration. */
  public FeederConfig config() {
    return config;
  }

  /** The first failure that stopped the feeder, or null while it is healthy. */
  public Throwable failureCause() {
    return ring.failureCause();
  }

  /** True once {@link #close()} was called. */
  public boolean isClosed() {
    return closed.get();
  }

  /** Statistics now (valid after close too). */
  public FeederStats stats() {
    CopyCounters c = worker.counters;
    return new FeederStats(
        device.description(),
        ring.snapshot(),
        c.bytes,
        c.batches,
        c.busyNanos,
        leasesRevoked,
        c.zeroCopyBatches,
        hostCopyBytes.sum(),
        c.inPlaceBytes);
  }

  /** Closes with the configured grace for outstanding leases; see {@link #close(Duration)}. */
  @Override
  public void close() {
    close(config.closeGrace());
  }

  /**
   * Shuts down: stops accepting batches and wakes every waiter, lets the copy thread wait on its
   * stream and exit, waits up to {@code grace} for outstanding leases, revokes the rest (their
   * accessors then throw; their {@code close()} does nothing), waits for fillers mid-copy, frees
   * device then host memory and releases the device. Idempotent.
   */
  public void close(Duration grace) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    ring.close();
    try {
      copyThread.join(TimeUnit.SECONDS.toMillis(60));
      if (copyThread.isAlive()) {
        LOG.error(
            "Copy thread on {} did not stop within 60 s; leaking the feeder's memory "
                + "rather than freeing it under the device",
            device.description());
        return;
      }
      int held = ring.awaitLeasesReleased(grace.toNanos(), TimeUnit.NANOSECONDS);
      leasesRevoked = ring.revokeLeases();
      if (held > 0) {
        LOG.warn(
            "Feeder on {} closed with {} batch(es) still leased; their leases are revoked",
            device.description(),
            leasesRevoked);
      }
      int filling =
          ring.awaitFillsFinished(Math.max(grace.toNanos(), 1_000_000_000L), TimeUnit.NANOSECONDS);
      if (filling > 0) {
        LOG.error(
            "Feeder on {}: {} filler(s) still copying after close; leaking its memory "
                + "rather than freeing it under them",
            device.description(),
            filling);
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.error(
          "Interrupted while closing the feeder on {}; leaking its memory", device.description());
      return;
    }
    for (Slot<SlotMemory> s : ring.slots()) {
      s.payload().releaseSource(); // staged or in-flight zero-copy batches the device never read
    }
    arena.close();
    if (pool != null) {
      try {
        pool.close();
      } catch (IllegalStateException e) {
        LOG.error("Feeder on {}: {}; the device stays open", device.description(), e.getMessage());
        throw e;
      }
    }
    device.close();
  }

  boolean release(Lease<SlotMemory> lease) {
    return ring.release(lease);
  }

  long deviceBase() {
    return arena.device.address();
  }

  DeviceBuffer deviceSlab() {
    return arena.device;
  }

  private static String label(Device d) {
    return d.ordinal() < 0 ? "host" : "cuda" + d.ordinal();
  }

  @Override
  public String toString() {
    return "GpuFeeder[" + device.description() + ", " + config.slots() + " slots]";
  }
}
