package dev.spindle.spark.image

import java.io.File
import java.nio.file.Files
import java.util.SplittableRandom

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * The vector path (VectorResample) against the scalar one (StageRunner + OutputWriter): the same
 * bytes for every output mode, filter, flip, odd sizes (not multiples of 8), upscales, large
 * downscales and reduced decode. The scalar path is what GoldenImageSuite and
 * TorchvisionComparisonSuite pin to Pillow; this suite pins the vector path to it.
 */
class VectorResampleSuite extends AnyFunSuite {

  /** `t`'s output for `data` on the scalar or the vector path (tile transposes as `permute`). */
  private def render(t: ImageTransform, data: Array[Byte], index: Long, vector: Boolean,
      permute: Boolean = VectorPath.PERMUTE): Array[Byte] =
    withBuffer(t.outputBytes()) { buf =>
      val n = t.outputBytes().toInt
      buf.setZero(0, n)
      t.apply(data, 0, data.length, index, buf, 0L, vector, permute)
      read(buf, 0L, n)
    }

  /**
   * The scalar path's and the vector path's output, having checked that the native resample gives
   * the scalar path's bytes at every SIMD level ([[nativePaths]]: fused with the native JPEG
   * decoder, and on OpenCV's decode).
   */
  private def both(t: ImageTransform, data: Array[Byte], index: Long = 0L): (Array[Byte], Array[Byte]) = {
    val scalar = render(t, data, index, vector = false)
    val jpeg = ImageInfo.probe(data, 0, data.length).format() == ImageFormat.JPEG
    for (path <- nativePaths if jpeg || !path.nativeJpeg) {
      val native = withBuffer(t.outputBytes()) { buf =>
        val n = t.outputBytes().toInt
        buf.setZero(0, n)
        t.apply(data, 0, data.length, index, buf, 0L, false, false, path.nativeJpeg, path.nativeLevel)
        read(buf, 0L, n)
      }
      assert(java.util.Arrays.equals(scalar, native),
        s"${t.spec()} ${t.outputMode()} sample $index, $path: ${firstDifference(scalar, native)}")
    }
    (scalar, render(t, data, index, vector = true))
  }

  private def noise(w: Int, h: Int, seed: Long): Array[Byte] = {
    val rng = new SplittableRandom(seed)
    // smooth gradients plus noise, so every tap weight matters
    encode("png", w, h)((x, y) =>
      ((x * 255 / math.max(1, w - 1) + rng.nextInt(40)) & 0xff) << 16 |
        ((y * 255 / math.max(1, h - 1) + rng.nextInt(40)) & 0xff) << 8 | rng.nextInt(256))
  }

  /** `spec` as `mode` (normalize only where the output is float). */
  private def transform(spec: String, mode: OutputMode): ImageTransform =
    ImageTransform.parse(if (mode.isFloat) spec else spec.replace(",normalize", ""))
      .withOutput(mode)

  private val modes = Seq(OutputMode.FLOAT32_CHW, OutputMode.FLOAT16_CHW, OutputMode.UINT8_HWC,
    OutputMode.UINT8_CHW)

  test("the vector path is enabled in the test JVM (--add-modules=jdk.incubator.vector, AVX2)") {
    // surefire runs with the Spark JVM flags; a CPU without 256-bit vectors would turn it off
    assume(VectorPath.ENABLED, s"vector path off: ${VectorPath.describe()}")
    assert(VectorPath.describe().startsWith("vector"))
  }

  test("the warm-up's bundled images decode, and the vector path gives the scalar path's bytes") {
    for ((name, spec) <- Seq("warm-up.jpg" -> "resize(64),center_crop(56),normalize",
        VectorPath.SMALL_IMAGE -> "resize(16),center_crop(16),normalize")) {
      val in = classOf[VectorPath].getResourceAsStream(name)
      assert(in != null, name)
      val data = try in.readAllBytes() finally in.close()
      val (scalar, vector) = both(ImageTransform.parse(spec), data)
      assert(scalar.exists(_ != 0), name)
      assert(vector.sameElements(scalar), name)
    }
  }

  test("same bytes as the scalar path: sizes, filters, flips, output modes") {
    val specs = Seq(
      "resize(256),center_crop(224),normalize",
      "resize(256),center_crop(224)",
      "resize(37),center_crop(29)",
      "resize(100,filter=bicubic),center_crop(91)",
      "resize(64,filter=box),center_crop(61)",
      "resize(50),center_crop(50),hflip(1)",
      "crop(3,5,70,90),resize(33,45),hflip(1)",
      "resize(300),center_crop(299)", // upscale of the smaller inputs
      "resize(9),center_crop(7)", // large downscale: many taps
      "center_crop(40,30)", // no resize: identity kernels
      "random_resized_crop(57),hflip(0.5),normalize")
    val sizes = Seq((640, 408), (101, 77), (17, 300), (333, 129), (8, 8), (1000, 37))
    var seed = 1L
    for ((w, h) <- sizes; png = noise(w, h, { seed += 1; seed }); spec <- specs; mode <- modes) {
      val t = transform(spec, mode).withSeed(seed)
      for (index <- 0L until 3L) {
        val (scalar, vector) = both(t, png, index)
        assert(java.util.Arrays.equals(scalar, vector),
          s"$spec $mode on ${w}x$h, sample $index: first difference ${firstDifference(scalar, vector)}")
      }
    }
  }

