package dev.spindle.spark.image;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.IntVector;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Whether and when {@link ImageTransform} takes the vector path ({@link VectorResample}): whether
 * this JVM and CPU support it, and its JIT warm-up. Names no vector type outside {@link Probe}, so
 * that it loads in a JVM without {@code jdk.incubator.vector} (then the scalar path runs).
 * Thread-safe.
 */
final class VectorPath {
  /**
   * Whether the vector path runs: {@code jdk.incubator.vector} is in the boot layer ({@code
   * --add-modules=jdk.incubator.vector}, as in Spindle's JVM flags), the CPU's preferred vectors
   * are at least 256 bits (x86 AVX2; elsewhere the API would emulate them slowly), and the system
   * property {@code spindle.image.vector} is not {@code false}.
   */
  static final boolean ENABLED = detect();

  /**
   * Whether {@link VectorResample} transposes its 8x8 byte tiles with one 512-bit byte permutation
   * each (x86 AVX-512 VBMI's {@code vpermb}, e.g. AMD Zen 4, Intel Ice Lake and later) rather than
   * with scalar shifts and masks, and gathers its source rows 8 bytes at a time (512-bit gathers)
   * rather than 4: the vector path is {@link #ENABLED}, the JVM uses 512-bit vectors, {@code
   * /proc/cpuinfo} lists {@code avx512vbmi} (without it the JIT would emulate the permutation,
   * slowly), and the system property {@code spindle.image.vectorPermute} is not {@code false}. Same
   * bytes either way.
   */
  static final boolean PERMUTE = ENABLED && detectPermute();

  private static final AtomicBoolean WARMING = new AtomicBoolean();
  private static final CountDownLatch WARMED = new CountDownLatch(1);

  /** The warm-up's second image: {@code warm-up.jpg} scaled to 32x20 (Pillow, quality 90). */
  static final String SMALL_IMAGE = "warm-up-small.jpg";

  /** Whole transforms of {@link #SMALL_IMAGE} the warm-up runs: past C2's per-method threshold. */
  private static final int PER_IMAGE_ROUNDS = 6_000;

  /**
   * Bytes a compiled warm-up transform stays under: it allocates 3-5 KB (per-image objects), one
   * still boxing vectors 600 KB or more.
   */
  private static final long COMPILED_BYTES = 64 * 1024;

  /** Counts the warm-up threads' allocations, or null where the JVM cannot. */
  private static final com.sun.management.ThreadMXBean ALLOCATIONS = allocations();

  private static volatile boolean warm;
  private static volatile double warmUpSeconds = -1;

  private VectorPath() {}

  /**
   * Whether callers should take the vector path now: it is {@link #ENABLED} and its code has been
   * compiled. Vector API code is fast only once C2 has compiled it; before that (interpreted or C1)
   * one image takes 10-100 times as long as on the scalar path. So the first call starts {@link
   * #warmUp} on a background thread and callers use the native resample (or, without one, the
   * scalar path), which gives the same bytes, until it is done.
   */
  static boolean ready() {
    if (warm) {
      return true;
    }
    if (ENABLED && WARMING.compareAndSet(false, true)) {
      Thread t = new Thread(VectorPath::warmUp, "spindle-vector-warmup");
      t.setDaemon(true);
      t.setPriority(Thread.MIN_PRIORITY);
      t.start();
    }
    return false;
  }

  /**
   * Compiles the vector path now, on the calling thread (or waits for a warm-up already running
   * elsewhere), so that the next {@link #ready} is true ({@link #warmUp}'s cost), once per JVM.
   * No-op when the path is not {@link #ENABLED}.
   */
  static void warmUpNow() throws InterruptedException {
    if (!ENABLED || warm) {
      return;
    }
    if (WARMING.compareAndSet(false, true)) {
      warmUp();
    } else {
      WARMED.await();
    }
  }

  /** Seconds the warm-up took, or -1 while it runs or when it never ran. */
  static double warmUpSeconds() {
    return warmUpSeconds;
  }

