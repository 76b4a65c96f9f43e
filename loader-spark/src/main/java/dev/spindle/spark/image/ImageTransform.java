package dev.spindle.spark.image;

import dev.spindle.spark.plan.SplitMix64;
import java.io.Serializable;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;

/**
 * An immutable chain of image operations: decode, geometric transforms in the declared order, and
 * conversion to the {@link OutputMode}, written straight into a batch's Arrow buffer.
 *
 * <p>Any number of threads may call {@link #apply} at once on one instance: it keeps no mutable
 * state, and its decode and resample buffers are per thread (reused, so the steady path allocates
 * no pixel arrays). Random operations draw from a stream that is a pure function of (seed, epoch,
 * sample index). Serializable, so a Spark driver can build it and ship it to executors. The caller
 * owns {@code dst}; {@link #apply} only writes {@link #outputBytes()} bytes into it.
 *
 * <p>Per image, this class checks the header against its limits and plans the stages (with the
 * sample's random stream); the package's {@code TransformRunner} then decodes and runs them.
 */
public final class ImageTransform implements Serializable {
  private static final long serialVersionUID = 3L;

  /**
   * Default for {@link #withMaxPixels}: Pillow's decompression-bomb limit ({@code 2 *
   * Image.MAX_IMAGE_PIXELS}), so whatever torchvision users can open, Spindle opens too.
   */
  public static final long DEFAULT_MAX_PIXELS = 2L * 89_478_485L;

  /**
   * Default for {@link #withMaxDecodeBytes}: 512 MiB. A resize and crop takes about 6.5 bytes a
   * pixel of an upright baseline JPEG (decoded RGB, one copy, the encoded bytes), so this admits
   * about 80 megapixels; about 55 for a progressive 4:2:0 JPEG (3 more bytes a pixel of libjpeg's
   * coefficients), about 40 when EXIF turns the image (two more copies). 16 decode threads then
   * hold at most 8 GiB, whatever sizes their inputs declare.
   */
  public static final long DEFAULT_MAX_DECODE_BYTES = 512L << 20;

  private final String spec;
  private final List<ImageOp> ops;
  private final OutputWriter writer;
  private final Settings settings;
  private final int height;
  private final int width;

  /** Non-geometric settings; {@code with...} methods copy them with one change. */
  private record Settings(
      long maxPixels,
      long seed,
      long epoch,
      boolean exifOrientation,
      boolean reducedDecode,
      long maxDecodeBytes)
      implements Serializable {}

  private ImageTransform(String spec, List<ImageOp> ops, OutputMode mode, Settings settings) {
    ImageOp last = ops.isEmpty() ? null : ops.get(ops.size() - 1);
    ImageOp.Normalize normalize = last instanceof ImageOp.Normalize n ? n : null;
    if (normalize != null && !mode.isFloat()) {
      throw new IllegalArgumentException(
          "Invalid image output: "
              + mode.specName()
              + " (normalize needs float32-chw or float16-chw)");
    }
    int[] size = TransformSpec.outputSize(spec, ops);
    this.spec = spec;
    this.ops = List.copyOf(ops);
    this.writer = new OutputWriter(mode, normalize);
    this.settings = settings;
    this.height = size[0];
    this.width = size[1];
  }

  /**
   * Parses a chain such as {@code "resize(256),center_crop(224),normalize"} (see the package
   * documentation for the operations). Output: float32 CHW when it ends with {@code normalize},
   * otherwise uint8 HWC; change it with {@link #withOutput}.
   */
  public static ImageTransform parse(String spec) {
    List<ImageOp> ops = TransformSpec.parse(spec);
    boolean normalize = ops.get(ops.size() - 1) instanceof ImageOp.Normalize;
    return new ImageTransform(
        spec.trim(), ops, normalize ? OutputMode.FLOAT32_CHW : OutputMode.UINT8_HWC, defaults());
  }

