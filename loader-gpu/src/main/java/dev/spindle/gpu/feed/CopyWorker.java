package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.CopyStream;
import dev.spindle.gpu.device.Device;
import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.device.ElementType;
import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.ring.PrefetchRing;
import dev.spindle.gpu.ring.Slot;
import dev.spindle.gpu.ring.WaitPolicy;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The body of a feeder's copy thread, the only thread that touches the device stream (on CUDA it
 * owns the context and the non-blocking stream). It opens the stream, uploads the normalisation
 * table, then loops: enqueue every STAGED slot (H2D copy of images and labels, normaliser, event),
 * retire in order the slots whose event completed (COPYING → READY), idle per the wait policy while
 * the device works. On close it waits for the stream and destroys it; on error it fails the ring so
 * the consumer sees the cause on its next call.
 */
final class CopyWorker implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(CopyWorker.class);
  private final Device device;
  private final SlotArena arena;
  private final PrefetchRing<SlotMemory> ring;
  private final NormalizeSpec spec;
  private final int imageBytes;
  private final boolean normalize;
  private final WaitPolicy waitPolicy;
  private final ArrayDeque<Slot<SlotMemory>> inFlight;
  private final CountDownLatch started = new CountDownLatch(1);
  final CopyCounters counters = new CopyCounters();
  private volatile Throwable startFailure;

  CopyWorker(Device device, SlotArena arena, PrefetchRing<SlotMemory> ring, FeederConfig config) {
    this.device = device;
    this.arena = arena;
    this.ring = ring;
    this.spec = config.normalize();
    this.imageBytes = config.inputBytesPerImage();
    this.normalize = config.images() && spec.type() != ElementType.UINT8;
    this.waitPolicy = config.waitPolicy();
    this.inFlight = new ArrayDeque<>(config.slots());
  }

  /** Waits until the stream is open; rethrows a start-up failure. */
  void awaitStarted(long timeout, TimeUnit unit) throws InterruptedException {
    if (!started.await(timeout, unit)) {
      throw new IllegalStateException(
          "Copy thread on " + device + " did not start within " + unit.toMillis(timeout) + " ms");
    }
    if (startFailure != null) {
      throw new IllegalStateException(
          "Copy thread on " + device + " failed to start: " + startFailure, startFailure);
    }
  }

  @Override
  public void run() {
    CopyStream stream;
    try {
      stream = device.openStream(ring.slots().size());
      stream.copyToDevice(arena.tableHost, 0, arena.device, 0, arena.tableBytes);
      stream.synchronize();
    } catch (Throwable t) {
      startFailure = t;
      started.countDown();
      return;
    }
    started.countDown();
    try (stream) {
      loop(stream);
    } catch (Throwable t) {
      LOG.error("Copy thread on {} failed; failing the feeder", device, t);
      ring.fail(t);
    }
  }

  private void loop(CopyStream stream) throws InterruptedException {
    int idle = 0;
    while (!ring.isTerminated()) {
      boolean progressed = retireCompleted(stream);
      Slot<SlotMemory> s =
          inFlight.isEmpty() ? ring.takeStaged(50, TimeUnit.MILLISECONDS) : ring.pollStaged();
      if (s != null) {
        submit(stream, s);
        progressed = true;
      }
      if (progressed) {
        idle = 0;
      } else if (!inFlight.isEmpty()) {
        waitPolicy.idle(idle++);
      }
    }
  }

  private boolean retireCompleted(CopyStream stream) {
    boolean any = false;
    while (!inFlight.isEmpty() && stream.isComplete(inFlight.peek().index())) {
      Slot<SlotMemory> s = inFlight.poll();
      SlotMemory m = s.payload();
      long now = System.nanoTime();
      boolean zeroCopy = m.retained != null || m.written;
      counters.retired(m.submitNanos, now, transferBytes(m), zeroCopy, inPlace(m));
      CopySpans.Tracer tracer = CopySpans.tracer;
      if (tracer != null) {
        tracer.copied(device.toString(), s.index(), transferBytes(m), m.submitNanos, now, zeroCopy);
      }
      m.releaseSource();
      ring.ready(s);
      any = true;
    }
    return any;
  }

  private void submit(CopyStream stream, Slot<SlotMemory> s) {
    SlotMemory m = s.payload();
    m.submitNanos = System.nanoTime();
    long images = (long) m.rows * imageBytes;
    if (!inPlace(m)) {
      if (images > 0) {
        stream.copyToDevice(m.source, m.sourceOffset, arena.device, m.deviceInput, images);
      }
      stream.copyToDevice(m.host, m.hostLabels, arena.device, m.deviceLabels, 8L * m.rows);
      copyFields(stream, m);
    }
    if (normalize) {
      stream.normalize(
          arena.device, m.deviceInput, arena.device, m.deviceOutput, arena.device, 0, m.rows, spec);
    }
    stream.record(s.index());
    inFlight.add(s);
  }

  /** Each extra field's values and offsets, into the same layout in the slot's device range. */
  private void copyFields(CopyStream stream, SlotMemory m) {
    FieldRegions f = m.fields;
    for (int i = 0; i < f.count(); i++) {
      if (m.fieldValueBytes[i] > 0) {
        long from = f.hostBase() + f.values(i);
        stream.copyToDevice(m.host, from, arena.device, m.deviceValues(i), m.fieldValueBytes[i]);
      }
      if (f.field(i).variable()) {
        long from = f.hostBase() + f.offsets(i);
        stream.copyToDevice(m.host, from, arena.device, m.deviceOffsets(i), 4L * (m.rows + 1));
      }
    }
  }

  /**
   * Bytes that reached device memory: copied there, or, in place, written there by producers
   * (images, labels and the extra fields).
   */
  private long transferBytes(SlotMemory m) {
    return (long) m.rows * imageBytes + 8L * m.rows + m.fieldBytes();
  }

  /** Written by a SlotWriter into a host device's slab: already where the trainers read it. */
  private boolean inPlace(SlotMemory m) {
    return m.written && device.kind() == DeviceKind.HOST;
  }
}
