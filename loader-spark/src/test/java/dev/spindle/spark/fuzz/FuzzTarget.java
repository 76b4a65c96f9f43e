package dev.spindle.spark.fuzz;

import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One fuzz target: a class with Jazzer's {@code public static void fuzzerTestOneInput(byte[])}, the
 * limits it is fuzzed under and its seed corpus ({@code src/test/resources/fuzz/NAME/}, one input
 * per file). Immutable.
 *
 * @param name the target's name on the command line and in reports
 * @param className the class holding {@code fuzzerTestOneInput}
 * @param heapMb the fuzzing JVM's heap (-Xmx): allocation beyond the parser's declared limits ends
 *     in an OutOfMemoryError, a finding
 * @param timeoutSeconds the bound on one input (libFuzzer's -timeout; the regression run's too)
 * @param maxLen the longest input the fuzzer makes (libFuzzer's -max_len)
 * @param parser what it fuzzes, for reports
 * @param jars which jars of the test classpath the fuzzing JVM gets beyond {@link #BASE_JARS} (a
 *     pattern on file names): Jazzer scans every class on its classpath at start-up, and the whole
 *     of Spark's takes minutes and more heap than a target's limit
 */
public record FuzzTarget(
    String name,
    String className,
    int heapMb,
    int timeoutSeconds,
    int maxLen,
    String parser,
    String jars) {

  /**
   * Jars every target gets: Jazzer, logging, Jackson, and loader-gpu (a jar, not a directory of
   * classes, when Maven's reactor runs the tests after {@code package}, as {@code mvn verify}
   * does); directories of classes always pass.
   */
  public static final String BASE_JARS =
      "jazzer-.*|slf4j-api-.*|jackson-(core|databind|annotations)-.*|loader-gpu-.*\\.jar";

  private static final String NONE = "";
  private static final String IMAGE =
      "arrow-memory-.*|netty-(buffer|common)-.*"
          + "|(javacpp|opencv|openblas)-[0-9.-]+(-linux-x86_64)?\\.jar";
  private static final String COMPRESS =
      "commons-(compress|io|lang3)-.*|xz-[0-9.]+\\.jar|zstd-jni-.*";
  private static final String PARQUET =
      "hadoop-client-(api|runtime)-.*|parquet-.*|snappy-java-.*"
          + "|zstd-jni-.*|aircompressor-.*|lz4-java-.*|commons-.*|slf4j-.*|log4j-.*|re2j-.*|jts-.*";

  /** Every target, in the order they run. */
  public static final List<FuzzTarget> ALL =
      List.of(
          new FuzzTarget(
              "tar",
              "dev.spindle.spark.shard.TarFuzz",
              256,
              10,
              16384,
              "tar entry reader (ustar, GNU long names, pax, base-256 sizes)",
              NONE),
          new FuzzTarget(
              "tar-gz",
              "dev.spindle.spark.shard.TarGzipFuzz",
              256,
              10,
              8192,
              "gzip-wrapped tar (DecompressedStream under the tar entry reader)",
              COMPRESS),
          new FuzzTarget(
              "tar-xz",
              "dev.spindle.spark.shard.TarXzFuzz",
              512,
              10,
              8192,
              "xz-compressed tar (Commons Compress / tukaani xz under the tar entry reader)",
              COMPRESS),
          new FuzzTarget(
              "tar-bz2",
              "dev.spindle.spark.shard.TarBzip2Fuzz",
              256,
              10,
              8192,
              "bzip2-compressed tar (Commons Compress under the tar entry reader)",
              COMPRESS),
          new FuzzTarget(
              "tar-zst",
              "dev.spindle.spark.shard.TarZstdFuzz",
              256,
              10,
              8192,
              "Zstandard-compressed tar (Commons Compress / zstd-jni under the tar entry reader)",
              COMPRESS),
          new FuzzTarget(
              "image-header",
              "dev.spindle.spark.image.ImageHeaderFuzz",
              256,
              10,
              16384,
              "image header probe (JPEG, PNG, BMP, PNM, TIFF, WebP, GIF; EXIF orientation;"
                  + " decode-cost headers)",
              NONE),
          new FuzzTarget(
              "decode-native",
              "dev.spindle.spark.image.NativeDecodeFuzz",
              512,
              30,
              16384,
              "full decode entry, native libjpeg-turbo region decoder",
              IMAGE),
          new FuzzTarget(
              "decode-opencv",
              "dev.spindle.spark.image.OpenCvDecodeFuzz",
              512,
              30,
              16384,
              "full decode entry, OpenCV decoder",
              IMAGE),
          new FuzzTarget(
              "manifest",
              "dev.spindle.spark.manifest.ManifestFuzz",
              256,
              10,
              8192,
              "manifest JSON reader (ManifestCodec)",
              NONE),
          new FuzzTarget(
              "manifest-bin",
              "dev.spindle.spark.manifest.ManifestBinaryFuzz",
              256,
              10,
              8192,
              "manifest binary reader (ManifestBinary: CRC, header, inflater, columns)",
              NONE),
          new FuzzTarget(
              "loader-state",
              "dev.spindle.spark.plan.LoaderStateFuzz",
              256,
              10,
              4096,
              "loader-state JSON reader (LoaderStateJson)",
              NONE),
          new FuzzTarget(
              "parquet",
              "dev.spindle.spark.shard.ParquetFuzz",
              1024,
              30,
              16384,
              "Parquet shard footer, schema and rows (ParquetFiles, ParquetShardReader)",
              PARQUET),
          new FuzzTarget(
              "bridge",
              "dev.spindle.gpu.bridge.BridgeFrameFuzz",
              256,
              10,
              4096,
              "trainer bridge server-side message decoding (Wire, Hello, NEXT/RELEASE/BYE)",
              NONE));

  /** The target called {@code name}, if any. */
  public static Optional<FuzzTarget> named(String name) {
    return ALL.stream().filter(t -> t.name.equals(name)).findFirst();
  }

  /** The entries of {@code classpath} this target's fuzzing JVM gets (see {@link #jars}). */
  public String classpath(String classpath) {
    Pattern wanted = Pattern.compile(jars.isEmpty() ? BASE_JARS : BASE_JARS + "|" + jars);
    return Stream.of(classpath.split(File.pathSeparator))
        .filter(
            e ->
                !e.endsWith(".jar")
                    || wanted.matcher(Path.of(e).getFileName().toString()).matches())
        .collect(Collectors.joining(File.pathSeparator));
  }

  /** The seed corpus directory on the test classpath ({@code fuzz/NAME}). */
  public Path corpus() {
    URL url = FuzzTarget.class.getResource("/fuzz/" + name);
    if (url == null) {
      throw new IllegalStateException(
          "No seed corpus for fuzz target "
              + name
              + " on the classpath (src/test/resources/fuzz/"
              + name
              + ")");
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("Bad corpus URL " + url, e);
    }
  }

  /**
   * Runs every seed of {@code target} once: a target's {@code fuzzerInitialize} calls it, so that
   * class loading and instrumentation happen before libFuzzer times the first input.
   */
  public static void warmUp(String target, Input run) {
    Path dir = named(target).orElseThrow().corpus();
    try (Stream<Path> seeds = java.nio.file.Files.list(dir)) {
      for (Path seed : seeds.sorted().toList()) {
        run.test(java.nio.file.Files.readAllBytes(seed));
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(
          "Cannot warm " + target + " up on the seeds in " + dir, e);
    }
  }

  /** A target's {@code fuzzerTestOneInput}, which may throw what its input makes it throw. */
  @FunctionalInterface
  public interface Input {
    void test(byte[] data) throws java.io.IOException;
  }

  /** Runs one input in this JVM, as Jazzer would; rethrows what the target threw. */
  public void runOnce(byte[] input) throws Throwable {
    Method m = Class.forName(className).getMethod("fuzzerTestOneInput", byte[].class);
    try {
      m.invoke(null, (Object) input);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
