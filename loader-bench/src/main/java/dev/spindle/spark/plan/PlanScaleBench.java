package dev.spindle.spark.plan;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestBinary;
import dev.spindle.spark.manifest.ManifestCodec;
import dev.spindle.spark.manifest.ManifestFingerprint;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardFormat;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * {@code bin/spindle bench plan [--shards N] [--per-shard K] [--world-size W] [--report FILE]}:
 * what an epoch plan costs at scale, on a synthetic manifest of {@code N} tar shards of {@code K}
 * samples. For the driver, per epoch (median of 3 epochs after one warm-up): {@code driver_plan_s}
 * ({@link EpochPlan#create}, the manifest fingerprint included, as every epoch of {@code feed}
 * computes it), {@code driver_heap_mb} (every byte the planning thread allocated, the fingerprint's
 * buffers included: an upper bound of the heap planning needs above the loaded manifest) and {@code
 * driver_retained_mb} (what the plan keeps). For a task: {@code task_bytes} (the plan
 * Java-serialized, as Spark ships it) and {@code task_slice_s} (deserialize the plan, then derive
 * the last rank's whole epoch: the shard order, its windows, its indices). Times are wall-clock;
 * {@code …_cpu_s} are the thread's CPU time, which a loaded machine does not inflate. Last, the
 * manifest cache's forms at this size, written to and read from memory: the JSON ({@code
 * manifest_json_bytes}, {@code manifest_json_write_s}, {@code manifest_json_read_s}) and the binary
 * form the cache reads ({@link ManifestBinary}: {@code manifest_bin_bytes}, {@code
 * manifest_bin_write_s}, {@code manifest_bin_read_s}, the read including its CRC and fingerprint
 * checks; {@code manifest_bin_same} when it read back as the same manifest); each read's thread CPU
 * time too ({@code manifest_json_read_cpu_s}, {@code manifest_bin_read_cpu_s}). The synthetic
 * shards differ in size (±5 %) and modification time (0–2 s apart) as written shards do, so that
 * the binary form's columns are not flattered by identical values. Last of all, the figures of a
 * {@link Later} stage on the last epoch's plan. A benchmark: it reports, it asserts nothing. Driver
 * thread.
 */
public final class PlanScaleBench {
  private static final int BATCH = 256;
  private static final int EPOCHS = 3;

  private PlanScaleBench() {}

  /** The synthetic data set and the world size; the report file or null. */
  public record Options(int shards, int perShard, int worldSize, Path report) {}

  /**
   * Measurements further along the flow, on the bench's plan (the feed job's task results and its
   * driver's ledger): the plan package depends on nothing that uses it. Driver thread.
   */
  @FunctionalInterface
  public interface Later {
    /** Adds its figures to {@code report}; {@code plan} is the epoch the task slice was of. */
    void measure(Manifest manifest, EpochPlan plan, Map<String, Object> report) throws IOException;
  }

  /** Runs the measurements, prints the JSON report and writes it to the options' file, if any. */
  public static void run(Options o) throws IOException, ClassNotFoundException {
    run(o, (manifest, plan, report) -> {});
  }