  /**
   * Resizes the short side to {@code size} (Pillow bilinear with antialias, as {@code
   * torchvision.transforms.Resize(size)} on a PIL image), then centre-crops {@code size x size}
   * ({@code CenterCrop(size)}). Output: uint8 RGB, HWC.
   */
  public static ImageTransform resizeCenterCrop(int size) {
    if (size <= 0 || size > 16384) {
      throw new IllegalArgumentException("Invalid size: " + size + " (must be 1..16384)");
    }
    return parse("resize(" + size + "),center_crop(" + size + ")");
  }

  private static Settings defaults() {
    return new Settings(DEFAULT_MAX_PIXELS, 0L, 0L, true, false, DEFAULT_MAX_DECODE_BYTES);
  }

  /**
   * Images whose declared {@code width * height} exceeds {@code maxPixels} are refused with an
   * {@link ImageException} from the header alone, before any pixel memory is allocated.
   */
  public ImageTransform withMaxPixels(long maxPixels) {
    if (maxPixels <= 0) {
      throw new IllegalArgumentException("Invalid maxPixels: " + maxPixels + " (must be > 0)");
    }
    return with(
        new Settings(
            maxPixels,
            settings.seed,
            settings.epoch,
            settings.exifOrientation,
            settings.reducedDecode,
            settings.maxDecodeBytes));
  }

  /** Seed of the random operations (random crops, flips). */
  public ImageTransform withSeed(long seed) {
    return with(
        new Settings(
            settings.maxPixels,
            seed,
            settings.epoch,
            settings.exifOrientation,
            settings.reducedDecode,
            settings.maxDecodeBytes));
  }

  /** The same transform for another epoch: random choices change with the epoch. */
  public ImageTransform forEpoch(long epoch) {
    return with(
        new Settings(
            settings.maxPixels,
            settings.seed,
            epoch,
            settings.exifOrientation,
            settings.reducedDecode,
            settings.maxDecodeBytes));
  }

  /**
   * Whether an image's EXIF orientation (a JPEG's APP1 segment, a PNG's {@code eXIf} chunk, a
   * WebP's {@code EXIF} chunk) turns it upright before the other operations (default true, as
   * {@code ImageOps.exif_transpose}; plain torchvision on PIL ignores it). A TIFF's orientation tag
   * is applied by its decoder either way, as Pillow applies it when loading a TIFF.
   */
  public ImageTransform withExifOrientation(boolean honour) {
    return with(
        new Settings(
            settings.maxPixels,
            settings.seed,
            settings.epoch,
            honour,
            settings.reducedDecode,
            settings.maxDecodeBytes));
  }

  /**
   * Whether a JPEG that the first resize shrinks by 2, 4 or 8 or more is decoded at that reduced
   * scale (default false, so results match torchvision): much less work, and the reduced image
   * still has at least the resize's target resolution, but values differ slightly from a full
   * decode (mean about 0.3 8-bit steps, single values up to about 12).
   */
  public ImageTransform withReducedDecode(boolean enabled) {
    return with(
        new Settings(
            settings.maxPixels,
            settings.seed,
            settings.epoch,
            settings.exifOrientation,
            enabled,
            settings.maxDecodeBytes));
  }

  /**
   * Images whose decode would allocate more than {@code maxDecodeBytes} (decoded pixels at the
   * scale the decoder uses, the decoder's own buffers, Spindle's copies and resample buffers; see
   * {@link DecodeCost}) are refused with an {@link ImageException} from their headers, before
   * anything is allocated. The count is that of the resample path that allocates more, so which
   * images are refused does not depend on the path this JVM and CPU take.
   */
  public ImageTransform withMaxDecodeBytes(long maxDecodeBytes) {
    if (maxDecodeBytes <= 0) {
      throw new IllegalArgumentException(
          "Invalid maxDecodeBytes: " + maxDecodeBytes + " (must be > 0)");
    }
    return with(
        new Settings(
            settings.maxPixels,
            settings.seed,
            settings.epoch,
            settings.exifOrientation,
            settings.reducedDecode,
            maxDecodeBytes));
  }

