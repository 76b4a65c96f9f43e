package dev.spindle.spark.image

import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Path, Paths}
import javax.imageio.{IIOImage, ImageIO, ImageWriteParam}
import javax.imageio.metadata.IIOMetadataNode

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * The native JPEG region decoder ([[NativeJpeg]]): it is built and loads (required under CI=true,
 * whose machines bin/setup-test-deps gives a C compiler and libjpeg62-turbo-dev); every region it
 * decodes, at every DCT scale, holds exactly the pixels of a whole-image decode by OpenCV, on
 * every JPEG layout (subsampling, grayscale, progressive, restart intervals, odd sizes);
 * transforms give the same bytes on both decoders; corrupt JPEGs are refused with libjpeg's
 * message, never crash the JVM and leak no native memory.
 */
class NativeJpegSuite extends AnyFunSuite {
  private lazy val variants: Seq[(String, Array[Byte])] = {
    val dir = Paths.get(getClass.getResource("/jpeg-variants").toURI)
    val files = Files.list(dir).iterator()
    val out = Seq.newBuilder[(String, Array[Byte])]
    while (files.hasNext) {
      val f = files.next()
      if (f.toString.endsWith(".jpg")) out += f.getFileName.toString -> Files.readAllBytes(f)
    }
    val photos = Paths.get(getClass.getResource("/photos").toURI)
    (out.result().sortBy(_._1) ++ Seq("photo0.jpg", "photo5.jpg").map(n =>
      n -> Files.readAllBytes(photos.resolve(n)))) :+ ("restart-interval.jpg" -> withRestarts())
  }

  /** A 4:2:0 JPEG with a restart marker every 2 MCUs, written by ImageIO (Pillow 9.4 cannot). */
  private def withRestarts(): Array[Byte] = {
    val photo = ImageIO.read(getClass.getResourceAsStream("/photos/photo2.jpg"))
    val writer = ImageIO.getImageWritersByFormatName("jpeg").next()
    val param = writer.getDefaultWriteParam
    param.setCompressionMode(ImageWriteParam.MODE_EXPLICIT)
    param.setCompressionQuality(0.9f)
    val metadata = writer.getDefaultImageMetadata(
      new javax.imageio.ImageTypeSpecifier(photo), param)
    val root = metadata.getAsTree("javax_imageio_jpeg_image_1.0").asInstanceOf[IIOMetadataNode]
    val markers = root.getElementsByTagName("markerSequence").item(0)
    val dri = new IIOMetadataNode("dri")
    dri.setAttribute("interval", "2")
    markers.insertBefore(dri, markers.getFirstChild)
    metadata.setFromTree("javax_imageio_jpeg_image_1.0", root)
    val out = new ByteArrayOutputStream()
    val stream = ImageIO.createImageOutputStream(out)
    writer.setOutput(stream)
    writer.write(null, new IIOImage(photo, null, metadata), param)
    stream.close()
    writer.dispose()
    val bytes = out.toByteArray
    assert(bytes.sliding(2).exists(p => p(0) == 0xFF.toByte && p(1) == 0xDD.toByte), "no DRI")
    bytes
  }

  test("the native decoder is built into the classes and loads") {
    requireNativeJpeg()
    assert(ImageTransform.jpegDecoder() == "native libjpeg-turbo (region decode)")
  }

  test("every region at every scale holds the whole decode's pixels, on every JPEG layout") {
    requireNativeJpeg()
    val rnd = new Random(19)
    for ((name, data) <- variants; reduce <- Seq(1, 2, 4, 8)) {
      val full = wholeDecode(data, reduce)
      val (w, h) = (full.width(), full.height())
      val progressive = DecodeCost.of(ImageInfo.probe(data, 0, data.length), data, 0,
        data.length).frame().progressive()
      // edges, corners, single pixels and random boxes
      val boxes = Seq((0, 0, w, h), (0, 0, 1, 1), (w - 1, h - 1, w, h), (0, h / 2, w / 3, h),
        (w / 2, 0, w, h / 3)) ++ Seq.fill(25) {
        val x0 = rnd.nextInt(w); val y0 = rnd.nextInt(h)
        (x0, y0, x0 + 1 + rnd.nextInt(w - x0), y0 + 1 + rnd.nextInt(h - y0))
      }
      for ((x0, y0, x1, y1) <- boxes) {
        val band = NativeJpeg.open(data, 0, data.length, reduce, progressive, x0, y0, x1, y1,
          DecodeScratch.current())
        val rgb = try band.all() finally band.close()
        assert(band.width == w && band.height == h, s"$name 1/$reduce size")
        val r = band.region
        assert(r.x() <= x0 && r.y() <= y0 && r.x() + r.rowPixels() >= x1 &&
          r.y() + band.rows >= y1, s"$name $r")
        regionMismatch(rgb, r, full, (x0, y0, x1, y1)).foreach { m =>
          fail(s"$name at 1/$reduce, region [$x0,$x1)x[$y0,$y1) decoded as $r: $m")
        }
      }
    }
  }