  /**
   * Runs whole transforms (decode, vector resample, output) on a small JPEG bundled with Spindle
   * ({@code warm-up.jpg}, 160x102, synthetic) until C2 has compiled them: until 30 rounds in a row
   * run {@link #compiled} code for both outputs a loader delivers, float32 CHW and uint8 HWC (each
   * has its own vertical pass; a first batch of uint8 images decoded before its pass was compiled
   * allocated 450 MB), at most 3,000 rounds or 30 s. The chains cover the common 4-tap downscale, a
   * many-tap one, a wider output and a flip, so that real images do not meet code paths the
   * compiled code never saw (which would send it back to the interpreter). Rounds run on a series
   * of short-lived threads, so that a worker thread's first image (empty per-thread buffers) is a
   * known path too. Then {@link #PER_IMAGE_ROUNDS} transforms of a 32x20 JPEG ({@link
   * #SMALL_IMAGE}, about 20 us each) bring the once-per-image code around the kernels to C2 as
   * well, which real images alone reach only after thousands of images (measured with {@code
   * ImageBench}: JIT time in the steady epochs 0.43-0.66 s before, 0.26-0.33 s after). About 1.4 s,
   * and 2.6 s of CPU with the compiler threads ({@code WarmUpCost} in loader-bench), once per JVM.
   */
  private static void warmUp() {
    long start = System.nanoTime();
    try (BufferAllocator allocator = new RootAllocator(1L << 22)) {
      byte[] jpeg = resource("warm-up.jpg");
      // the two outputs loaders deliver: float32 CHW (normalize) and uint8 HWC (feed's default)
      ImageTransform main = ImageTransform.parse("resize(64),center_crop(56),normalize");
      ImageTransform bytes = ImageTransform.parse("resize(64),center_crop(56)");
      ImageTransform[] others = {
        ImageTransform.parse("resize(20),center_crop(16),normalize"),
        ImageTransform.parse("resize(48),center_crop(40),hflip(1)"),
        ImageTransform.parse("resize(128),center_crop(120),normalize")
      };
      long deadline = start + 30_000_000_000L;
      int[] fast = {0};
      try (ArrowBuf out = allocator.buffer(others[2].outputBytes())) {
        for (int t = 0; t < 60 && fast[0] < 30 && System.nanoTime() < deadline; t++) {
          Thread worker =
              new Thread(
                  () -> {
                    try {
                      for (int i = 0; i < 50 && fast[0] < 30 && System.nanoTime() < deadline; i++) {
                        long t0 = System.nanoTime();
                        long a0 = allocated();
                        main.apply(jpeg, 0, jpeg.length, i, out, 0, true);
                        long t1 = System.nanoTime();
                        long a1 = allocated();
                        bytes.apply(jpeg, 0, jpeg.length, i, out, 0, true);
                        boolean compiled =
                            compiled(t1 - t0, a1 - a0)
                                && compiled(System.nanoTime() - t1, allocated() - a1);
                        fast[0] = compiled ? fast[0] + 1 : 0;
                        others[i % others.length].apply(jpeg, 0, jpeg.length, i, out, 0, true);
                      }
                    } catch (ImageException e) {
                      throw new IllegalStateException(e);
                    } finally {
                      DecodeScratch.discard();
                    }
                  },
                  "spindle-vector-warmup-" + t);
          worker.start();
          worker.join();
        }
        // the code around the kernels (probe, decode call, planning, kernel setup, output) runs
        // once per image, so C2 compiles it only after some 5,000 images: in a loader's second
        // or third epoch, on the cores doing the work. A tiny image takes it there now, cheaply.
        byte[] small = resource(SMALL_IMAGE);
        ImageTransform tiny = ImageTransform.parse("resize(16),center_crop(16),normalize");
        try {
          for (int i = 0; i < PER_IMAGE_ROUNDS && System.nanoTime() < deadline; i++) {
            tiny.apply(small, 0, small.length, i, out, 0, true);
          }
        } finally {
          DecodeScratch.discard();
        }
      }
    } catch (IOException | ImageException | RuntimeException e) {
      // a failed warm-up only costs speed: the vector path still compiles on first real use
      System.err.println("spindle: vector resample warm-up failed: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      warmUpSeconds = (System.nanoTime() - start) / 1e9;
      warm = true;
      WARMED.countDown();
    }
  }

  /**
   * Whether a warm-up transform that took {@code nanos} and allocated {@code bytes} ran compiled
   * code: under {@link #COMPILED_BYTES} where the JVM counts a thread's allocations, else under 1
   * ms. Time alone is not enough: C1's code for the vector types is fast enough to pass 1 ms but
   * still boxes vectors (0.6-1.3 MB per warm-up image; then 20 MB per 640x408 photo and a young
   * collection every 50 ms while a first batch decodes), until C2 has compiled the passes with
   * their callees inlined (3-5 KB per warm-up image).
   */
  private static boolean compiled(long nanos, long bytes) {
    return ALLOCATIONS != null ? bytes < COMPILED_BYTES : nanos < 1_000_000;
  }

  /** This thread's allocated bytes so far, or 0 where the JVM does not count them. */
  private static long allocated() {
    return ALLOCATIONS == null ? 0 : ALLOCATIONS.getCurrentThreadAllocatedBytes();
  }

  private static com.sun.management.ThreadMXBean allocations() {
    try {
      if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
          && t.isThreadAllocatedMemorySupported()
          && t.isThreadAllocatedMemoryEnabled()) {
        return t;
      }
    } catch (RuntimeException | LinkageError e) {
      // no management beans: the warm-up times its rounds instead
    }
    return null;
  }

  private static byte[] resource(String name) throws IOException {
    try (InputStream in = VectorPath.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IOException("Missing resource " + name);
      }
      return in.readAllBytes();
    }
  }

  private static boolean detect() {
    if ("false".equalsIgnoreCase(System.getProperty("spindle.image.vector"))
        || ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
      return false;
    }
    try {
      return Probe.wide();
    } catch (LinkageError e) {
      return false;
    }
  }

  private static boolean detectPermute() {
    if ("false".equalsIgnoreCase(System.getProperty("spindle.image.vectorPermute"))
        || !Probe.bytes512()) {
      return false;
    }
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("flags")) {
          return (line + " ").contains(" avx512vbmi ");
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or no access: keep the scalar transposes
    }
    return false;
  }

  /** In its own class so that {@link #detect} links no vector class when the module is absent. */
  private static final class Probe {
    static boolean wide() {
      return IntVector.SPECIES_PREFERRED.vectorBitSize() >= 256;
    }

    static boolean bytes512() {
      return ByteVector.SPECIES_MAX.vectorBitSize() >= 512;
    }
  }

  /** What {@code bench images} (loader-bench) reports as the resample implementation. */
  static String describe() {
    return !ENABLED
        ? "scalar"
        : PERMUTE
            ? "vector (jdk.incubator.vector, 256-bit, 512-bit byte permutes)"
            : "vector (jdk.incubator.vector, 256-bit)";
  }
}