  /** {@link #run(Options)}, with {@code later}'s figures added after the plan's. */
  public static void run(Options o, Later later) throws IOException, ClassNotFoundException {
    long t0 = System.nanoTime();
    Manifest manifest = manifest(o.shards(), o.perShard());
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("benchmark", "plan");
    report.put("shards", o.shards());
    report.put("samples", manifest.totalSamples());
    report.put("world_size", o.worldSize());
    report.put("batch_size", BATCH);
    report.put("manifest_build_s", seconds(t0));
    report.put("manifest_heap_mb", usedAfterGc() >> 20);
    EpochPlan plan = EpochPlan.create(manifest, spec(0, o.worldSize())); // warm-up
    List<double[]> epochs = new ArrayList<>();
    for (int e = 1; e <= EPOCHS; e++) {
      plan = null;
      long base = usedAfterGc();
      long allocated = allocatedBytes();
      long cpu = cpuNanos();
      long start = System.nanoTime();
      plan = EpochPlan.create(manifest, spec(e, o.worldSize()));
      double s = seconds(start);
      double heap = (allocatedBytes() - allocated) / 1048576.0;
      epochs.add(
          new double[] {s, heap, (usedAfterGc() - base) / 1048576.0, (cpuNanos() - cpu) / 1e9});
    }
    epochs.sort((a, b) -> Double.compare(a[0], b[0]));
    report.put("driver_plan_s", epochs.get(EPOCHS / 2)[0]);
    report.put("driver_plan_cpu_s", epochs.get(EPOCHS / 2)[3]);
    report.put("driver_heap_mb", epochs.stream().mapToDouble(a -> a[1]).max().orElse(0));
    report.put("driver_retained_mb", epochs.stream().mapToDouble(a -> a[2]).max().orElse(0));
    time(report, "fingerprint_s", () -> ManifestFingerprint.of(manifest));
    byte[] shipped = serialize(plan);
    report.put("task_bytes", shipped.length);
    plan = null;
    usedAfterGc();
    task(report, shipped, o.worldSize());
    manifestJson(report, manifest);
    manifestBinary(report, manifest);
    shippedManifest(report, manifest);
    later.measure(manifest, EpochPlan.create(manifest, spec(EPOCHS, o.worldSize())), report);
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report);
    System.out.println(json);
    if (o.report() != null) {
      Files.writeString(o.report(), json + "\n");
    }
  }

  /** The manifest cache's JSON form at this size: bytes, write and read times (for comparison). */
  private static void manifestJson(Map<String, Object> report, Manifest manifest) {
    long start = System.nanoTime();
    String json = ManifestCodec.toJson(manifest);
    report.put("manifest_json_write_s", seconds(start));
    report.put("manifest_json_bytes", json.length());
    long cpu = cpuNanos();
    start = System.nanoTime();
    ManifestCodec.fromJson(json);
    report.put("manifest_json_read_s", seconds(start));
    report.put("manifest_json_read_cpu_s", (cpuNanos() - cpu) / 1e9);
  }

  /** The manifest cache's binary form at this size: bytes, write and read (and check) times. */
  private static void manifestBinary(Map<String, Object> report, Manifest manifest) {
    long start = System.nanoTime();
    byte[] bytes = ManifestBinary.toBytes(manifest, ManifestBinary.Binding.NONE);
    report.put("manifest_bin_write_s", seconds(start));
    report.put("manifest_bin_bytes", bytes.length);
    long cpu = cpuNanos();
    start = System.nanoTime();
    Manifest read = ManifestBinary.fromBytes(bytes).manifest();
    report.put("manifest_bin_read_s", seconds(start));
    report.put("manifest_bin_read_cpu_s", (cpuNanos() - cpu) / 1e9);
    report.put("manifest_bin_same", read.equals(manifest));
  }

  /**
   * The manifest as tasks receive it (Java serialization, as {@code feed} broadcasts it with the
   * plan each epoch and {@code train} once a run): bytes before Spark's block compression, and the
   * time to write and read it.
   */
  private static void shippedManifest(Map<String, Object> report, Manifest manifest)
      throws IOException, ClassNotFoundException {
    long start = System.nanoTime();
    byte[] bytes = serialize(manifest);
    report.put("manifest_shipped_write_s", seconds(start));
    report.put("manifest_shipped_bytes", bytes.length);
    start = System.nanoTime();
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      in.readObject();
    }
    report.put("manifest_shipped_read_s", seconds(start));
  }

  /** A task: receives the plan, derives the last rank's whole epoch (PAD gives it the most). */
  private static void task(Map<String, Object> report, byte[] shipped, int worldSize)
      throws IOException, ClassNotFoundException {
    long cpu = cpuNanos();
    long start = System.nanoTime();
    EpochPlan received = deserialize(shipped);
    RankPlan rank = received.rank(worldSize - 1);
    long[] slice = rank.indices(0, rank.batches());
    report.put("task_slice_s", seconds(start));
    report.put("task_slice_cpu_s", (cpuNanos() - cpu) / 1e9);
    report.put("task_slice_samples", slice.length);
    report.put("task_windows_derived", rank.sequence().windowsDerived());
    long again = System.nanoTime();
    rank.indices(0, rank.batches());
    report.put("task_slice_warm_s", seconds(again));
    report.put("task_digest", Digest.of(slice));
  }

  /** Tar shards of about 110 KB a sample (±5 %), written one after another (0–2 s apart). */
  private static Manifest manifest(int shards, int perShard) {
    List<Shard> list = new ArrayList<>(shards);
    SplittableRandom random = new SplittableRandom(22);
    long size = perShard * 110_000L;
    long written = 1_700_000_000_000L;
    for (int i = 0; i < shards; i++) {
      written += random.nextInt(2_000);
      list.add(
          new Shard(
              String.format("file:/bench/train-%07d.tar", i),
              ShardFormat.TAR,
              size + random.nextLong(-size / 20, size / 20 + 1),
              written,
              perShard,
              List.of()));
    }
    return new Manifest("file:/bench", list, List.of());
  }

  private static PlanSpec spec(int epoch, int worldSize) {
    return new PlanSpec(
        42, epoch, worldSize, BATCH, Remainder.PAD, PlanSpec.DEFAULT_SHUFFLE_WINDOW);
  }

  private static void time(Map<String, Object> report, String key, Runnable work) {
    long start = System.nanoTime();
    work.run();
    report.put(key, seconds(start));
  }

  private static byte[] serialize(java.io.Serializable object) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(object);
    }
    return bytes.toByteArray();
  }

  private static EpochPlan deserialize(byte[] bytes) throws IOException, ClassNotFoundException {
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      return (EpochPlan) in.readObject();
    }
  }

  private static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }

  private static long usedAfterGc() {
    System.gc();
    Runtime rt = Runtime.getRuntime();
    return rt.totalMemory() - rt.freeMemory();
  }

  private static long cpuNanos() {
    return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
  }

  /** Bytes this thread has allocated so far (HotSpot's per-thread allocation counter). */
  private static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getCurrentThreadAllocatedBytes();
  }
}