  test("same bytes on real photographs, with reduced decode and EXIF orientation") {
    val photos = new File(getClass.getResource("/photos").toURI).listFiles()
      .filter(_.getName.endsWith(".jpg")).sortBy(_.getName).toSeq
    assert(photos.nonEmpty)
    for (photo <- photos; reduced <- Seq(false, true); mode <- modes) {
      val data = Files.readAllBytes(photo.toPath)
      val t = transform("resize(160),center_crop(144),normalize", mode).withReducedDecode(reduced)
      val (scalar, vector) = both(t, data)
      assert(java.util.Arrays.equals(scalar, vector),
        s"${photo.getName} $mode reduced=$reduced: ${firstDifference(scalar, vector)}")
    }
    for (name <- referenceImages) {
      val data = resource(name)
      val t = ImageTransform.parse("resize(40),center_crop(32),normalize")
      // an image the scalar path refuses (a reference set holds some) must be refused by the
      // vector path too; any other must give the same bytes on every path (both() checks native)
      val refused = try { render(t, data, 0L, vector = false); false }
      catch { case _: ImageException => true }
      if (refused) {
        intercept[ImageException](render(t, data, 0L, vector = true))
      } else {
        val (scalar, vector) = both(t, data)
        assert(java.util.Arrays.equals(scalar, vector), s"$name: ${firstDifference(scalar, vector)}")
      }
    }
  }

