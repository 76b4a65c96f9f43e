package dev.spindle.spark.image;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Per-image cost of each step on one thread: {@code --input DIR [--images 300] [--rounds 5]}.
 * Prints, per round, milliseconds per image for decode alone, {@code resize(256),center_crop(224)}
 * as uint8 and with {@code normalize} as float32 on the scalar path, float32 on the vector path
 * ({@link VectorResample}; all including decode), decode into the decoder's own buffer (no copy
 * out, as {@code bench images}' decode-only pass) and how much longer the vector path takes than
 * that, and on the first image the two scalar resample passes alone and the vector resample with
 * its float32 output alone (its source and destination stay in cache: less than its cost after a
 * decode, which has pushed much of the decoded image out of the core's cache); then, per round, the
 * native resample (fused with the native region decode, each SIMD level) against the Java resample
 * on the same decoder, in this thread's CPU time, for the eval and train pipelines; and the vector
 * path's cost per output (float32 CHW, uint8 HWC, uint8 CHW) in CPU time. Rounds after the first
 * are warm. A benchmark: it reports, it asserts nothing; single-threaded, on the calling thread.
 */
public final class ImageStageBench {
  private ImageStageBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || !args[0].equals("--input")) {
      throw new IllegalArgumentException(
          "Invalid arguments (usage: --input DIR [--images 300] [--rounds 5])");
    }
    int limit = args.length >= 4 ? Integer.parseInt(args[3]) : 300;
    int rounds = args.length >= 6 ? Integer.parseInt(args[5]) : 5;
    List<byte[]> data = new ArrayList<>();
    for (BenchInput.Sample s : BenchInput.list(Path.of(args[1]))) {
      if (data.size() < limit) {
        data.add(s.read());
      }
    }
    ImageTransform.preload();
    ImageTransform u8 = ImageTransform.parse("resize(256),center_crop(224)");
    ImageTransform f32 = ImageTransform.parse("resize(256),center_crop(224),normalize");
    try (BufferAllocator allocator = new RootAllocator(1L << 30);
        ArrowBuf buf = allocator.buffer(f32.outputBytes())) {
      for (int r = 0; r < rounds; r++) {
        double decode = perImage(data, d -> decode(d));
        double inPlace = perImage(data, d -> decodeInPlace(d));
        double uint8 = perImage(data, d -> u8.apply(d, 0, d.length, 0, buf, 0, false));
        double float32 = perImage(data, d -> f32.apply(d, 0, d.length, 0, buf, 0, false));
        double vector = perImage(data, d -> f32.apply(d, 0, d.length, 0, buf, 0, true));
        double[] passes = passes(data.get(0));
        double resample = vectorResample(data.get(0), buf);
        System.out.printf(
            "round %d: ms/image decode %.3f, uint8 %.3f, float32 %.3f, float32 on "
                + "the vector path %.3f (%s), decode in the decoder's buffer %.3f and the vector path "
                + "%.3f beyond it; first image (%s) scalar horizontal pass %.3f, vertical pass "
                + "%.3f, vector resample and normalize alone %.3f%n",
            r,
            decode,
            uint8,
            float32,
            vector,
            VectorPath.describe(),
            inPlace,
            vector - inPlace,
            "resize 256 + crop 224",
            passes[0],
            passes[1],
            resample);
        nativeAgainstJava(data, buf);
        outputs(data, buf);
      }
    }
  }

  /**
   * One line per pipeline (eval {@code resize(256),center_crop(224),normalize}, train {@code
   * random_resized_crop(224),hflip,normalize}, float32): this thread's CPU milliseconds per image
   * with the native region decode and the Java resample (the vector path where the JVM has it, and
   * the scalar path) against the native resample fused with it at each SIMD level this CPU runs,
   * interleaved image by image so that a shared machine's load weighs on both alike; and the ratio
   * Java / native.
   */
  private static void nativeAgainstJava(List<byte[]> data, ArrowBuf buf) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    String[] names = {"eval", "train"};
    ImageTransform[] pipelines = {
      ImageTransform.parse("resize(256),center_crop(224),normalize"),
      ImageTransform.parse("random_resized_crop(224),hflip,normalize").withSeed(1)
    };
    int[] levels = NativeResample.supportedLevels();
    for (int p = 0; p < pipelines.length; p++) {
      ImageTransform t = pipelines[p];
      // [0]: Java vector (or scalar); [1]: Java scalar; [2 + i]: native at levels[i]
      long[] cpu = new long[levels.length + 2];
      for (int i = 0; i < data.size(); i++) {
        byte[] d = data.get(i);
        for (int v = 0; v < cpu.length; v++) {
          long t0 = mx.getCurrentThreadCpuTime();
          if (v < 2) {
            t.apply(d, 0, d.length, i, buf, 0, v == 0 && VectorPath.ENABLED, true, true, -1);
          } else {
            t.apply(d, 0, d.length, i, buf, 0, false, false, true, levels[v - 2]);
          }
          cpu[v] += mx.getCurrentThreadCpuTime() - t0;
        }
      }
      StringBuilder line =
          new StringBuilder(
              String.format(
                  "  %s: CPU ms/image, native decode + java resample: %s %.3f, scalar %.3f",
                  names[p],
                  VectorPath.ENABLED ? "vector" : "scalar",
                  cpu[0] / 1e6 / data.size(),
                  cpu[1] / 1e6 / data.size()));
      for (int v = 2; v < cpu.length; v++) {
        line.append(
            String.format(
                "; native fused %s %.3f (java vector/native %.3f, java scalar/native %.3f)",
                NativeResample.name(levels[v - 2]),
                cpu[v] / 1e6 / data.size(),
                (double) cpu[0] / cpu[v],
                (double) cpu[1] / cpu[v]));
      }
      System.out.println(line);
    }
  }

  /**
   * One line: this thread's CPU milliseconds per image of {@code resize(256),center_crop(224)} on
   * the vector path written as float32 CHW (normalised), uint8 HWC (feed's default) and uint8 CHW,
   * interleaved image by image.
   */
  private static void outputs(List<byte[]> data, ArrowBuf buf) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    ImageTransform[] outputs = {
      ImageTransform.parse("resize(256),center_crop(224),normalize"),
      ImageTransform.parse("resize(256),center_crop(224)"),
      ImageTransform.parse("resize(256),center_crop(224)").withOutput(OutputMode.UINT8_CHW)
    };
    long[] cpu = new long[outputs.length];
    for (int i = 0; i < data.size(); i++) {
      byte[] d = data.get(i);
      for (int o = 0; o < outputs.length; o++) {
        long t0 = mx.getCurrentThreadCpuTime();
        outputs[o].apply(d, 0, d.length, i, buf, 0, VectorPath.ENABLED);
        cpu[o] += mx.getCurrentThreadCpuTime() - t0;
      }
    }
    System.out.printf(
        "  outputs (%s), CPU ms/image: float32 CHW %.3f, uint8 HWC %.3f, uint8 CHW %.3f%n",
        VectorPath.ENABLED ? "vector path" : "scalar path",
        cpu[0] / 1e6 / data.size(),
        cpu[1] / 1e6 / data.size(),
        cpu[2] / 1e6 / data.size());
  }

  private interface Step {
    void run(byte[] data) throws Exception;
  }

  private static double perImage(List<byte[]> data, Step step) throws Exception {
    long t0 = System.nanoTime();
    for (byte[] d : data) {
      step.run(d);
    }
    return (System.nanoTime() - t0) / 1e6 / data.size();
  }

  private static DecodeCost headers(byte[] d) throws ImageException {
    return DecodeCost.of(ImageInfo.probe(d, 0, d.length), d, 0, d.length);
  }

  private static void decode(byte[] d) throws ImageException {
    OpenCvDecoder.decode(d, 0, d.length, headers(d), 1, DecodeScratch.current());
  }

  /**
   * Decodes into the decoder's own buffer without copying the pixels out, as {@code bench images}'
   * decode-only pass does: the floor the vector path's figure is compared with.
   */
  private static void decodeInPlace(byte[] d) throws ImageException {
    OpenCvDecoder.decodeWith(
        d, 0, d.length, headers(d), 1, DecodeScratch.current(), (rgb, w, h) -> null);
  }

  /**
   * Milliseconds of the vector path's resample of the decoded image, {@code
   * resize(256),center_crop(224),normalize} into {@code buf} as float32, mean of 500 (the decode
   * left out; NaN where the vector path is off).
   */
  private static double vectorResample(byte[] d, ArrowBuf buf) throws ImageException {
    if (!VectorPath.ENABLED) {
      return Double.NaN;
    }
    DecodeScratch scratch = DecodeScratch.current();
    DecodedImage decoded = OpenCvDecoder.decode(d, 0, d.length, headers(d), 1, scratch);
    DecodedImage img =
        new DecodedImage(decoded.pixels().clone(), decoded.width(), decoded.height());
    List<ImageOp> ops = TransformSpec.parse("resize(256),center_crop(224),normalize");
    OutputWriter writer =
        new OutputWriter(OutputMode.FLOAT32_CHW, (ImageOp.Normalize) ops.get(ops.size() - 1));
    Stage stage =
        StagePlanner.plan(ops, img.width(), img.height(), SampleRandom.of(0, 0, 0)).get(0);
    long t0 = System.nanoTime();
    for (int i = 0; i < 500; i++) {
      VectorResample.run(stage, img, 1, writer, buf, 0, VectorPath.PERMUTE, scratch);
    }
    return (System.nanoTime() - t0) / 500e6;
  }

  /** Milliseconds of the horizontal and vertical pass of resize(256) + crop(224), 50 times. */
  private static double[] passes(byte[] d) throws ImageException {
    DecodedImage img = OpenCvDecoder.decode(d, 0, d.length, headers(d), 1, DecodeScratch.current());
    byte[] src = img.pixels().clone();
    int[] size = TorchvisionGeometry.resizeShortSide(img.width(), img.height(), 256);
    int x0 = TorchvisionGeometry.centerOffset(size[0], 224);
    int y0 = TorchvisionGeometry.centerOffset(size[1], 224);
    PillowResample.Kernel kx =
        PillowResample.kernel(
            ResampleFilter.BILINEAR, img.width(), 0, img.width(), size[0], x0, 224, 0);
    PillowResample.Kernel ky =
        PillowResample.kernel(
            ResampleFilter.BILINEAR, img.height(), 0, img.height(), size[1], y0, 224, 0);
    int first = ky.firstInput();
    int end = ky.endInput();
    int[] rows = new int[(end - first) * 224 * 3];
    int[] row = new int[img.width() * 3];
    int[] acc = new int[224 * 3];
    byte[] out = new byte[224 * 224 * 3];
    long t0 = System.nanoTime();
    for (int i = 0; i < 50; i++) {
      PillowResample.horizontal(src, img.width(), first, end, kx, rows, row);
    }
    long t1 = System.nanoTime();
    for (int i = 0; i < 50; i++) {
      PillowResample.vertical(rows, first, 224, ky, out, 0, 224 * 3, acc);
    }
    long t2 = System.nanoTime();
    return new double[] {(t1 - t0) / 50e6, (t2 - t1) / 50e6};
  }
}