  /** The same operations written as {@code mode}. */
  public ImageTransform withOutput(OutputMode mode) {
    return new ImageTransform(spec, ops, mode, settings);
  }

  private ImageTransform with(Settings s) {
    return new ImageTransform(spec, ops, writer.mode(), s);
  }

  public long maxPixels() {
    return settings.maxPixels;
  }

  public long maxDecodeBytes() {
    return settings.maxDecodeBytes;
  }

  public OutputMode outputMode() {
    return writer.mode();
  }

  public int height() {
    return height;
  }

  public int width() {
    return width;
  }

  public int channels() {
    return 3;
  }

  /** Bytes {@link #apply} writes per image: {@code height * width * channels * value size}. */
  public long outputBytes() {
    return (long) height * width * channels() * writer.mode().bytesPerValue();
  }

  /**
   * Decodes one encoded image ({@link ImageFormat}: JPEG, PNG, BMP, PNM, TIFF, WebP or a GIF's
   * first frame; gray, alpha, palette, CMYK and 16-bit become RGB uint8, as Pillow's {@code
   * convert("RGB")}), transforms it and writes exactly {@link #outputBytes()} bytes at {@code
   * dst[dstOffset]}. Thread-safe. Random operations use (seed, epoch, {@code sampleIndex}).
   *
   * @throws ImageException when the sample cannot be decoded or is larger than {@link #maxPixels()}
   */
  public void apply(
      byte[] data, int offset, int length, long sampleIndex, ArrowBuf dst, long dstOffset)
      throws ImageException {
    boolean vector = VectorPath.ready();
    apply(
        data,
        offset,
        length,
        sampleIndex,
        dst,
        dstOffset,
        vector,
        VectorPath.PERMUTE,
        NativeJpeg.AVAILABLE,
        NativeResample.levelFor(vector));
  }

  /**
   * Loads the native decoder the first images take, without compiling anything: Spindle's JPEG
   * region decoder and resample where this platform has them (with AVX2 the resample every JPEG
   * takes; below it, until the vector resample is compiled), else OpenCV (about 0.9 s of CPU:
   * {@code WarmUpCost} in loader-bench). OpenCV then loads with the first image that needs it
   * (another format, a JPEG the native decoder leaves to it). For a JVM that wants its first images
   * soon and has no core to spare for {@link #preload}'s compiling.
   */
  public static void loadDecoders() {
    NativeJpeg.describe();
    if (!NativeJpeg.AVAILABLE) {
      OpenCvDecoder.load();
    }
  }

  /**
   * Prepares this JVM for fast first images: loads the decoders as {@link #loadDecoders} does (the
   * native JPEG decoder; OpenCV only where there is none), then has the JIT compile the vector
   * resample and the per-image code around it (running whole transforms on two small synthetic
   * images until they are compiled: about 1.4 s, and 2.6 s of CPU with the compiler threads, {@code
   * WarmUpCost} in loader-bench; once per JVM). Optional: without it the first {@link #apply} loads
   * the libraries, and the vector path is compiled on a background thread while callers take the
   * native resample, or the scalar path where there is none (same bytes, slower).
   *
   * <p>OpenCV is left to the first image that needs it (a PNG, a JPEG the native decoder leaves to
   * it), as in an executor ({@code DecodeWarmUp}): loaded up front it held 25-35 MB more of a
   * loader JVM's resident memory (its classes, its libraries and OpenBLAS's) for JPEG inputs that
   * never use it. A caller that knows other formats are coming loads it as well ({@code ImageBench}
   * does for inputs with PNGs).
   */
  public static void preload() throws InterruptedException {
    loadDecoders();
    VectorPath.warmUpNow();
  }

  /** The JPEG decoder {@link #apply} uses for a one-resample transform on the vector path. */
  public static String jpegDecoder() {
    return NativeJpeg.describe();
  }

