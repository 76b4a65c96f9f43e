package dev.spindle.spark.image

import java.io.File
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * Spindle against Pillow + torchvision, run live from Debian's python3-torch/torchvision/pil
 * (src/test/python/spindle_reference.py) on real photographs (src/test/resources/photos).
 * Without that Python side the suite fails under CI=true and is cancelled, visibly, elsewhere.
 */
class TorchvisionComparisonSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val python = sys.env.getOrElse("SPINDLE_TEST_PYTHON", "/usr/bin/python3")
  private val script = new File("src/test/python/spindle_reference.py").getAbsoluteFile
  private lazy val photos: Seq[File] =
    new File(getClass.getResource("/photos").toURI).listFiles().filter(_.getName.endsWith(".jpg"))
      .sortBy(_.getName).toSeq

  private val cases = Seq(
    OutputMode.FLOAT32_CHW -> "resize(256),center_crop(224),normalize",
    OutputMode.UINT8_HWC -> "resize(256),center_crop(224)",
    OutputMode.FLOAT16_CHW -> "resize(256),center_crop(224),normalize",
    OutputMode.UINT8_HWC -> "resize(256),center_crop(224),hflip(1)",
    OutputMode.UINT8_CHW -> "crop(30,50,300,420),resize(224,224),hflip(1)",
    OutputMode.UINT8_HWC -> "center_crop(380,500),resize(160,filter=bicubic),center_crop(160)")

  private var outDir: File = _

  private def pythonSide(): Option[String] = {
    if (!new File(python).canExecute) return Some(s"$python not found")
    if (!script.isFile) return Some(s"$script not found")
    val p = new ProcessBuilder(python, "-c", "import torch, torchvision, PIL, numpy")
      .redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes())
    if (!p.waitFor(300, TimeUnit.SECONDS)) { p.destroyForcibly(); return Some("python timed out") }
    if (p.exitValue() != 0) Some(out.trim.linesIterator.toSeq.lastOption.getOrElse("import failed"))
    else None
  }

  /** Why the Python side cannot run, if it cannot; probed once. */
  private lazy val unavailable: Option[String] = pythonSide()

  /** Runs the reference once for all cases; every test first calls this. */
  private lazy val references: File = {
    val dir = Files.createTempDirectory("spindle-torchvision").toFile
    outDir = dir
    val cmd = Seq(python, script.getPath) ++ cases.flatMap { case (m, s) =>
      Seq("--case", s"${m.specName()} $s") } ++ Seq("--exif", dir.getPath) ++ photos.map(_.getPath)
    val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes())
    assert(p.waitFor(600, TimeUnit.SECONDS) && p.exitValue() == 0, s"reference failed: $out")
    dir
  }

  /** Fails under CI=true, cancels (reported as skipped) elsewhere, when Python is missing. */
  private def requireReference(): Unit = unavailable.foreach { why =>
    val msg = s"torchvision reference unavailable ($why): apt-get install -y python3-torch " +
      "python3-torchvision python3-pil python3-numpy"
    if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
  }

  override def afterAll(): Unit = if (outDir != null) {
    Option(outDir.listFiles()).toSeq.flatten.foreach { d =>
      Option(d.listFiles()).toSeq.flatten.foreach(_.delete()); d.delete()
    }
    outDir.delete()
  }

  private def reference(caseIndex: Int, photo: File): Array[Byte] = {
    requireReference()
    val dir = new File(references, caseIndex.toString)
    Files.readAllBytes(new File(dir, photo.getName + ".ref").toPath)
  }

  /** Shown by ScalaTest reporters and in Surefire's console output. */
  private def report(line: String): Unit = {
    info(line)
    println(s"[TorchvisionComparisonSuite] $line")
  }

  private def floats(b: Array[Byte]): Array[Float] = {
    val f = new Array[Float](b.length / 4)
    ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f)
    f
  }

  test("there are real photographs and a Python reference to compare with") {
    assert(photos.size >= 8)
    requireReference()
  }

  test("Resize(256) + CenterCrop(224) + Normalize matches torchvision within one 8-bit step") {
    val t = ImageTransform.parse(cases.head._2)
    val std = ImageOp.Normalize.IMAGENET_STD
    var sum = 0.0
    var n = 0L
    var worst = 0.0
    for (photo <- photos; path <- decodePaths) {
      val ours = floats(applyWith(t, Files.readAllBytes(photo.toPath), path))
      val theirs = floats(reference(0, photo))
      assert(ours.length == theirs.length)
      for (i <- ours.indices) {
        val steps = math.abs(ours(i) - theirs(i)) * std(i / (224 * 224)) * 255.0
        sum += steps; n += 1; worst = math.max(worst, steps)
      }
    }
    report(f"Resize(256)+CenterCrop(224)+Normalize vs torchvision: mean absolute difference " +
      f"${sum / n}%.6f 8-bit steps, max $worst%.6f, over ${photos.size} photos " +
      s"(paths: ${decodePaths.mkString(", ")})")
    assert(worst <= 1.0 + 1e-4)
  }

  for (((mode, spec), i) <- cases.zipWithIndex.drop(1)) {
    test(s"$spec as ${mode.specName()} equals torchvision exactly on every photograph") {
      val t = ImageTransform.parse(spec).withOutput(mode)
      for (photo <- photos; path <- decodePaths) {
        val ours = applyWith(t, Files.readAllBytes(photo.toPath), path)
        val theirs = reference(i, photo)
        assert(java.util.Arrays.equals(ours, theirs),
          s"${photo.getName} ($path): ${firstDifference(ours, theirs)}")
      }
    }
  }

  test("with reduced decode (2x here) the result stays close to torchvision") {
    val (mode, spec) = cases.last
    val t = ImageTransform.parse(spec).withOutput(mode).withReducedDecode(true)
    var sum = 0.0
    var n = 0L
    var worst = 0
    for (photo <- photos) {
      val ours = applyTo(t, Files.readAllBytes(photo.toPath))
      val theirs = reference(cases.size - 1, photo)
      for (i <- ours.indices) {
        val d = math.abs((ours(i) & 0xff) - (theirs(i) & 0xff))
        sum += d; n += 1; worst = math.max(worst, d)
      }
    }
    report(f"reduced decode vs torchvision: mean absolute difference ${sum / n}%.3f 8-bit steps, " +
      f"max $worst")
    assert(sum / n < 2.0)
  }
}
