package dev.spindle.spark.image

import java.io.File
import java.nio.file.{Files, Path, Paths}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * The native resample ([[NativeResample]], fused with the native region decode): it loads at the
 * CPU's best SIMD level and by default replaces the scalar Java path; the system property
 * spindle.image.nativeResample forces each level (or the Java path) in a fresh JVM, with the same
 * bytes; destinations it cannot write (unaligned
 * floats) fall back to Java; corrupt JPEGs are refused with libjpeg's message, never crash and
 * leak no native memory. Byte-exactness at every level against the Java paths and torchvision is
 * checked by the comparison suites themselves (VectorResampleSuite, NativeJpegSuite,
 * GoldenImageSuite, TorchvisionComparisonSuite run every [[ImageTestSupport.nativePaths]]).
 */
class NativeResampleSuite extends AnyFunSuite {
  private def requireNative(): Unit = {
    if (NativeResample.BEST < 0 && sys.env.get("CI").contains("true")) {
      fail(s"the native resample must load in CI: ${NativeResample.describe()}")
    }
    assume(NativeResample.BEST >= 0, NativeResample.describe())
  }

  private lazy val photo: Array[Byte] =
    Files.readAllBytes(Paths.get(getClass.getResource("/photos/photo0.jpg").toURI))

  test("the native resample loads at the CPU's best level: everywhere at AVX2, else in place of the scalar Java path") {
    requireNative()
    val x86 = System.getProperty("os.arch") == "amd64"
    if (x86) assert(NativeResample.BEST >= NativeResample.SSE41, NativeResample.describe())
    assert(NativeResample.LEVEL == NativeResample.BEST) // no property set under Surefire
    val avx2 = NativeResample.BEST == NativeResample.AVX2
    assert(NativeResample.EVERYWHERE == avx2)
    // by default: native at AVX2 everywhere; below it wherever the Java vector path does not run,
    // the vector path where it does
    assert(NativeResample.levelFor(false) == NativeResample.BEST)
    assert(NativeResample.levelFor(true) == (if (avx2) NativeResample.AVX2 else -1))
    assert(ImageTransform.resamplePath() == (if (VectorPath.ENABLED && !avx2) "java" else "native"))
    assert(ImageTransform.nativeResample() ==
      s"native (${NativeResample.name(NativeResample.BEST)})" +
        (if (avx2) "" else " where the Java vector path does not run"))
    assert(NativeResample.supportedLevels().toSeq == (0 to NativeResample.BEST))
    // the public apply: the same bytes as every level and the Java path
    val t = ImageTransform.parse("resize(256),center_crop(224),normalize")
    val default = applyTo(t, photo)
    for (path <- DecodePath(vector = false, nativeJpeg = false) +: nativePaths) {
      assert(java.util.Arrays.equals(applyWith(t, photo, path), default), path)
    }
  }

  test("spindle.image.nativeResample forces each level, everywhere, or the Java resample, in a fresh JVM") {
    requireNative()
    def run(level: String): String = {
      val java = new File(System.getProperty("java.home"), "bin/java").getPath
      val cmd = Seq(java, s"-Dspindle.image.nativeResample=$level",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "-Djavacpp.platform=" + System.getProperty("javacpp.platform", "linux-x86_64"),
        "-cp", System.getProperty("java.class.path"), "dev.spindle.spark.image.NativeLevelMain")
      val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
      val out = new String(p.getInputStream.readAllBytes())
      assert(p.waitFor() == 0, out)
      out.linesIterator.filter(_.startsWith("resample=")).toSeq.last
    }
    val java = run("false")
    assert(java.startsWith("resample=java level=java (disabled by"), java)
    // this JVM has no jdk.incubator.vector: by default the native resample replaces the scalar one
    // (and at AVX2 it would replace the vector one too)
    val auto = run("auto")
    assert(auto.startsWith(s"resample=native level=native (${NativeResample.name(NativeResample.BEST)})" +
      (if (NativeResample.BEST == NativeResample.AVX2) " " else " where the Java vector path does not run ")),
      auto)
    assert(auto.split(" ").last == java.split(" ").last, "auto: same output as Java")
    val everywhere = run("true")
    assert(everywhere.startsWith(
      s"resample=native level=native (${NativeResample.name(NativeResample.BEST)}) "), everywhere)
    for (level <- NativeResample.supportedLevels()) {
      val name = NativeResample.name(level)
      val native = run(name)
      assert(native.startsWith(s"resample=native level=native ($name) "), native)
      assert(native.split(" ").last == java.split(" ").last, s"$name: same output as Java")
    }
    if (NativeResample.BEST < NativeResample.AVX2) { // a level the CPU lacks: refused, Java runs
      val refused = run("avx2")
      assert(refused.startsWith("resample=java level=java (spindle.image.nativeResample=avx2 but"))
    }
    val invalid = run("neon9")
    assert(invalid.contains("invalid spindle.image.nativeResample=neon9"), invalid)
  }