  /**
   * The Java resample implementation (the pure-JVM fallback of the native resample) once warm:
   * "vector (...)" or "scalar".
   */
  public static String resampleImplementation() {
    return VectorPath.describe();
  }

  /**
   * Which resample {@link #apply} runs once warm where it can (one resample stage, no padding, an
   * upright image): "native" ({@link NativeResample}, fused with the native JPEG region decode) or
   * "java" (the Vector API or scalar path, {@link #resampleImplementation}). By default the native
   * resample runs where the CPU has AVX2 and otherwise takes the place of the scalar path only (see
   * {@link NativeResample}).
   */
  public static String resamplePath() {
    return NativeResample.levelFor(VectorPath.ENABLED) >= 0 ? "native" : "java";
  }

  /**
   * "native (avx2)" and the like, with "where the Java vector path does not run" by default below
   * AVX2, or "java (why the native resample is off)".
   */
  public static String nativeResample() {
    return NativeResample.describe();
  }

  /**
   * {@link #apply}, on the vector path when {@code vector} and the JVM supports it (whether or not
   * it has been compiled yet), else on the scalar path; both give the same bytes.
   */
  void apply(
      byte[] data,
      int offset,
      int length,
      long sampleIndex,
      ArrowBuf dst,
      long dstOffset,
      boolean vector)
      throws ImageException {
    apply(data, offset, length, sampleIndex, dst, dstOffset, vector, VectorPath.PERMUTE);
  }

  /**
   * {@link #apply(byte[], int, int, long, ArrowBuf, long, boolean)}, the vector path transposing
   * with byte permutations when {@code permute} (see {@link VectorPath#PERMUTE}; for tests, which
   * compare both ways on one machine).
   */
  void apply(
      byte[] data,
      int offset,
      int length,
      long sampleIndex,
      ArrowBuf dst,
      long dstOffset,
      boolean vector,
      boolean permute)
      throws ImageException {
    apply(data, offset, length, sampleIndex, dst, dstOffset, vector, permute, NativeJpeg.AVAILABLE);
  }

  /**
   * {@link #apply(byte[], int, int, long, ArrowBuf, long, boolean, boolean)}, a JPEG whose
   * transform is one resample on the vector path decoded by {@link NativeJpeg} (only the region it
   * reads) when {@code nativeJpeg} and it loaded, else by OpenCV (for tests, which compare both
   * decoders on one machine); the Java resample.
   */
  void apply(
      byte[] data,
      int offset,
      int length,
      long sampleIndex,
      ArrowBuf dst,
      long dstOffset,
      boolean vector,
      boolean permute,
      boolean nativeJpeg)
      throws ImageException {
    apply(data, offset, length, sampleIndex, dst, dstOffset, vector, permute, nativeJpeg, -1);
  }

  /**
   * {@link #apply(byte[], int, int, long, ArrowBuf, long, boolean, boolean, boolean)}, the last
   * stage resampled natively at SIMD level {@code nativeLevel} ({@link NativeResample}) where it
   * can, or in Java when {@code nativeLevel} is -1 (for tests, which compare every level and the
   * Java paths on one machine).
   */
  void apply(
      byte[] data,
      int offset,
      int length,
      long sampleIndex,
      ArrowBuf dst,
      long dstOffset,
      boolean vector,
      boolean permute,
      boolean nativeJpeg,
      int nativeLevel)
      throws ImageException {
    if (nativeLevel >= 0 && !NativeResample.supported(nativeLevel)) {
      throw new IllegalArgumentException(
          "Native resample level "
              + nativeLevel
              + " not supported here (best "
              + NativeResample.BEST
              + ")");
    }
    long bytes = outputBytes();
    if (dst == null || dstOffset < 0 || dstOffset + bytes > dst.capacity()) {
      throw new IllegalArgumentException(
          "Invalid destination: "
              + bytes
              + " bytes at offset "
              + dstOffset
              + " of "
              + (dst == null ? "null" : dst.capacity() + " bytes"));
    }
    ImageInfo info = ImageInfo.probe(data, offset, length);
    if (info.pixels() > settings.maxPixels) {
      throw new ImageException(
          String.format(
              "Image too large: %dx%d = %d pixels (maxPixels %d)",
              info.width(), info.height(), info.pixels(), settings.maxPixels));
    }
    DecodeCost cost = DecodeCost.of(info, data, offset, length);
    DecodeScratch scratch = DecodeScratch.current();
    try {
      run(
          data,
          offset,
          length,
          info,
          cost,
          sampleIndex,
          scratch,
          vector && VectorPath.ENABLED,
          permute,
          nativeJpeg && NativeJpeg.AVAILABLE,
          nativeLevel,
          dst,
          dstOffset);
    } finally {
      scratch.trim();
    }
  }

