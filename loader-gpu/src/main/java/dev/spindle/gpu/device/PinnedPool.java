package dev.spindle.gpu.device;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A pool of page-locked host memory (plain off-heap memory on the host device) that producers
 * allocate Arrow buffers from, so the copy engine can read a batch in place instead of the filler
 * copying it into a ring slot. Slabs (each under {@link Device#MAX_HOST_SLAB_BYTES}) are allocated
 * once; allocations are first-fit with coalescing, never across two slabs.
 *
 * <p>Threads: all methods are thread-safe (one monitor). Owner: whoever created it; {@link
 * #close()} frees the slabs only when every allocation was freed, and otherwise leaks them and
 * throws, because freeing pinned memory under a live buffer would corrupt it.
 */
public final class PinnedPool implements AutoCloseable {
  private static final long ALIGN = 64;
  private final List<HostBuffer> slabs = new ArrayList<>();
  private final TreeMap<Long, Long> free = new TreeMap<>();
  private final Map<Long, Long> used = new HashMap<>();
  private final TreeMap<Long, HostBuffer> slabByBase = new TreeMap<>();
  private final long capacity;
  private long usedBytes;
  private boolean closed;

  /** Allocates {@code bytes} of host memory from {@code device} in slabs of at most 1 GiB. */
  public PinnedPool(Device device, long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("Invalid pinned pool size: " + bytes + " (must be > 0)");
    }
    long slab = 1L << 30;
    try {
      for (long left = bytes; left > 0; left -= slab) {
        HostBuffer b = device.allocateHost(Math.min(slab, left));
        slabs.add(b);
        slabByBase.put(b.address(), b);
        long start = (b.address() + ALIGN - 1) / ALIGN * ALIGN; // pinned slabs are page-aligned
        free.put(start, b.size() - (start - b.address()));
      }
    } catch (RuntimeException | Error e) {
      for (int i = slabs.size() - 1; i >= 0; i--) {
        slabs.get(i).close();
      }
      throw e;
    }
    this.capacity = bytes;
  }

  /** Where an address range lies: its slab and the offset in it. */
  public record Location(HostBuffer slab, long offset) {}

  /**
   * Allocates {@code size} bytes (64-byte aligned) and returns the address.
   *
   * @throws IllegalStateException when no free range is large enough (naming the sizes)
   */
  public synchronized long allocate(long size) {
    if (closed) {
      throw new IllegalStateException("Pinned pool is closed");
    }
    long need = Math.max(ALIGN, (size + ALIGN - 1) / ALIGN * ALIGN);
    for (Map.Entry<Long, Long> e : free.entrySet()) {
      if (e.getValue() >= need) {
        long address = e.getKey();
        free.remove(address);
        if (e.getValue() > need) {
          free.put(address + need, e.getValue() - need);
        }
        used.put(address, need);
        usedBytes += need;
        return address;
      }
    }
    throw new IllegalStateException(
        "Pinned pool exhausted: need "
            + need
            + " bytes, "
            + (capacity - usedBytes)
            + " of "
            + capacity
            + " free (fragmented or too small; raise the"
            + " pinned pool size)");
  }

  /** Frees an address returned by {@link #allocate}. */
  public synchronized void free(long address) {
    Long size = used.remove(address);
    if (size == null) {
      throw new IllegalArgumentException(
          "Invalid free: 0x" + Long.toHexString(address) + " is not an allocation of this pool");
    }
    usedBytes -= size;
    long start = address;
    long length = size;
    HostBuffer slab = slabOf(address);
    Map.Entry<Long, Long> before = free.floorEntry(address);
    if (before != null
        && before.getKey() + before.getValue() == address
        && slabOf(before.getKey()) == slab) {
      start = before.getKey();
      length += before.getValue();
      free.remove(start);
    }
    Long after = free.get(address + size);
    if (after != null && slabOf(address + size) == slab) {
      free.remove(address + size);
      length += after;
    }
    free.put(start, length);
  }

  /** The slab and offset of {@code [address, address + length)}, or null if not in this pool. */
  public synchronized Location locate(long address, long length) {
    HostBuffer slab = slabOf(address);
    if (slab == null || address + length > slab.address() + slab.size()) {
      return null;
    }
    return new Location(slab, address - slab.address());
  }

  /** Bytes currently allocated (after alignment). */
  public synchronized long usedBytes() {
    return usedBytes;
  }

  /** Total bytes in the pool. */
  public long capacity() {
    return capacity;
  }

  private HostBuffer slabOf(long address) {
    Map.Entry<Long, HostBuffer> e = slabByBase.floorEntry(address);
    return e != null && address < e.getKey() + e.getValue().size() ? e.getValue() : null;
  }

  /**
   * Frees the slabs in reverse order. Idempotent.
   *
   * @throws IllegalStateException if allocations are still live (the slabs are then leaked)
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (usedBytes > 0) {
      throw new IllegalStateException(
          "Pinned pool closed with "
              + usedBytes
              + " bytes in "
              + used.size()
              + " buffer(s) still allocated; leaking its slabs rather than freeing them"
              + " under live buffers (close the Arrow allocator first)");
    }
    for (int i = slabs.size() - 1; i >= 0; i--) {
      slabs.get(i).close();
    }
  }
}