  /** ScalarFallbackMain's output in a fresh JVM with `flags`. */
  private def fallbackMain(flags: Seq[String]): Seq[String] = {
    val java = new File(System.getProperty("java.home"), "bin/java").getPath
    val cmd = Seq(java) ++ flags ++ Seq("--add-opens=java.base/java.nio=ALL-UNNAMED",
      "-Djavacpp.platform=" + System.getProperty("javacpp.platform", "linux-x86_64"),
      "-cp", System.getProperty("java.class.path"), "dev.spindle.spark.image.ScalarFallbackMain")
    val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes())
    assert(p.waitFor() == 0, out)
    out.linesIterator.toSeq
  }

  test("a JVM without jdk.incubator.vector runs the scalar path and gets the same bytes") {
    def run(flags: Seq[String]): String =
      fallbackMain(flags).filter(_.startsWith("resample=")).last
    val without = run(Nil)
    assert(without.startsWith("resample=scalar "), without)
    if (VectorPath.ENABLED) {
      val withModule = run(Seq("--add-modules=jdk.incubator.vector"))
      assert(withModule.startsWith("resample=vector"), withModule)
      assert(withModule.split(" ").last == without.split(" ").last, "same output checksum")
    }
  }

  test("preload() leaves OpenCV to the first image that needs it where the native decoder runs") {
    // OpenCV loaded up front held 25-35 MB more of a loader JVM's resident memory (its classes,
    // its libraries, OpenBLAS's) for JPEG inputs that never use it
    val out = fallbackMain(Seq("--add-modules=jdk.incubator.vector"))
    val preloaded = out.find(_.startsWith("native-jpeg=")).getOrElse(fail(out.mkString("\n")))
    if (NativeJpeg.AVAILABLE) {
      assert(preloaded == "native-jpeg=true opencv-after-preload=false", out.mkString("\n"))
    } else { // nothing else decodes: preload loads OpenCV
      assert(preloaded == "native-jpeg=false opencv-after-preload=true", out.mkString("\n"))
    }
    assert(out.contains("opencv-after-png=true"), out.mkString("\n"))
  }

  test("512-bit transposes (8-byte gathers, byte permutations) and 256-bit ones agree") {
    // the machine picks one (VectorPath.PERMUTE): 8-byte source words and tiles by byte
    // permutation, or 4-byte words and tiles by shifts and masks; both run here, the 512-bit
    // permutations emulated by the JIT where the CPU lacks AVX-512 VBMI (slow, so fewer cases)
    val specs = Seq("resize(256),center_crop(224),normalize", "resize(37),center_crop(29)",
      "resize(9),center_crop(7)", "crop(3,5,70,90),resize(33,45),hflip(1)")
    for ((w, h) <- Seq((640, 408), (101, 77), (17, 300)); spec <- specs) {
      val png = noise(w, h, w * 31L + h)
      val t = transform(spec, OutputMode.UINT8_CHW)
      val (scalar, _) = both(t, png)
      val permuted = render(t, png, 0L, vector = true, permute = true)
      val shifted = render(t, png, 0L, vector = true, permute = false)
      assert(java.util.Arrays.equals(scalar, permuted), s"$spec on ${w}x$h, permute: " +
        firstDifference(scalar, permuted))
      assert(java.util.Arrays.equals(scalar, shifted), s"$spec on ${w}x$h, shifts: " +
        firstDifference(scalar, shifted))
    }
  }

  test("cached resample kernels equal freshly computed ones, across sizes, crops and scales") {
    // one thread's cache sees many kernels in turn (more than it keeps); each must equal the
    // kernel a thread with an empty cache computes for the same stage
    val warm = DecodeScratch.current()
    val specs = Seq("resize(256),center_crop(224)", "resize(37),center_crop(29)",
      "random_resized_crop(57)", "resize(100,filter=bicubic),center_crop(91)")
    var checked = 0
    for (round <- 0 until 2; (w, h) <- Seq((640, 408), (408, 640), (101, 77), (640, 407));
         spec <- specs; index <- 0L until 3L) {
      val rng = SampleRandom.of(7L, round.toLong, index)
      val stage = StagePlanner.plan(TransformSpec.parse(spec), w, h, rng).get(0)
      val win = stage.window()
      for (reduce <- Seq(1, 2); horizontal <- Seq(true, false)) {
        val (size, first, count) =
          if (horizontal) ((w + reduce - 1) / reduce, win.x(), win.width())
          else ((h + reduce - 1) / reduce, win.y(), win.height())
        val cached = StageRunner.kernel(stage, reduce, size, horizontal, first, count, warm)
        val fresh = Await.result(Future {
          DecodeScratch.discard() // an empty cache
          StageRunner.kernel(stage, reduce, size, horizontal, first, count, DecodeScratch.current())
        }, 10.seconds)
        val what = s"$spec on ${w}x$h sample $index reduce $reduce horizontal $horizontal"
        assert(cached.start().toSeq == fresh.start().toSeq, what)
        assert(cached.taps().toSeq == fresh.taps().toSeq, what)
        assert(cached.k().toSeq == fresh.k().toSeq && cached.ksize() == fresh.ksize(), what)
        checked += 1
      }
    }
    assert(checked == 2 * 4 * 4 * 3 * 4)
  }

  test("float32 output without divisions where that is exact, with divisions elsewhere") {
    // OutputWriter.divisionFree decides per normalize; either way the bytes equal the scalar path
    assert(new OutputWriter(OutputMode.FLOAT32_CHW, TransformSpec.parse("normalize").get(0)
      .asInstanceOf[ImageOp.Normalize]).divisionFree())
    val rng = new SplittableRandom(11)
    val png = noise(120, 90, 5)
    val kinds = for (_ <- 0 until 40) yield {
      def three(lo: Double, hi: Double) =
        Seq.fill(3)(f"${lo + rng.nextDouble() * (hi - lo)}%.5f").mkString(":")
      val spec = s"resize(64),center_crop(56),normalize(mean=${three(-1, 1)},std=${three(0.01, 3)})"
      val t = ImageTransform.parse(spec)
      val (scalar, vector) = both(t, png)
      assert(java.util.Arrays.equals(scalar, vector), s"$spec: ${firstDifference(scalar, vector)}")
      new OutputWriter(OutputMode.FLOAT32_CHW, TransformSpec.parse(spec).get(2)
        .asInstanceOf[ImageOp.Normalize]).divisionFree()
    }
    assert(kinds.forall(identity), "FMA-corrected division is exact for ordinary normalizations")
    // a std whose reciprocal overflows: divisions, and still the scalar path's bytes
    val tiny = "resize(64),center_crop(56),normalize(mean=0.5:0.5:0.5,std=1e-39:0.5:2)"
    assert(!new OutputWriter(OutputMode.FLOAT32_CHW, TransformSpec.parse(tiny).get(2)
      .asInstanceOf[ImageOp.Normalize]).divisionFree())
    val (scalar, vector) = both(ImageTransform.parse(tiny), png)
    assert(java.util.Arrays.equals(scalar, vector), firstDifference(scalar, vector))
  }

  test("padding crops fall back to the scalar path and still agree") {
    val png = noise(50, 40, 7)
    for (mode <- modes) {
      val t = transform("resize(32),center_crop(48),normalize", mode)
      val (scalar, vector) = both(t, png)
      assert(java.util.Arrays.equals(scalar, vector), s"$mode")
    }
  }
}
