package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.ring.PrefetchRing;
import dev.spindle.gpu.ring.Slot;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * A ring slot a producer fills in place, row by row: each sample's uint8 HWC pixels are written
 * (decoded) straight to {@link #rowAddress}, with no batch of its own and no copy into the slot
 * (the other way in is {@link GpuFeeder#offer}, which copies an Arrow batch). Where the rows go:
 *
 * <ul>
 *   <li>on the host devices, into the slot's range of the device slab itself: the memory trainers
 *       map (shared memory) or lease. Nothing is copied after the decode; the copy thread only
 *       normalises when the feeder is configured to;
 *   <li>on CUDA, into the slot's range of the pinned host slab, which the copy engine reads (a DMA,
 *       no host copy).
 * </ul>
 *
 * <p>Calling pattern (claim, try, finally close):
 *
 * <pre>{@code
 * try (SlotWriter w = feeder.claimSlot(timeout)) {
 *   // decode threads: write rowBytes() bytes at rowAddress(r), each row by one thread
 *   // this thread: setRow(r, label, key, index, weighted) for every row, in any order
 *   w.publish(rows);
 * }
 * }</pre>
 *
 * <p>Threads: {@link #rowAddress} and writing pixels there from any number of threads, each row by
 * one; every write must have finished (happened-before) when the claiming thread calls {@link
 * #publish} or {@link #close}: a slot closed while a thread still writes into it may already be
 * another batch's (and, once the feeder closed, freed memory). Several writers may be open at once
 * (their batches decode in parallel); the ring's sequence is their order of {@link #publish}, so a
 * producer that needs its batches in order publishes them in order. {@link #setRow}, {@link
 * #publish} and {@link #close} from the claiming thread. Ownership: the producer holds the slot
 * from {@link GpuFeeder#claimSlot} until {@link #publish} (the ring then owns it: writing a row
 * afterwards is a bug, a trainer may be reading it) or {@link #close} without publishing (the slot
 * is abandoned, FREE again). Closing after publishing does nothing.
 */
public final class SlotWriter implements AutoCloseable {
  private final PrefetchRing<SlotMemory> ring;
  private final Slot<SlotMemory> slot;
  private final SlotMemory m;
  private final long rowBytes;
  private final int capacity;
  private final boolean inPlace;
  private final long imagesAt;
  private final long labelsAt;
  private final BitSet set;
  private final byte[][] keys;
  private volatile boolean done;

  SlotWriter(
      PrefetchRing<SlotMemory> ring,
      Slot<SlotMemory> slot,
      DeviceKind kind,
      long deviceBase,
      long rowBytes,
      int capacity) {
    this.ring = ring;
    this.slot = slot;
    this.m = slot.payload();
    this.rowBytes = rowBytes;
    this.capacity = capacity;
    this.inPlace = kind == DeviceKind.HOST; // a host device's "device" memory is host memory
    this.imagesAt = inPlace ? deviceBase + m.deviceInput : m.host.address() + m.hostImages;
    this.labelsAt = inPlace ? deviceBase + m.deviceLabels : m.host.address() + m.hostLabels;
    this.set = new BitSet(capacity);
    this.keys = new byte[capacity][];
  }

  /** Rows the slot holds at most (the feeder's batch size). */
  public int capacity() {
    return capacity;
  }

  /** Bytes of one row: the image's uint8 pixels, height × width × channels. */
  public long rowBytes() {
    return rowBytes;
  }

  /**
   * Whether rows are written into the memory trainers read (the host devices) rather than into
   * pinned memory the copy engine reads (CUDA).
   */
  public boolean inPlace() {
    return inPlace;
  }

  /**
   * The native address of row {@code row}'s {@link #rowBytes()} pixel bytes, valid until {@link
   * #publish} or {@link #close}.
   */
  public long rowAddress(int row) {
    checkRow(row);
    checkOpen();
    return imagesAt + row * rowBytes;
  }

  /**
   * Row {@code row}'s label, sample key, plan index and whether it counts in the loss ({@code
   * weighted} false: padding, a stand-in of a quarantined sample: loss weight 0). Set again,
   * replaces.
   */
  public void setRow(int row, long label, String key, long index, boolean weighted) {
    checkRow(row);
    checkOpen();
    m.labels[row] = label;
    m.indices[row] = index;
    m.weights[row] = weighted ? 1f : 0f;
    keys[row] = key.getBytes(StandardCharsets.UTF_8);
    set.set(row);
  }

  /**
   * Publishes rows {@code 0..rows-1} as the ring's next batch (its sequence is the order of
   * publication); each must have been {@link #setRow set}.
   *
   * @throws IllegalArgumentException if {@code rows} is outside {@code 1..capacity()}
   * @throws IllegalStateException naming the first row not set (the slot stays claimed: close it)
   */
  public void publish(int rows) {
    checkOpen();
    if (rows <= 0 || rows > capacity) {
      throw new IllegalArgumentException(
          "Invalid batch: " + rows + " rows (must be 1.." + capacity + ")");
    }
    int unset = set.nextClearBit(0);
    if (unset < rows) {
      throw new IllegalStateException(
          "Row " + unset + " of " + rows + " was not set (setRow) before publish");
    }
    int used = 0;
    for (int r = 0; r < rows; r++) {
      MemoryUtil.putLong(labelsAt + 8L * r, m.labels[r]);
      m.ensureKeyCapacity(used, keys[r].length);
      System.arraycopy(keys[r], 0, m.keyBytes, used, keys[r].length);
      used += keys[r].length;
      m.keyEnds[r] = used;
    }
    m.rows = rows;
    m.written = true;
    m.source = m.host;
    m.sourceOffset = m.hostImages;
    ring.publish(slot);
    done = true;
  }

  /** Abandons the slot unless it was published (then nothing); idempotent. */
  @Override
  public void close() {
    if (!done) {
      done = true;
      ring.abandon(slot);
    }
  }

  private void checkRow(int row) {
    if (row < 0 || row >= capacity) {
      throw new IndexOutOfBoundsException(
          "Invalid row: " + row + " (the slot holds rows 0.." + (capacity - 1) + ")");
    }
  }

  private void checkOpen() {
    if (done) {
      throw new IllegalStateException("Slot " + slot.index() + " was published or abandoned");
    }
  }
}