  test("a destination the native resample cannot write (unaligned floats) gets the Java path's bytes") {
    requireNative()
    for (mode <- Seq(OutputMode.FLOAT32_CHW, OutputMode.FLOAT16_CHW)) {
      val t = ImageTransform.parse("resize(64),center_crop(56),normalize").withOutput(mode)
      val n = t.outputBytes().toInt
      val aligned = applyWith(t, photo, DecodePath(false, true, NativeResample.BEST))
      val shifted = withBuffer(n + 8L) { buf =>
        t.apply(photo, 0, photo.length, 0L, buf, 1L, false, false, true, NativeResample.BEST)
        read(buf, 1L, n)
      }
      assert(java.util.Arrays.equals(aligned, shifted), s"$mode: ${firstDifference(aligned, shifted)}")
    }
  }

  test("fused decode and resample: corrupt JPEGs are refused with libjpeg's message, never crash, and leak no native memory") {
    requireNative()
    val good = Files.readAllBytes(Paths.get(getClass.getResource("/jpeg-variants/s420.jpg").toURI))
    val t = ImageTransform.parse("resize(96),center_crop(80),normalize")
    val rnd = new Random(33)
    def mutated(): Array[Byte] = {
      val b = good.clone()
      rnd.nextInt(3) match {
        case 0 => for (_ <- 0 to rnd.nextInt(20)) b(rnd.nextInt(b.length)) = rnd.nextInt(256).toByte
        case 1 => for (_ <- 0 to rnd.nextInt(4)) b(2 + rnd.nextInt(600)) = rnd.nextInt(256).toByte
        case _ => java.util.Arrays.fill(b, 700 + rnd.nextInt(b.length - 800), b.length - 2, 0.toByte)
      }
      b
    }
    var refused = 0
    var libjpeg = 0
    def round(n: Int): Unit = withBuffer(t.outputBytes()) { buf =>
      for (i <- 0 until n) {
        val b = mutated()
        val level = i % (NativeResample.BEST + 1)
        try t.apply(b, 0, b.length, 0L, buf, 0L, false, false, true, level)
        catch {
          case e: ImageException =>
            refused += 1
            if (e.getMessage.startsWith("Cannot decode JPEG: ")) libjpeg += 1
        }
      }
    }
    round(1000)
    val before = rssKb()
    round(3000)
    val grown = rssKb() - before
    assert(refused > 500, s"only $refused of 4000 mutated JPEGs were refused")
    assert(libjpeg > 0, "no refusal came from libjpeg inside the fused decode")
    assert(grown < 16 * 1024, s"resident memory grew by $grown KB over 3000 corrupt decodes")
  }

  private def rssKb(): Long = {
    System.gc()
    val status = Files.readAllLines(Path.of("/proc/self/status"))
    status.toArray.map(_.toString).find(_.startsWith("VmRSS:")).get
      .replaceAll("[^0-9]", "").toLong
  }
}