  test("transforms give the same bytes with the native decoder as with OpenCV") {
    requireNativeJpeg()
    assume(VectorPath.ENABLED, "the native decoder serves the vector path only")
    val specs = Seq("resize(256),center_crop(224),normalize", "resize(224),center_crop(224)",
      "resize(96),center_crop(80),hflip(1)", "random_resized_crop(224),hflip,normalize",
      "random_resized_crop(64,scale=0.05:0.3)", "resize(160,filter=bicubic),center_crop(150)",
      "crop(30,50,120,90),resize(64,64)", "resize(40,filter=box),center_crop(32)")
    for (spec <- specs; reduced <- Seq(false, true); (name, data) <- variants; index <- 0L until 3L) {
      val t = ImageTransform.parse(spec).withSeed(7).withReducedDecode(reduced)
      val opencv = withBuffer(t.outputBytes()) { buf =>
        t.apply(data, 0, data.length, index, buf, 0L, true, VectorPath.PERMUTE, false)
        read(buf, 0L, t.outputBytes().toInt)
      }
      // the vector path on the native decoder, and the native resample at every SIMD level,
      // fused with the native decoder and on OpenCV's decode
      for (path <- DecodePath(vector = true, nativeJpeg = true) +: nativePaths) {
        val native = withBuffer(t.outputBytes()) { buf =>
          t.apply(data, 0, data.length, index, buf, 0L, path.vector, VectorPath.PERMUTE,
            path.nativeJpeg, path.nativeLevel)
          read(buf, 0L, t.outputBytes().toInt)
        }
        assert(java.util.Arrays.equals(native, opencv),
          s"$spec (reduced $reduced) on $name, sample $index, $path: " +
            firstDifference(native, opencv))
      }
    }
  }

  test("corrupt JPEGs are refused with libjpeg's message, never crash, and leak no native memory") {
    requireNativeJpeg()
    val good = variants.find(_._1 == "s420.jpg").get._2
    val rnd = new Random(4)
    def mutated(): Array[Byte] = {
      val b = good.clone()
      rnd.nextInt(4) match {
        case 0 => for (_ <- 0 to rnd.nextInt(20)) b(rnd.nextInt(b.length)) = rnd.nextInt(256).toByte
        case 1 => for (_ <- 0 to rnd.nextInt(4)) b(2 + rnd.nextInt(600)) = rnd.nextInt(256).toByte
        case 2 => return b.take(2 + rnd.nextInt(b.length - 2)) ++ Array(0xFF, 0xD9).map(_.toByte)
        case _ => java.util.Arrays.fill(b, 700 + rnd.nextInt(b.length - 800), b.length - 2, 0.toByte)
      }
      b
    }
    var refused = 0
    def round(n: Int): Unit = for (i <- 0 until n) {
      val b = mutated()
      try {
        val band = NativeJpeg.open(b, 0, b.length, 1, false, 0, 0, 400, 300,
          DecodeScratch.current())
        if (band != null) { // null: a header now saying CMYK, left to OpenCV
          // every other one closed half read, as a resample that failed would
          try band.rows(0, if (i % 2 == 0) band.rows else band.rows / 2) finally band.close()
        }
      } catch {
        case e: ImageException =>
          refused += 1
          assert(e.getMessage.startsWith("Cannot decode JPEG: ") && e.getMessage.length > 20, e)
      }
    }
    round(2000) // buffers and allocator pools at their steady size
    val before = rssKb()
    round(6000)
    val grown = rssKb() - before
    assert(refused > 1000, s"only $refused of 8000 mutated JPEGs were refused")
    assert(grown < 16 * 1024, s"resident memory grew by $grown KB over 6000 corrupt decodes")
  }

  private def rssKb(): Long = {
    System.gc()
    val status = Files.readAllLines(Path.of("/proc/self/status"))
    status.toArray.map(_.toString).find(_.startsWith("VmRSS:")).get
      .replaceAll("[^0-9]", "").toLong
  }
}
