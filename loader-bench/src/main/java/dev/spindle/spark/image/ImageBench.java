package dev.spindle.spark.image;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.spindle.spark.pipeline.Pipeline;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The image benchmark ({@code bin/spindle bench images --input DIR [--threads N] [--batch-size 64]
 * [--epochs 3] [--report FILE] [--transforms SPEC] [--seed S] [--engine pipeline|pool]
 * [--reduced-decode]}). Decodes and transforms every image of DIR (files or tar shards) in shuffled
 * epochs into normalised float32 CHW batches in host memory (Arrow buffers), on the executor engine
 * ({@link EngineLoader}) or a plain pool ({@link BatchLoader}), hands each batch to a consumer as a
 * training loop would, then measures decode alone with the same threads. Prints and optionally
 * writes a JSON report: {@code images_per_s} (steady state: epochs after the first), {@code
 * time_to_first_batch_s} (from creating the loader), {@code peak_rss_mb} and {@code cpu_s} (whole
 * process, up to the end of the epochs), {@code decode_only_images_per_s} (with {@code
 * decode_only_decoder}: OpenCV's whole-image decode, or the native one's where OpenCV's natives are
 * not on the classpath), and {@code jit_compile_s_in_steady_epochs} (JIT compiler time spent during
 * the steady epochs: how far the JVM still was from steady state), and which resample ran: {@code
 * resample_path} {@code native} (C, fused with the region decode; {@code resample} names its SIMD
 * level) or {@code java} (the Vector API or scalar path; {@code
 * -Dspindle.image.nativeResample=false} forces it), and {@code seek_index}: how many decodes
 * resumed from a JPEG's seek index ({@link JpegSeekIndex}; {@code -Dspindle.image.seekIndex=false}
 * turns it off). A benchmark: it reports, it asserts nothing. Runs on the calling thread plus the
 * loader's pool.
 */
public final class ImageBench {
  private static final int RING_BATCHES = 3;

  private ImageBench() {}

  /**
   * What to measure; {@code bin/spindle bench images} parses and checks the flags.
   *
   * @param engine pipeline (the executor engine) or pool (a plain thread pool)
   * @param reducedDecode whether JPEGs are decoded at a DCT-reduced scale where the first resize
   *     allows ({@link ImageTransform#withReducedDecode})
   * @param report where to write the JSON report, or null
   */
  public record Options(
      Path input,
      int threads,
      int batchSize,
      int epochs,
      long seed,
      String transforms,
      String engine,
      boolean reducedDecode,
      Path report) {
    public Options {
      if (!engine.equals("pipeline") && !engine.equals("pool")) {
        throw new IllegalArgumentException("Invalid --engine: " + engine + " (pipeline or pool)");
      }
      if (threads <= 0 || batchSize <= 0 || epochs <= 0) {
        throw new IllegalArgumentException(
            "Invalid bench settings: threads "
                + threads
                + ", batch size "
                + batchSize
                + ", epochs "
                + epochs
                + " (all must be > 0)");
      }
    }
  }

