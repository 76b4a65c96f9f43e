package dev.spindle.gpu.feed;

import static dev.spindle.gpu.feed.FeederStats.reported;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spindle.gpu.device.CopyStream;
import dev.spindle.gpu.device.Device;
import dev.spindle.gpu.device.DeviceBuffer;
import dev.spindle.gpu.device.DeviceDiscovery;
import dev.spindle.gpu.device.ElementType;
import dev.spindle.gpu.device.HostBuffer;
import dev.spindle.gpu.device.NormalizeSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * {@code bin/spindle bench feeder}: sustained host-to-device bandwidth through the ring, compared
 * in the same run with a bare copy loop on the same device (a {@code cuMemcpyHtoDAsync} loop on
 * pinned memory, or a {@code memcpy} loop on the host device; measured before and after the ring
 * runs, the better of the two is the limit), and the time a consumer waits per batch when its step
 * is longer than the load time. Three ways into the ring: batches offered and staged (one host
 * copy), offered from the feeder's pinned pool (zero copy), and written into claimed slots ({@link
 * SlotWriter}: the feed's own path, whose rows the decode writes in place; here the producers set
 * each row and publish, the pixels being whatever the slot held: what the ring costs on that path,
 * decode excluded: {@code ring_written_gbps}). Reports, never asserts.
 *
 * <p>Usage: {@code FeederBench [--device cuda|host] [--report FILE] [--seconds S] [--batch N]
 * [--slots N] [--size PX] [--producers N] [--dtype uint8|float16|float32]}. Prints the JSON report
 * to stdout and writes it to {@code FILE} if given. Single-threaded driver; starts its own producer
 * and consumer threads.
 */
public final class FeederBench {
  private final DeviceDiscovery.Choice choice;
  private final double seconds;
  private final int batch;
  private final int slots;
  private final int size;
  private final int producers;
  private final ElementType dtype;

  /**
   * What to measure ({@code bin/spindle bench feeder} parses the flags; so does {@link #main}).
   *
   * @param report where to write the JSON report, or null
   */
  public record Options(
      DeviceDiscovery.Choice device,
      Path report,
      double seconds,
      int batch,
      int slots,
      int size,
      int producers,
      ElementType dtype) {
    public Options {
      if (!(seconds > 0) || batch <= 0 || slots <= 0 || size <= 0 || producers <= 0) {
        throw new IllegalArgumentException(
            "Invalid feeder bench settings: seconds "
                + seconds
                + ", batch "
                + batch
                + ", slots "
                + slots
                + ", size "
                + size
                + ", producers "
                + producers
                + " (all must be > 0)");
      }
    }
  }

  private FeederBench(Options a) {
    this.choice = a.device;
    this.seconds = a.seconds;
    this.batch = a.batch;
    this.slots = a.slots;
    this.size = a.size;
    this.producers = a.producers;
    this.dtype = a.dtype;
  }

  /**
   * Entry point without Spindle's command line (bin/gpu-check runs it from a bundle that has no
   * picocli); see the class comment for the flags.
   */
  public static void main(String[] args) throws Exception {
    run(Args.parse(args).options());
  }

  /** Runs the benchmark; prints the JSON report and writes it to the options' file, if any. */
  public static void run(Options o) throws Exception {
    String json = new FeederBench(o).run();
    System.out.println(json);
    if (o.report() != null) {
      Files.writeString(o.report(), json + "\n", StandardCharsets.UTF_8);
    }
  }

