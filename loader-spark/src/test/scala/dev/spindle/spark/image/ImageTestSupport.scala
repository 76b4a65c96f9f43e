package dev.spindle.spark.image

import java.awt.image.BufferedImage
import java.io.{ByteArrayOutputStream, File}
import java.nio.file.Files
import javax.imageio.ImageIO

import org.apache.arrow.memory.{ArrowBuf, BufferAllocator, RootAllocator}
import org.scalatest.Assertions

/** Helpers shared by the image suites: reference files, encoders independent of OpenCV, Arrow. */
object ImageTestSupport {
  /**
   * The reference images' folder, found by a file in it: scalatest-core's jar has an `images/`
   * folder too, ahead of these resources on loader-bench's test classpath.
   */
  lazy val imagesDir: File = new File(getClass.getResource("/images/golden.tsv").toURI).getParentFile

  def resource(name: String): Array[Byte] = Files.readAllBytes(new File(imagesDir, name).toPath)

  /**
   * Cancels the test where the native JPEG decoder did not load; fails it instead under CI=true,
   * whose machines bin/setup-test-deps gives a C compiler and libjpeg62-turbo-dev.
   */
  def requireNativeJpeg(): Unit = {
    if (!NativeJpeg.AVAILABLE && sys.env.get("CI").contains("true")) {
      Assertions.fail(s"the native JPEG decoder must load in CI: ${NativeJpeg.describe()}")
    }
    Assertions.assume(NativeJpeg.AVAILABLE, NativeJpeg.describe())
  }

  /** OpenCV's whole-image decode of `data` at 1/`reduce` scale, copied off the thread's buffers. */
  def wholeDecode(data: Array[Byte], reduce: Int): DecodedImage = {
    val cost = DecodeCost.of(ImageInfo.probe(data, 0, data.length), data, 0, data.length)
    val d = OpenCvDecoder.decode(data, 0, data.length, cost, reduce, DecodeScratch.current())
    new DecodedImage(d.pixels().clone(), d.width(), d.height())
  }

  /**
   * The first pixel of box [x0,x1)x[y0,y1) where `rgb`, a native decode of `region` (RGB rows of
   * `region.rowPixels()` pixels from its corner), differs from `full`: "pixel (x, y) channel c is
   * A, the whole decode's B", or None when every one is the same.
   */
  def regionMismatch(rgb: java.nio.ByteBuffer, region: VectorResample.Region, full: DecodedImage,
      box: (Int, Int, Int, Int)): Option[String] = {
    val (x0, y0, x1, y1) = box
    val w = full.width()
    for (y <- y0 until y1; x <- x0 until x1; c <- 0 until 3) {
      val got = rgb.get(((y - region.y()) * region.rowPixels() + (x - region.x())) * 3 + c)
      val want = full.pixels()((y * w + x) * 3 + c)
      if (got != want) {
        return Some(s"pixel ($x, $y) channel $c is ${got & 0xFF}, the whole decode's ${want & 0xFF}")
      }
    }
    None
  }

  /** Encoded test images (not golden outputs) in the resources directory, sorted by name. */
  def referenceImages: Seq[String] =
    imagesDir.list().toSeq.filter(n => n.endsWith(".png") || n.endsWith(".jpg")).sorted

  /** One line of golden.tsv: what torchvision made of `image` under `spec`. */
  final case class Golden(image: String, spec: String, output: OutputMode, exif: Boolean,
      reference: String, maxDifference: Int)

  def goldens: Seq[Golden] =
    scala.io.Source.fromFile(new File(imagesDir, "golden.tsv")).getLines()
      .filterNot(_.startsWith("#")).filter(_.nonEmpty).map { line =>
        val f = line.split("\t")
        Golden(f(0), f(1), OutputMode.parse(f(2)), f(3) == "1", f(4), f(5).toInt)
      }.toSeq

