package dev.spindle.gpu.device;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The host device with its "device" slabs in shared memory: each {@link #allocateDevice} maps a
 * new file (mode 0600) under a directory, {@code /dev/shm} by default, so a trainer process on the
 * same node can map the same bytes ({@link #segmentOf}) and read leased batches without a copy.
 * Host slabs, streams, copies and normalisation are {@link HostDevice}'s, unchanged.
 *
 * <p>Threads: any thread, as {@link Device} states. Owner: the caller; closing a slab unmaps it
 * and deletes its file (a process that mapped it keeps its mapping until it unmaps).
 * {@link #close()} is idempotent.
 */
public final class SharedMemoryDevice implements Device {
  private static final AtomicInteger SEGMENTS = new AtomicInteger();
  private final HostDevice host = new HostDevice();
  private final Path directory;
  private final List<SharedSegment> live = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * A mapped file: {@code path} holds {@code size} bytes mapped at {@code address} in this JVM.
   *
   * @param path the file a trainer maps
   * @param address where byte 0 is mapped in this process
   * @param size bytes
   */
  public record SharedSegment(Path path, long address, long size) {}

  /** Segments in {@code /dev/shm}. */
  public SharedMemoryDevice() {
    this(Path.of("/dev/shm"));
  }

  /** Segments in {@code directory} (must exist; a tmpfs keeps them out of the page cache's disk). */
  public SharedMemoryDevice(Path directory) {
    if (!Files.isDirectory(directory)) {
      throw new IllegalArgumentException(
          "Invalid shared memory directory: " + directory + " (not a directory)");
    }
    this.directory = directory;
  }

  @Override
  public DeviceKind kind() {
    return DeviceKind.HOST;
  }

  @Override
  public int ordinal() {
    return -1;
  }

  @Override
  public String description() {
    return "host shared memory in " + directory + " ("
        + Runtime.getRuntime().availableProcessors() + " cpus)";
  }

  @Override
  public HostBuffer allocateHost(long bytes) {
    checkOpen();
    return host.allocateHost(bytes);
  }

  @Override
  public DeviceBuffer allocateDevice(long bytes) {
    checkOpen();
    if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("Invalid shared slab size: " + bytes
          + " bytes (must be 1.." + Integer.MAX_VALUE + ")");
    }
    Path path = directory.resolve("spindle-" + ProcessHandle.current().pid() + "-"
        + SEGMENTS.incrementAndGet());
    return new MappedSlab(path, bytes);
  }

  /** The segment containing {@code address} (a pointer into a live device slab), if any. */
  public Optional<SharedSegment> segmentOf(long address) {
    for (SharedSegment s : live) {
      if (address >= s.address() && address < s.address() + s.size()) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /** Bytes of host slabs allocated and not yet freed (shared slabs are files, not counted). */
  public long outstandingHostBytes() {
    return host.outstandingBytes();
  }

  /** The shared slabs not yet closed, oldest first (a feeder allocates exactly one). */
  public List<SharedSegment> segments() {
    return List.copyOf(live);
  }

  @Override
  public CopyStream openStream(int events) {
    checkOpen();
    return host.openStream(events);
  }

  @Override
  public void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst) {
    host.copyToHost(src, srcOffset, dst);
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      host.close();
    }
  }

  @Override
  public String toString() {
    return description();
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("Shared memory device is closed");
    }
  }

  /** One file, created 0600, mapped read-write; close unmaps and deletes it. */
  private final class MappedSlab implements DeviceBuffer {
    private final SharedSegment segment;
    private final MappedByteBuffer map;
    private final AtomicBoolean slabClosed = new AtomicBoolean();

    MappedSlab(Path path, long size) {
      try {
        Files.createFile(path, PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rw-------")));
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot create shared memory file " + path, e);
      }
      try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ,
          StandardOpenOption.WRITE)) {
        this.map = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
      } catch (IOException | RuntimeException e) {
        deleteQuietly(path, e);
        throw e instanceof IOException io
            ? new UncheckedIOException("Cannot map " + size + " bytes of " + path, io)
            : (RuntimeException) e;
      }
      this.segment = new SharedSegment(path, MemoryUtil.getByteBufferAddress(map), size);
      live.add(segment);
    }

    @Override
    public long address() {
      if (slabClosed.get()) {
        throw new IllegalStateException("Shared slab " + segment.path() + " is closed");
      }
      return segment.address();
    }

    @Override
    public long size() {
      return segment.size();
    }

    @Override
    public void close() {
      if (!slabClosed.compareAndSet(false, true)) {
        return;
      }
      live.remove(segment);
      Unmapper.unmap(map);
      try {
        Files.deleteIfExists(segment.path());
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot delete shared memory file " + segment.path(), e);
      }
    }
  }

  private static void deleteQuietly(Path path, Exception primary) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException ex) {
      primary.addSuppressed(ex);
    }
  }

  /** Unmaps at close instead of at garbage collection: {@code sun.misc.Unsafe.invokeCleaner}. */
  private static final class Unmapper {
    private static final Object UNSAFE;
    private static final Method INVOKE_CLEANER;

    static {
      try {
        Class<?> c = Class.forName("sun.misc.Unsafe");
        Field f = c.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        UNSAFE = f.get(null);
        INVOKE_CLEANER = c.getMethod("invokeCleaner", ByteBuffer.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    static void unmap(MappedByteBuffer map) {
      try {
        INVOKE_CLEANER.invoke(UNSAFE, map);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("Cannot unmap a shared slab", e);
      }
    }
  }
}