  String run() throws Exception {
    NormalizeSpec raw = NormalizeSpec.raw(size, size, 3);
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = BenchBatches.build(alloc, batch, raw, new Random(42))) {
      long batchBytes = (long) batch * raw.inputBytesPerImage();
      String description;
      double bareBefore;
      try (Device d = DeviceDiscovery.open(choice, 0)) {
        description = d.description();
        bareBefore = bareCopyGbps(d, batchBytes);
      }
      double memcpy = hostMemcpyGbps(batchBytes);
      RingRun ring = ringRun(raw, root, 0, Way.STAGED);
      RingRun zeroCopy = ringRun(raw, root, 0, Way.PINNED);
      RingRun written = ringRun(raw, root, 0, Way.WRITTEN);
      long stepNanos = Math.max(1_000_000L, 2 * ring.nanosPerBatch);
      RingRun slow = ringRun(raw, root, stepNanos, Way.STAGED);
      RingRun norm =
          dtype == ElementType.UINT8
              ? null
              : ringRun(NormalizeSpec.imagenet(dtype, size, size), root, 0, Way.STAGED);
      double bareAfter;
      try (Device d = DeviceDiscovery.open(choice, 0)) {
        bareAfter = bareCopyGbps(d, batchBytes);
      }
      // The limit is the best the bare loop achieved; on a shared machine one sample can be low.
      double bare = Math.max(bareBefore, bareAfter);
      ObjectNode j =
          JsonNodeFactory.instance
              .objectNode()
              .put("device", description)
              .put("device_kind", ring.kind)
              .put("batch", batch)
              .put("image", size + "x" + size + "x3 uint8")
              .put("batch_bytes", batchBytes)
              .put("slots", slots)
              .put("producers", producers)
              .put("seconds_per_run", reported(seconds))
              .put("bare_copy_gbps", reported(bare))
              .put("bare_copy_gbps_before", reported(bareBefore))
              .put("bare_copy_gbps_after", reported(bareAfter))
              .put("host_memcpy_gbps", reported(memcpy))
              .put("ring_gbps", reported(ring.gbps))
              .put("ring_efficiency", reported(ring.gbps / bare))
              .put("ring_batches", ring.batches)
              .put("ring_zero_copy_gbps", reported(zeroCopy.gbps))
              .put("ring_zero_copy_efficiency", reported(zeroCopy.gbps / bare))
              .put("ring_written_gbps", reported(written.gbps))
              .put("ring_written_efficiency", reported(written.gbps / bare))
              .put("ring_copy_busy_gbps", reported(ring.stats.h2dGbps()))
              .put(
                  "producer_blocked_ms_per_batch", reported(ring.stats.producerBlockedMsPerBatch()))
              .put("consumer_step_ms", reported(stepNanos / 1e6))
              .put("consumer_wait_ms_per_batch", reported(slow.waitMsPerBatchAfterFirst))
              .put("consumer_wait_p50_ms", reported(slow.waitP50Ms))
              .put("consumer_wait_p99_ms", reported(slow.waitP99Ms))
              .put("consumer_first_batch_ms", reported(slow.firstBatchMs))
              .put("consumer_batches", slow.batches);
      if (norm != null) {
        j.put("normalize_dtype", dtype.name().toLowerCase(java.util.Locale.ROOT))
            .put("ring_normalize_gbps", reported(norm.gbps));
      }
      j.set("ring_stats", ring.stats.toJsonNode());
      return j.toString();
    }
  }

  /** Bare copies of one batch, {@code depth} enqueued between synchronisations. */
  private double bareCopyGbps(Device d, long bytes) {
    int depth = 4;
    try (HostBuffer src = d.allocateHost(bytes);
        DeviceBuffer dst = d.allocateDevice(bytes * depth);
        CopyStream stream = d.openStream(1)) {
      MemoryUtil.setMemory(src.address(), bytes, (byte) 7);
      long copies = 0;
      long start = System.nanoTime();
      long end = start + (long) (seconds * 1e9);
      long now = start;
      while (now < end) {
        for (int i = 0; i < depth; i++) {
          stream.copyToDevice(src, 0, dst, i * bytes, bytes);
        }
        stream.synchronize();
        copies += depth;
        now = System.nanoTime();
      }
      return (double) copies * bytes / (now - start);
    }
  }

  /** One thread's memcpy rate between off-heap buffers: the cost of the filler's staging copy. */
  private double hostMemcpyGbps(long bytes) {
    long src = MemoryUtil.allocateMemory(bytes);
    long dst = MemoryUtil.allocateMemory(bytes);
    try {
      MemoryUtil.setMemory(src, bytes, (byte) 3);
      long copies = 0;
      long start = System.nanoTime();
      long end = start + (long) (seconds * 1e9 / 2);
      long now = start;
      while (now < end) {
        MemoryUtil.copyMemory(src, dst, bytes);
        copies++;
        now = System.nanoTime();
      }
      return (double) copies * bytes / (now - start);
    } finally {
      MemoryUtil.freeMemory(dst);
      MemoryUtil.freeMemory(src);
    }
  }

  private record RingRun(
      String kind,
      double gbps,
      long batches,
      long nanosPerBatch,
      double waitMsPerBatchAfterFirst,
      double waitP50Ms,
      double waitP99Ms,
      double firstBatchMs,
      FeederStats stats) {}

  /** How producers put batches into the ring. */
  enum Way {
    /** {@code offer} of a batch on the heap of Arrow: one staging copy into the slot. */
    STAGED,
    /** {@code offer} of a batch built in the feeder's pinned pool: read in place. */
    PINNED,
    /** {@code claimSlot}: rows written in the slot (the feed's path), then published. */
    WRITTEN
  }

  /**
   * One run: producers offer {@code staged} (copied into slots), the same images built in the
   * feeder's pinned pool (read in place), or write claimed slots ({@link Way}); one consumer leases
   * and releases.
   */
  private RingRun ringRun(NormalizeSpec spec, VectorSchemaRoot staged, long stepNanos, Way way)
      throws Exception {
    boolean zeroCopy = way == Way.PINNED;
    long batchBytes = (long) batch * spec.inputBytesPerImage();
    FeederConfig config =
        FeederConfig.of(batch, spec)
            .withSlots(slots)
            .withPinnedPool(zeroCopy ? 2 * batchBytes + (1 << 20) : 0);
    GpuFeeder feeder = GpuFeeder.open(choice, 0, config);
    BufferAllocator pinned = zeroCopy ? feeder.newPinnedAllocator(Long.MAX_VALUE) : null;
    VectorSchemaRoot root =
        zeroCopy ? BenchBatches.build(pinned, batch, spec, new Random(42)) : staged;
    try {
      AtomicBoolean stop = new AtomicBoolean();
      List<Thread> threads = new ArrayList<>();
      for (int p = 0; p < producers; p++) {
        Thread t =
            new Thread(
                () -> {
                  if (way == Way.WRITTEN) {
                    write(feeder, stop);
                  } else {
                    produce(feeder, root, stop);
                  }
                },
                "bench-producer-" + p);
        t.start();
        threads.add(t);
      }
      long start = System.nanoTime();
      long end = start + (long) (seconds * 1e9);
      long batches = 0;
      long waitAfterFirst = 0;
      long firstBatch = 0;
      long bytes = 0;
      long[] waits = new long[1 << 16];
      while (System.nanoTime() < end) {
        long t0 = System.nanoTime();
        try (DeviceBatch b = feeder.next(Duration.ofSeconds(60))) {
          long waited = System.nanoTime() - t0;
          if (batches == 0) {
            firstBatch = waited;
          } else {
            waitAfterFirst += waited;
            waits[(int) Math.min(batches - 1, waits.length - 1)] = waited;
          }
          bytes += b.imageBytes() + 8L * b.rows();
          batches++;
          if (stepNanos > 0) {
            step(stepNanos);
          }
        }
      }
      long elapsed = System.nanoTime() - start;
      stop.set(true);
      FeederStats stats = feeder.stats();
      for (Thread t : threads) {
        t.join();
      }
      double waitMs = batches > 1 ? waitAfterFirst / 1e6 / (batches - 1) : Double.NaN;
      long[] sorted =
          java.util.Arrays.copyOf(waits, (int) Math.min(waits.length, Math.max(0, batches - 1)));
      java.util.Arrays.sort(sorted);
      long inputBytes = batches * ((long) batch * spec.inputBytesPerImage() + 8L * batch);
      return new RingRun(
          feeder.device().kind().name().toLowerCase(java.util.Locale.ROOT),
          (double) inputBytes / elapsed,
          batches,
          elapsed / Math.max(1, batches),
          waitMs,
          percentileMs(sorted, 0.50),
          percentileMs(sorted, 0.99),
          firstBatch / 1e6,
          stats);
    } finally {
      if (zeroCopy) {
        root.close(); // the feeder drops its own holds on close, then the pool is empty
      }
      feeder.close(Duration.ZERO);
      if (pinned != null) {
        pinned.close();
      }
    }
  }

  private static double percentileMs(long[] sorted, double q) {
    return sorted.length == 0
        ? Double.NaN
        : sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1e6;
  }

  /** Claims slots, sets every row (the pixels are the decode's to write) and publishes them. */
  private void write(GpuFeeder feeder, AtomicBoolean stop) {
    try {
      while (!stop.get()) {
        try (SlotWriter w = feeder.claimSlot(Duration.ofMillis(200))) {
          for (int r = 0; r < batch; r++) {
            w.setRow(r, r % 1000, "bench-" + r, r, true);
          }
          w.publish(batch);
        } catch (TimeoutException e) {
          // ring full: backpressure; try again until told to stop
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IllegalStateException e) {
      // the feeder closed under us at the end of the run
    }
  }

  private static void produce(GpuFeeder feeder, VectorSchemaRoot root, AtomicBoolean stop) {
    try {
      while (!stop.get()) {
        try {
          feeder.offer(root, Duration.ofMillis(200));
        } catch (TimeoutException e) {
          // ring full: backpressure; try again until told to stop
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IllegalStateException e) {
      // the feeder closed under us at the end of the run
    }
  }

  /** A trainer step that waits on the GPU: the CPU is free meanwhile. */
  private static void step(long nanos) {
    long until = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = until - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }

  /** Parsed command line. */
  private static final class Args {
    DeviceDiscovery.Choice device = DeviceDiscovery.Choice.AUTO;
    Path report;
    double seconds = 4;
    int batch = 64;
    int slots = 8;
    int size = 224;
    int producers = 2;
    ElementType dtype = ElementType.FLOAT16;

    Options options() {
      return new Options(device, report, seconds, batch, slots, size, producers, dtype);
    }

    static Args parse(String[] args) {
      Args a = new Args();
      for (int i = 0; i < args.length; i++) {
        String flag = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("Missing value for " + flag);
        }
        String v = args[++i];
        switch (flag) {
          case "--device" -> a.device = DeviceDiscovery.Choice.parse(v);
          case "--report" -> a.report = Path.of(v);
          case "--seconds" -> a.seconds = positive(flag, Double.parseDouble(v));
          case "--batch" -> a.batch = (int) positive(flag, Integer.parseInt(v));
          case "--slots" -> a.slots = (int) positive(flag, Integer.parseInt(v));
          case "--size" -> a.size = (int) positive(flag, Integer.parseInt(v));
          case "--producers" -> a.producers = (int) positive(flag, Integer.parseInt(v));
          case "--dtype" -> a.dtype = ElementType.parse(v);
          default ->
              throw new IllegalArgumentException(
                  "Unknown flag: "
                      + flag
                      + " (expected "
                      + "--device, --report, --seconds, --batch, --slots, --size, --producers, --dtype)");
        }
      }
      return a;
    }

    private static double positive(String flag, double v) {
      if (!(v > 0)) {
        throw new IllegalArgumentException("Invalid " + flag + ": " + v + " (must be > 0)");
      }
      return v;
    }
  }
}
