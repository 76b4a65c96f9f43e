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
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.arrow.memory.util.MemoryUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host device with its "device" slabs in shared memory that a trainer process on the same node
 * can map ({@link #segmentOf}) to read leased batches without a copy. Each {@link #allocateDevice}
 * creates a file (0600) in a private directory ({@code /dev/shm/spindle-<user>}, 0700, by default),
 * maps it, keeps its descriptor open and unlinks it at once: the memory has no name, lives exactly
 * as long as this JVM holds it (a JVM killed with SIGKILL leaves nothing behind: the kernel frees
 * it with the last descriptor or mapping), and is reached by trainers of the same user through
 * {@code /proc/<pid>/fd/<n>} (Linux reopens the unlinked file through that link; procfs refuses
 * other users). A file of a dead JVM left between create and unlink is removed when a device starts
 * on the directory. Host slabs, streams, copies and normalisation are {@link HostDevice}'s,
 * unchanged.
 *
 * <p>Threads: any thread, as {@link Device} states. Owner: the caller; closing a slab unmaps it and
 * closes its descriptor (a process that mapped it keeps its mapping until it unmaps). {@link
 * #close()} is idempotent.
 */
public final class SharedMemoryDevice implements Device {
  private static final Logger LOG = LoggerFactory.getLogger(SharedMemoryDevice.class);
  private static final AtomicInteger SEGMENTS = new AtomicInteger();
  private static final Pattern SLAB_NAME = Pattern.compile("spindle-(\\d+)-\\d+");
  private final HostDevice host = new HostDevice();
  private final Path directory;
  private final SlabLinker linker;
  private final List<SharedSegment> live = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * A mapped slab: {@code path} (a {@code /proc/<pid>/fd/<n>} link to the unlinked file, valid
   * while the slab is open) holds {@code size} bytes mapped at {@code address} in this JVM.
   *
   * @param path what a trainer opens and maps
   * @param address where byte 0 is mapped in this process
   * @param size bytes
   */
  public record SharedSegment(Path path, long address, long size) {}

  /** Slabs in {@code /dev/shm/spindle-<user>} (created 0700 when missing). */
  public SharedMemoryDevice() {
    this(SlabFiles.privateDirectory(Path.of("/dev/shm")));
  }

  /**
   * Slabs in {@code directory}: it must exist and belong to this JVM's user (a tmpfs keeps the
   * slabs out of the page cache's disk). Slab files of dead JVMs in it are removed.
   */
  public SharedMemoryDevice(Path directory) {
    this(directory, SlabFiles::descriptorLink);
  }

  /** Slabs in {@code directory}, published through {@code linker} (tests inject failures). */
  SharedMemoryDevice(Path directory, SlabLinker linker) {
    SlabFiles.requireOwnDirectory(directory);
    this.directory = directory;
    this.linker = linker;
    int removed = SlabFiles.removeStale(directory, SLAB_NAME);
    if (removed > 0) {
      LOG.info("Removed {} shared slab file(s) of JVMs that are gone from {}", removed, directory);
    }
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
    return "host shared memory in "
        + directory
        + " ("
        + Runtime.getRuntime().availableProcessors()
        + " cpus)";
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
      throw new IllegalArgumentException(
          "Invalid shared slab size: " + bytes + " bytes (must be 1.." + Integer.MAX_VALUE + ")");
    }
    Path path =
        directory.resolve(
            "spindle-" + ProcessHandle.current().pid() + "-" + SEGMENTS.incrementAndGet());
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

  /**
   * The path trainers open for a mapped slab file that is still linked: {@link
   * SlabFiles#descriptorLink}, or a test's stand-in that fails.
   */
  @FunctionalInterface
  interface SlabLinker {
    Path link(Path file) throws IOException;
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

  /**
   * One file, created 0600 (never an existing one), mapped read-write, unlinked at once; its
   * descriptor stays open for trainers to reopen. Close unmaps and closes the descriptor; a failure
   * while creating it undoes what was done, in reverse: unmap, close, delete.
   */
  private final class MappedSlab implements DeviceBuffer {
    private final SharedSegment segment;
    private final FileChannel channel;
    private final MappedByteBuffer map;
    private final AtomicBoolean slabClosed = new AtomicBoolean();

    MappedSlab(Path path, long size) {
      FileChannel ch = null;
      MappedByteBuffer mapped = null;
      try {
        ch =
            FileChannel.open(
                path,
                Set.of(
                    StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.READ,
                    StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
        Path link = linker.link(path);
        Files.delete(path);
        this.map = mapped;
        this.channel = ch;
        this.segment = new SharedSegment(link, MemoryUtil.getByteBufferAddress(map), size);
      } catch (IOException | RuntimeException e) {
        unmapQuietly(mapped, e);
        closeQuietly(ch, e);
        deleteQuietly(path, e);
        throw e instanceof IOException io
            ? new UncheckedIOException(
                "Cannot create a shared slab of " + size + " bytes at " + path, io)
            : (RuntimeException) e;
      }
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
        channel.close();
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot close shared slab " + segment.path(), e);
      }
    }
  }

  private static void unmapQuietly(MappedByteBuffer map, Exception primary) {
    if (map == null) {
      return;
    }
    try {
      Unmapper.unmap(map);
    } catch (RuntimeException ex) {
      primary.addSuppressed(ex);
    }
  }

  private static void closeQuietly(FileChannel ch, Exception primary) {
    if (ch == null) {
      return;
    }
    try {
      ch.close();
    } catch (IOException ex) {
      primary.addSuppressed(ex);
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
