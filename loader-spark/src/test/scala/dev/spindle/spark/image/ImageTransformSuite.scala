package dev.spindle.spark.image

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

class ImageTransformSuite extends AnyFunSuite {

  private def refused(t: ImageTransform, data: Array[Byte]): String =
    intercept[ImageException](applyTo(t, data)).getMessage

  test("a uniform colour stays exactly that colour, downscaled or upscaled") {
    for ((w, h, size) <- Seq((200, 130, 64), (13, 9, 40), (1, 1, 16), (64, 64, 64))) {
      val png = encode("png", w, h)((_, _) => 0x3c7fe1)
      val out = applyTo(ImageTransform.resizeCenterCrop(size), png)
      assert(out.grouped(3).forall(p => p.toSeq == Seq(0x3c, 0x7f, 0xe1).map(_.toByte)),
        s"${w}x$h to $size")
    }
  }

  test("an image already at the target size passes through unchanged, in RGB order") {
    val pixel = (x: Int, y: Int) => (x * 7 & 0xff) << 16 | (y * 5 & 0xff) << 8 | ((x ^ y) & 0xff)
    val out = applyTo(ImageTransform.resizeCenterCrop(48), encode("png", 48, 48)(pixel))
    for (y <- 0 until 48; x <- 0 until 48) {
      val rgb = pixel(x, y)
      val i = (y * 48 + x) * 3
      assert((out(i) & 0xff, out(i + 1) & 0xff, out(i + 2) & 0xff) ==
        ((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff))
    }
  }

  test("a 2x downscale of a one-pixel checkerboard is mid-grey inside (antialiased, not sampled)") {
    val png = encode("png", 64, 64)((x, y) => if ((x + y) % 2 == 0) 0xffffff else 0)
    val out = applyTo(ImageTransform.resizeCenterCrop(32), png)
    // interior weights 1/8, 3/8, 3/8, 1/8 per axis: half the mass on each colour = 127.5 → 128
    for (y <- 1 until 31; x <- 1 until 31; c <- 0 until 3)
      assert((out((y * 32 + x) * 3 + c) & 0xff) == 128, s"($x, $y)")
  }

  test("centre crop takes the middle of the long side with torchvision's rounding") {
    // 3 columns: red | green | blue, each 10 wide; crop 10 of 30 keeps exactly the green band
    val png = encode("png", 30, 10)((x, _) => Seq(0xff0000, 0x00ff00, 0x0000ff)(x / 10))
    val out = applyTo(ImageTransform.resizeCenterCrop(10), png)
    assert(out.grouped(3).forall(_.toSeq == Seq(0, 255, 0).map(_.toByte)))
  }

  test("output geometry is size x size x 3") {
    val t = ImageTransform.resizeCenterCrop(224)
    assert((t.height(), t.width(), t.channels(), t.outputBytes()) == (224, 224, 3, 150528L))
  }

  test("apply writes exactly outputBytes at dstOffset and nothing around it") {
    val t = ImageTransform.resizeCenterCrop(20)
    val data = resource("palette.png")
    withBuffer(1300) { buf =>
      buf.setBytes(0, Array.fill[Byte](1300)(0x5a))
      t.apply(data, 0, data.length, 0L, buf, 50L)
      assert(read(buf, 0, 50).forall(_ == 0x5a))
      assert(read(buf, 50 + 1200, 50).forall(_ == 0x5a))
      assert(java.util.Arrays.equals(read(buf, 50, 1200), applyTo(t, data)))
    }
  }

  test("apply refuses a destination too small, naming the sizes") {
    val t = ImageTransform.resizeCenterCrop(20)
    val data = resource("palette.png")
    withBuffer(2048) { buf =>
      val offset = buf.capacity() - 1199
      val e = intercept[IllegalArgumentException](t.apply(data, 0, data.length, 0L, buf, offset))
      assert(e.getMessage.contains(s"1200 bytes at offset $offset of ${buf.capacity()} bytes"))
    }
  }

  test("maxPixels refuses crafted huge headers before decoding anything") {
    val t = ImageTransform.resizeCenterCrop(8).withMaxPixels(1000000L)
    // these headers have no pixel data: a decode attempt would fail with a different reason
    assert(refused(t, CraftedHeaders.png(100000, 100000)) ==
      "Image too large: 100000x100000 = 10000000000 pixels (maxPixels 1000000)")
    assert(refused(t, CraftedHeaders.jpeg(60000, 50000)).startsWith("Image too large: 60000x50000"))
    assert(refused(ImageTransform.resizeCenterCrop(8), CraftedHeaders.png(100000, 100000))
      .startsWith("Image too large"))
    // at the limit is allowed
    val png = resource("gray.png") // 50 x 70
    assert(applyTo(ImageTransform.resizeCenterCrop(8).withMaxPixels(3500L), png).length == 192)
    assert(refused(ImageTransform.resizeCenterCrop(8).withMaxPixels(3499L), png)
      .startsWith("Image too large: 50x70"))
  }

  test("truncated JPEG and PNG files are refused with a reason, not decoded as grey") {
    val jpeg = resource("noise_rgb.jpg")
    assert(refused(ImageTransform.resizeCenterCrop(16), jpeg.take(jpeg.length / 2)) ==
      "Truncated JPEG: no end-of-image marker after the image data")
    val fullPng = resource("gradient_rgb.png")
    val half = fullPng.take(fullPng.length / 2)
    assert(refused(ImageTransform.resizeCenterCrop(16), half) == "Corrupt PNG: chunk 'IDAT' at"
      + s" byte 33 declares ${fullPng.length - 57} bytes but only ${half.length - 41} follow its"
      + " header")
  }

  test("garbage after a valid header is refused with a reason") {
    val rnd = new scala.util.Random(7)
    val noise = Array.fill[Byte](4000)(rnd.nextInt().toByte)
    val png = CraftedHeaders.png(40, 30) ++ noise
    assert(refused(ImageTransform.resizeCenterCrop(16), png).startsWith("Corrupt PNG: chunk "))
    val jpeg = resource("gray.jpg")
    val scan = HeaderProbe.jpegFirstScan(jpeg, 0, jpeg.length)
    assert(scan > 0)
    // header intact, entropy-coded data replaced by 0xFF-free noise, then an end marker
    val broken = jpeg.take(scan) ++ Array(0xff, 0xda, 0, 2).map(_.toByte) ++
      noise.map(b => (b & 0x7f).toByte) ++ Array(0xff, 0xd9).map(_.toByte)
    assert(refused(ImageTransform.resizeCenterCrop(16), broken).startsWith("Cannot decode JPEG"))
  }

  test("non-image bytes and empty input are refused") {
    assert(refused(ImageTransform.resizeCenterCrop(16), "hello".getBytes)
      .startsWith("Unknown image format"))
    assert(refused(ImageTransform.resizeCenterCrop(16), Array.emptyByteArray) ==
      "Empty image: 0 bytes")
  }

  test("invalid arguments name the bad value") {
    assert(intercept[IllegalArgumentException](ImageTransform.resizeCenterCrop(0)).getMessage ==
      "Invalid size: 0 (must be 1..16384)")
    assert(intercept[IllegalArgumentException](
      ImageTransform.resizeCenterCrop(8).withMaxPixels(-1)).getMessage ==
      "Invalid maxPixels: -1 (must be > 0)")
    assert(intercept[IllegalArgumentException](
      ImageTransform.resizeCenterCrop(8).withMaxDecodeBytes(0)).getMessage ==
      "Invalid maxDecodeBytes: 0 (must be > 0)")
  }

  test("the transform survives Java serialization with its settings") {
    val t = ImageTransform.resizeCenterCrop(20).withMaxPixels(12345L).withMaxDecodeBytes(987654L)
    val bytes = new ByteArrayOutputStream()
    new ObjectOutputStream(bytes).writeObject(t)
    val copy = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray))
      .readObject().asInstanceOf[ImageTransform]
    assert(copy.maxPixels() == 12345L && copy.outputBytes() == t.outputBytes())
    assert(copy.maxDecodeBytes() == 987654L)
    val data = resource("noise_420.jpg")
    assert(java.util.Arrays.equals(applyTo(copy, data), applyTo(t, data)))
  }

  test("many threads applying one transform get the same bytes as one thread") {
    val t = ImageTransform.resizeCenterCrop(24)
    val inputs = referenceImages.map(resource)
    val expected = inputs.map(applyTo(t, _))
    val pool = Executors.newFixedThreadPool(8)
    try {
      val tasks = (0 until 8).map { w =>
        new Callable[Int] {
          def call(): Int = {
            var checked = 0
            for (round <- 0 until 25; i <- inputs.indices) {
              val k = (i + w + round) % inputs.size
              assert(java.util.Arrays.equals(applyTo(t, inputs(k), k.toLong), expected(k)))
              checked += 1
            }
            checked
          }
        }
      }
      val results = pool.invokeAll(tasks.asJava, 120, TimeUnit.SECONDS).asScala
      assert(results.map(_.get()).sum == 8 * 25 * inputs.size)
    } finally {
      pool.shutdownNow()
    }
  }
}