  /**
   * Plans the stages for this image (its orientation, the random stream of {@code sampleIndex}) and
   * checks its decode budget; {@link TransformRunner} decodes and runs them, the last one writing
   * the output at {@code dst[dstOffset]}.
   */
  private void run(
      byte[] data,
      int offset,
      int length,
      ImageInfo info,
      DecodeCost cost,
      long sampleIndex,
      DecodeScratch scratch,
      boolean vector,
      boolean permute,
      boolean nativeJpeg,
      int nativeLevel,
      ArrowBuf dst,
      long dstOffset)
      throws ImageException {
    int orientation =
        settings.exifOrientation ? cost.orientation(data, offset, length) : Orientation.NORMAL;
    boolean swap = Orientation.swapsAxes(orientation);
    int w = cost.decodedWidth(); // a TIFF's decoder turns it by its orientation tag itself
    int h = cost.decodedHeight();
    SplitMix64 rng = SampleRandom.of(settings.seed, settings.epoch, sampleIndex);
    List<Stage> stages = StagePlanner.plan(ops, swap ? h : w, swap ? w : h, rng);
    int reduce =
        settings.reducedDecode && info.format() == ImageFormat.JPEG
            ? ReducedDecode.scale(stages.get(0))
            : 1;
    boolean directable =
        orientation == Orientation.NORMAL && stages.size() == 1 && !stages.get(0).pads();
    // counts both paths: which one runs depends on the warm-up and the CPU, the verdict must not
    checkDecodeBytes(info, reduce, cost.bytes(reduce, stages, directable, orientation));
    TransformRunner.run(
        this,
        data,
        offset,
        length,
        cost,
        orientation,
        stages,
        reduce,
        directable && (vector || nativeLevel >= 0),
        vector,
        permute,
        nativeJpeg,
        nativeLevel,
        scratch,
        dst,
        dstOffset);
  }

  private void checkDecodeBytes(ImageInfo info, int reduce, long bytes) throws ImageException {
    if (bytes > settings.maxDecodeBytes) {
      throw new ImageException(
          String.format(
              "Image too large to decode: %dx%d %s needs %d bytes"
                  + "%s (spark.spindle.image.maxDecodeBytes %d)",
              info.width(),
              info.height(),
              info.format(),
              bytes,
              reduce > 1 ? " at 1/" + reduce + " scale" : "",
              settings.maxDecodeBytes));
    }
  }

  /** How the output is written, for {@link TransformRunner}. */
  OutputWriter writer() {
    return writer;
  }

  /** The chain as parsed, e.g. {@code resize(256),center_crop(224),normalize}. */
  public String spec() {
    return spec;
  }

  @Override
  public String toString() {
    return "ImageTransform["
        + spec
        + " -> "
        + writer.mode().specName()
        + " "
        + height
        + "x"
        + width
        + ", maxPixels="
        + settings.maxPixels
        + ", maxDecodeBytes="
        + settings.maxDecodeBytes
        + ", seed="
        + settings.seed
        + ", epoch="
        + settings.epoch
        + ", exifOrientation="
        + settings.exifOrientation
        + ", reducedDecode="
        + settings.reducedDecode
        + "]";
  }
}
