package dev.spindle.spark.image

import java.awt.image.BufferedImage
import java.io.ByteArrayOutputStream
import javax.imageio.ImageIO

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

class DecodeFormatsSuite extends AnyFunSuite {

  test("16-bit PNGs keep the high byte of every sample") {
    // gray16.png (25 x 33) holds random 16-bit values; compare with an 8-bit PNG of the high bytes
    val png16 = resource("gray16.png")
    val img = ImageIO.read(new java.io.ByteArrayInputStream(png16))
    val raster = img.getRaster
    val gray8 = new BufferedImage(25, 33, BufferedImage.TYPE_BYTE_GRAY)
    for (y <- 0 until 33; x <- 0 until 25)
      gray8.getRaster.setSample(x, y, 0, raster.getSample(x, y, 0) >> 8)
    val out = new ByteArrayOutputStream()
    ImageIO.write(gray8, "png", out)
    val t = ImageTransform.parse("resize(25,33)") // identity on the pixels
    val t2 = ImageTransform.parse("resize(12),center_crop(12)")
    assert(java.util.Arrays.equals(applyTo(t, png16), applyTo(t, out.toByteArray)))
    assert(java.util.Arrays.equals(applyTo(t2, png16), applyTo(t2, out.toByteArray)))
  }

  /** The JPEG with its EXIF orientation value rewritten to `o` (Pillow writes it big-endian). */
  private def withOrientation(jpeg: Array[Byte], o: Int): Array[Byte] = {
    val tag = jpeg.indexOfSlice(Array[Byte](0x01, 0x12, 0x00, 0x03))
    assert(tag > 0)
    val copy = jpeg.clone()
    copy(tag + 9) = o.toByte
    copy
  }

  test("EXIF orientation is ignored when switched off and applied when on") {
    val t = ImageTransform.parse("resize(30),center_crop(20,30)")
    val stored6 = resource("exif6.jpg")
    val stored1 = withOrientation(stored6, 1)
    assert(HeaderProbe.jpegOrientation(stored1, 0, stored1.length) == 1)
    val ignored = applyTo(t.withExifOrientation(false), stored6)
    assert(java.util.Arrays.equals(ignored, applyTo(t, stored1)))
    assert(!java.util.Arrays.equals(ignored, applyTo(t, stored6)))
  }

  test("an unreadable EXIF block does not make a JPEG unreadable") {
    val jpeg = resource("exif6.jpg")
    val i = jpeg.indexOfSlice("Exif".getBytes)
    assert(i > 0)
    val broken = jpeg.clone()
    for (k <- i + 6 until i + 14) broken(k) = 0x7f.toByte // garbles the TIFF header
    assert(HeaderProbe.jpegOrientation(broken, 0, broken.length) == Orientation.NORMAL)
    assert(HeaderProbe.jpegOrientation(jpeg, 0, jpeg.length) == 6)
    assert(applyTo(ImageTransform.resizeCenterCrop(16), broken).length == 768)
  }
}