  /** Encodes an RGB image given as `pixel(x, y) => 0xRRGGBB` with javax.imageio (not OpenCV). */
  def encode(format: String, width: Int, height: Int)(pixel: (Int, Int) => Int): Array[Byte] = {
    val img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB)
    for (y <- 0 until height; x <- 0 until width) img.setRGB(x, y, pixel(x, y))
    val out = new ByteArrayOutputStream()
    require(ImageIO.write(img, format, out), s"no $format writer")
    out.toByteArray
  }

  /** Runs `transform` on `data` into a fresh Arrow buffer and returns the output bytes. */
  def applyTo(transform: ImageTransform, data: Array[Byte], sampleIndex: Long = 0L): Array[Byte] =
    withBuffer(transform.outputBytes()) { buf =>
      transform.apply(data, 0, data.length, sampleIndex, buf, 0L)
      read(buf, 0L, transform.outputBytes().toInt)
    }

  /**
   * [[applyTo]] on the vector path (when the JVM has it) or on the scalar path, explicitly; JPEGs
   * decoded natively (when the library loaded) or by OpenCV; the Java resample.
   */
  def applyWith(transform: ImageTransform, data: Array[Byte], vector: Boolean,
      nativeJpeg: Boolean = NativeJpeg.AVAILABLE): Array[Byte] =
    applyWith(transform, data, DecodePath(vector, nativeJpeg))

  /** [[applyTo]] on `path`. */
  def applyWith(transform: ImageTransform, data: Array[Byte], path: DecodePath): Array[Byte] =
    withBuffer(transform.outputBytes()) { buf =>
      transform.apply(data, 0, data.length, 0L, buf, 0L, path.vector, VectorPath.PERMUTE,
        path.nativeJpeg, path.nativeLevel)
      read(buf, 0L, transform.outputBytes().toInt)
    }

  /**
   * One way to run a transform: the Java resample (`nativeLevel` -1; vector or scalar) or the
   * native one at a SIMD level ([[NativeResample]]: C, SSE4.1, AVX2), JPEGs decoded by the native
   * region decoder (fused with the native resample) or by OpenCV.
   */
  final case class DecodePath(vector: Boolean, nativeJpeg: Boolean, nativeLevel: Int = -1) {
    override def toString: String =
      if (nativeLevel < 0) describe(vector, nativeJpeg)
      else s"native resample ${NativeResample.name(nativeLevel)}" +
        (if (nativeJpeg) ", native JPEG (fused)" else ", OpenCV")
  }

  /** "vector, native JPEG" and the like, for messages. */
  def describe(vector: Boolean, nativeJpeg: Boolean): String =
    (if (vector) "vector" else "scalar") + (if (nativeJpeg) ", native JPEG" else ", OpenCV")

  /** The resample paths to test: scalar, and vector where this JVM and CPU have it. */
  def paths: Seq[Boolean] = if (VectorPath.ENABLED) Seq(false, true) else Seq(false)

  /**
   * The native resample at every SIMD level this machine runs (plain C, SSE4.1, AVX2), each fused
   * with the native JPEG decoder and on OpenCV's decode; none without the library (required
   * under CI=true, as NativeJpegSuite requires it).
   */
  def nativePaths: Seq[DecodePath] = {
    if (sys.env.get("CI").contains("true")) {
      require(NativeResample.BEST >= 0,
        s"the native resample must run in CI: ${NativeResample.describe()}")
    }
    NativeResample.supportedLevels().toSeq.flatMap(l =>
      Seq(DecodePath(vector = false, nativeJpeg = true, l),
        DecodePath(vector = false, nativeJpeg = false, l)))
  }

  /**
   * Paths to test: each Java resample path with OpenCV decoding, the vector path with the native
   * region decoder where it loaded, and the native resample at each SIMD level ([[nativePaths]]).
   */
  def decodePaths: Seq[DecodePath] =
    paths.map(DecodePath(_, nativeJpeg = false)) ++
      (if (VectorPath.ENABLED && NativeJpeg.AVAILABLE) Seq(DecodePath(vector = true,
        nativeJpeg = true)) else Nil) ++ nativePaths

  def withBuffer[T](bytes: Long)(body: ArrowBuf => T): T = {
    val allocator: BufferAllocator = new RootAllocator(Long.MaxValue)
    try {
      val buf = allocator.buffer(bytes)
      try body(buf)
      finally buf.close()
    } finally allocator.close()
  }

  def read(buf: ArrowBuf, offset: Long, length: Int): Array[Byte] = {
    val out = new Array[Byte](length)
    buf.getBytes(offset, out, 0, length)
    out
  }

  /** Index and values of the first differing byte, for readable failure messages. */
  def firstDifference(a: Array[Byte], b: Array[Byte]): String = {
    val i = a.indices.find(i => a(i) != b(i)).getOrElse(-1)
    if (i < 0) "none"
    else s"byte $i (pixel ${i / 3}, channel ${i % 3}): ${a(i) & 0xff} vs ${b(i) & 0xff}"
  }
}