  /** Runs the benchmark on the calling thread (plus the loader's pool); prints the JSON report. */
  public static void run(Options o) throws Exception {
    Path input = o.input();
    int threads = o.threads();
    int batchSize = o.batchSize();
    int epochs = o.epochs();
    long seed = o.seed();
    String spec = o.transforms();
    String engine = o.engine();
    List<BenchInput.Sample> samples = BenchInput.list(input);
    ImageTransform transform =
        ImageTransform.parse(spec)
            .withOutput(OutputMode.FLOAT32_CHW)
            .withReducedDecode(o.reducedDecode());
    Map<String, Object> report = new LinkedHashMap<>();
    report.put(
        "engine",
        engine.equals("pool")
            ? "plain thread pool (BatchLoader)"
            : "executor engine (dev.spindle.spark.pipeline, EngineLoader)");
    report.put("input", input.toString());
    report.put("images", samples.size());
    report.put("threads", threads);
    report.put("batch_size", batchSize);
    report.put("epochs", epochs);
    report.put("transforms", transform.spec() + " -> " + transform.outputMode().specName());
    report.put("reduced_decode", o.reducedDecode());
    // like `import torch` before the DataLoader's clock starts: native libraries are loaded, and
    // the vector resample and (for the engine) the pipeline engine are JIT-compiled first;
    // reported as preload_s, and included in jvm_start_to_first_batch_s
    long preload = System.nanoTime();
    ImageTransform.preload();
    if (samples.stream().anyMatch(s -> !BenchInput.isJpeg(s.key()))) {
      OpenCvDecoder.load(); // preload leaves it to the first PNG, which would then pay for it
    }
    if (engine.equals("pipeline")) {
      Pipeline.warmUp();
    }
    report.put("preload_s", (System.nanoTime() - preload) / 1e9);
    // native (fused with the region decode, SIMD level) or java (the Vector API or scalar path)
    report.put("resample_path", ImageTransform.resamplePath());
    report.put(
        "resample",
        ImageTransform.resamplePath().equals("native")
            ? ImageTransform.nativeResample()
            : "java, " + ImageTransform.resampleImplementation());
    report.put("java_resample", ImageTransform.resampleImplementation());
    report.put("jpeg_decoder", ImageTransform.jpegDecoder());
    try (BufferAllocator allocator = new RootAllocator(4L << 30)) {
      runEpochs(samples, transform, threads, batchSize, epochs, seed, engine, allocator, report);
    }
    // decodes that resumed from a JPEG's seek index (from the second epoch on), and that did not
    long[] seeks = JpegSeekIndex.hitsAndMisses();
    report.put(
        "seek_index",
        Map.of(
            "enabled",
            JpegSeekIndex.ENABLED,
            "decodes_with_index",
            seeks[0],
            "decodes_without_index",
            seeks[1],
            "capacity_mb",
            JpegSeekIndex.CAPACITY / (double) (1 << 20)));
    // CPU and peak RSS of the whole process up to here: JVM start, JIT and all epochs
    report.put("cpu_s", processCpuSeconds());
    report.put("vector_warm_up_s", VectorPath.warmUpSeconds());
    report.put("peak_rss_mb", peakRssMb());
    String decodeOnly = decodeOnlyDecoder(samples.get(0));
    report.put("decode_only_images_per_s", decodeOnly(samples, threads, decodeOnly == null));
    report.put(
        "decode_only_decoder",
        decodeOnly == null
            ? "opencv (whole image)"
            : "native libjpeg-turbo (whole image; OpenCV not loadable: " + decodeOnly + ")");
    report.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report);
    System.out.println(json);
    if (o.report() != null) {
      Files.writeString(o.report(), json + "\n");
    }
  }

  private static void runEpochs(
      List<BenchInput.Sample> samples,
      ImageTransform transform,
      int threads,
      int batchSize,
      int epochs,
      long seed,
      String engine,
      BufferAllocator allocator,
      Map<String, Object> report)
      throws InterruptedException {
    long created = System.nanoTime();
    List<Double> epochRates = new ArrayList<>();
    List<Long> epochImages = new ArrayList<>();
    // wall clock, so a sampler of this process's threads can tell the steady epochs' CPU
    List<Double> epochEnds = new ArrayList<>();
    double checksum = 0;
    long steadyImages = 0;
    long steadyNanos = 0;
    try (BenchLoader loader =
        engine.equals("pool")
            ? new BatchLoader(samples, transform, threads, batchSize, RING_BATCHES, allocator)
            : new EngineLoader(samples, transform, threads, batchSize, allocator)) {
      long steadyJitMs = 0;
      for (int e = 0; e < epochs; e++) {
        long start = System.nanoTime();
        long jitStart = jitMillis();
        loader.startEpoch(seed, e);
        long images = 0;
        for (ArrowBuf batch = loader.next(); batch != null; batch = loader.next()) {
          if (e == 0 && images == 0) {
            report.put("time_to_first_batch_s", (System.nanoTime() - created) / 1e9);
            report.put(
                "jvm_start_to_first_batch_s",
                (System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime())
                    / 1e3);
          }
          checksum += consume(batch, loader.lastSize(), transform);
          images += loader.lastSize();
          loader.release();
        }
        long nanos = System.nanoTime() - start;
        epochRates.add(images / (nanos / 1e9));
        epochImages.add(images);
        epochEnds.add(System.currentTimeMillis() / 1e3);
        if (e > 0 || epochs == 1) {
          steadyImages += images;
          steadyNanos += nanos;
          steadyJitMs += jitMillis() - jitStart;
        }
      }
      report.put("quarantined", loader.quarantined());
      report.put("jit_compile_s_in_steady_epochs", steadyJitMs / 1e3);
    }
    report.put("images_per_s", steadyImages / (steadyNanos / 1e9));
    report.put("epoch_images_per_s", epochRates);
    report.put("epoch_images", epochImages);
    report.put("epoch_end_unix_s", epochEnds);
    report.put("checksum", checksum);
  }

  /** What a training step would read first: one value of every image of the batch. */
  private static double consume(ArrowBuf batch, int size, ImageTransform t) {
    double sum = 0;
    for (int i = 0; i < size; i++) {
      sum += batch.getFloat(i * t.outputBytes() + (t.outputBytes() / 2 & ~3L));
    }
    return sum;
  }

  /**
   * Null when OpenCV decodes {@code sample}, the decode-only pass's reference decoder; else why not
   * (a machine whose classpath leaves OpenCV's natives out, as {@code bin/gpu-bundle}'s does, where
   * the pass decodes whole JPEGs with the native libjpeg-turbo decoder instead).
   */
  private static String decodeOnlyDecoder(BenchInput.Sample sample) {
    try {
      byte[] data = sample.read();
      DecodeCost headers =
          DecodeCost.of(ImageInfo.probe(data, 0, data.length), data, 0, data.length);
      OpenCvDecoder.decodeWith(
          data, 0, data.length, headers, 1, DecodeScratch.current(), (rgb, w, h) -> null);
      return null;
    } catch (Exception | LinkageError e) {
      return e.toString();
    }
  }

  /**
   * Reads and decodes every sample once (full size, RGB, into the decoder's reused buffer, not
   * copied out) on {@code threads} threads: the decoder alone, the floor of the pipeline's cost.
   * With OpenCV ({@code opencv}), or the native decoder over the whole image.
   */
  private static double decodeOnly(List<BenchInput.Sample> samples, int threads, boolean opencv)
      throws InterruptedException {
    AtomicInteger cursor = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(threads);
    long start = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      Thread worker =
          new Thread(
              () -> {
                try {
                  DecodeScratch scratch = DecodeScratch.current();
                  for (int i = cursor.getAndIncrement();
                      i < samples.size();
                      i = cursor.getAndIncrement()) {
                    byte[] data = samples.get(i).read();
                    ImageInfo info = ImageInfo.probe(data, 0, data.length);
                    if (opencv) {
                      DecodeCost headers = DecodeCost.of(info, data, 0, data.length);
                      OpenCvDecoder.decodeWith(
                          data, 0, data.length, headers, 1, scratch, (rgb, w, h) -> null);
                    } else if (info.format() == ImageFormat.JPEG) { // nothing here decodes the rest
                      try (NativeJpeg.Band whole =
                          NativeJpeg.open(
                              data,
                              0,
                              data.length,
                              1,
                              false,
                              0,
                              0,
                              info.width(),
                              info.height(),
                              scratch)) {
                        if (whole != null) { // null: CMYK, which only OpenCV decodes
                          whole.all();
                        }
                      }
                    }
                  }
                } catch (Exception e) {
                  System.err.println("decode-only: " + e);
                } finally {
                  done.countDown();
                }
              },
              "spindle-decode-only-" + t);
      worker.start();
    }
    done.await();
    return samples.size() / ((System.nanoTime() - start) / 1e9);
  }

  /** Milliseconds this JVM's JIT compilers have spent so far (summed over compiler threads). */
  private static long jitMillis() {
    return ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
  }

  private static double processCpuSeconds() {
    return ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class)
            .getProcessCpuTime()
        / 1e9;
  }

  private static double peakRssMb() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    } catch (java.io.IOException e) {
      return -1;
    }
    return -1;
  }
}
