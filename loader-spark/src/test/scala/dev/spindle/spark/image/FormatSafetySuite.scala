package dev.spindle.spark.image

import java.io.File
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * The guards JPEG and PNG have, for BMP, PNM, TIFF, WebP and GIF: a header declaring a huge image
 * is refused by spark.spindle.image.maxPixels before anything is decoded; data too short for what
 * the header declares is refused from the headers; spark.spindle.image.maxDecodeBytes counts each
 * format's decoder buffers with one verdict on both resample paths; data the decoder cannot read
 * is quarantined naming the format.
 */
class FormatSafetySuite extends AnyFunSuite {
  private val t16 = ImageTransform.resizeCenterCrop(16)

  private def format(name: String): Array[Byte] =
    Files.readAllBytes(new File(getClass.getResource("/formats/" + name).toURI).toPath)

  private def refused(t: ImageTransform, data: Array[Byte]): String =
    intercept[ImageException](applyTo(t, data)).getMessage

  /** The bytes the refusal of `data` under a 1-byte limit says its decode needs. */
  private def needs(t: ImageTransform, data: Array[Byte], vector: Boolean): Long = {
    val m = intercept[ImageException](applyWith(t.withMaxDecodeBytes(1), data, vector)).getMessage
    """needs (\d+) bytes""".r.findFirstMatchIn(m).getOrElse(fail(m)).group(1).toLong
  }

  private val crafted = Seq(
    "BMP" -> CraftedHeaders.bmp(100000, 60000),
    "PNM" -> CraftedHeaders.pnm(100000, 60000),
    "TIFF" -> CraftedHeaders.tiff(100000, 60000),
    "WebP" -> CraftedHeaders.webp(100000, 40000),
    "GIF" -> CraftedHeaders.gif(60000, 60000))

  test("maxPixels refuses each format's huge header before anything is decoded") {
    DecodeScratch.discard()
    applyWith(t16, format("bmp-rgb.bmp"), vector = false) // the thread's buffers: a 37x23 decode
    val scratch = DecodeScratch.current()
    val decoded = scratch.decoded()
    val pixels = scratch.bytes(DecodeScratch.Slot.PIXELS, 0)
    assert((decoded.cols(), decoded.rows(), pixels.length) == (37, 23, 37 * 23 * 3))
    val limited = t16.withMaxPixels(1000000L)
    for ((name, data) <- crafted; t <- Seq(limited, t16); vector <- paths) {
      val info = ImageInfo.probe(data, 0, data.length)
      val m = intercept[ImageException](applyWith(t, data, vector)).getMessage
      assert(m == s"Image too large: ${info.width()}x${info.height()} = ${info.pixels()} pixels " +
        s"(maxPixels ${t.maxPixels()})", name)
    }
    assert(DecodeScratch.current() eq scratch)
    assert(scratch.decoded() eq decoded)
    assert((decoded.cols(), decoded.rows()) == (37, 23), "the decoder's output was resized")
    assert(scratch.bytes(DecodeScratch.Slot.PIXELS, 0) eq pixels, "the pixel copy grew")
  }

  test("data too short for what the header declares is refused from the headers") {
    val bmp = format("bmp-rgb.bmp")
    val taller = bmp.clone()
    ByteBuffer.wrap(taller).order(ByteOrder.LITTLE_ENDIAN).putInt(22, 230) // 23 rows -> 230
    assert(refused(t16, taller) == "Truncated BMP: header declares 37x230 (25760 bytes of pixels"
      + s" from byte 54) but the data ends at byte ${bmp.length}")
    val ppm = format("pnm-p6.ppm")
    assert(refused(t16, ppm.dropRight(1)) == "Truncated PNM: header declares 37x23 (at least 2553"
      + " bytes of samples) but only 2552 bytes follow it")
    assert(refused(t16, "P3 37 23 255 1 2 3".getBytes).startsWith("Truncated PNM: header declares"
      + " 37x23 (at least 5105 bytes of samples)"))
    val tiff = format("tiff-be-rgb.tif") // its strip is the last thing in the file
    assert(refused(t16, tiff.dropRight(10)) == "Truncated TIFF: strip 0 (2553 bytes at byte "
      + s"${tiff.length - 2553}) runs past the end of its ${tiff.length - 10} bytes")
    val webp = format("webp-lossy.webp")
    assert(refused(t16, webp.dropRight(3)) == s"Truncated WebP: its RIFF header declares " +
      s"${webp.length} bytes but only ${webp.length - 3} are present")
    assert(refused(t16, CraftedHeaders.gif(5000, 5000)) == "Corrupt GIF: header declares its first"
      + " image 5000x5000 (at least 2289 bytes of LZW data) but only 0 bytes follow")
    // a TIFF strip OpenCV would read line by line, ignoring the orientation
    assert(refused(t16.withMaxPixels(1L << 40), CraftedHeaders.tiff(20000, 20000)) ==
      "Unsupported TIFF: strips of 20000x20000 pixels (OpenCV decodes a strip of 1 GiB or more"
      + " line by line, which ignores the orientation)")
  }

  test("maxDecodeBytes counts each format's decoder buffers, one verdict on either path") {
    val files = Seq("bmp-rgb.bmp", "bmp-16-565-fields.bmp", "bmp-rle8.bmp", "pnm-p6.ppm",
      "pnm-p6-16.ppm", "pnm-p3-max100.ppm", "tiff-strips5.tif", "tiff-rgb16.tif",
      "tiff-rgb-jpeg.tif", "tiff-orientation6.tif", "tiff-tiled.tif", "webp-lossy.webp",
      "webp-lossless-alpha.webp", "webp-animated.webp", "gif-transparent3.gif", "gif-partial.gif",
      "png-exif6.png")
    val specs = Seq("resize(16),center_crop(16)", "random_resized_crop(12),hflip",
      "resize(64),center_crop(40,60)")
    for (name <- files; spec <- specs) withClue(s"$name, $spec: ") {
      val data = format(name)
      val t = ImageTransform.parse(spec)
      val n = needs(t, data, vector = false)
      assert(needs(t, data, vector = true) == n)
      assert(n > 37 * 23 * 3 + data.length, "at least the encoded bytes and the decoded RGB")
      for (vector <- Seq(false, true)) {
        assert(applyWith(t.withMaxDecodeBytes(n), data, vector).length == t.outputBytes())
        assert(intercept[ImageException](applyWith(t.withMaxDecodeBytes(n - 1), data, vector))
          .getMessage.contains(s"needs $n bytes"))
      }
    }
    // a 16-bit PPM costs OpenCV's 16-bit output (3 more bytes a pixel) and the 8-bit copy (3)
    val ppm8 = format("pnm-p6.ppm")
    val ppm16 = format("pnm-p6-16.ppm")
    assert(needs(t16, ppm16, vector = false) - needs(t16, ppm8, vector = false) ==
      6L * 37 * 23 + ppm16.length - ppm8.length)
    // a GIF's canvases (8 bytes a pixel), codes and disposal copy (5) and LZW table: over 8 MB
    assert(needs(t16, format("gif-256.gif"), vector = false) > (8L << 20))
  }

  test("a conversion reads only its image's bytes from a thread's reused, larger buffers") {
    // found by the decode-opencv fuzz target's seeds: a 16-bit PPM after a larger image read past
    // its own samples into the rest of the thread's conversion buffer
    val small = Seq("pnm-p6-16.ppm", "tiff-rgb16.tif", "gif-transparent3.gif", "gif-partial.gif")
    val t = ImageTransform.parse("center_crop(40)")
    val fresh = small.map(n => applyWith(t, format(n), vector = false))
    val large = new Array[Byte](3 * 2 * 300 * 200)
    new scala.util.Random(5).nextBytes(large)
    val ppm = "P6\n300 200\n65535\n".getBytes ++ large
    for (vector <- paths) {
      applyWith(ImageTransform.resizeCenterCrop(16), ppm, vector) // grows this thread's buffers
      for ((name, expected) <- small.zip(fresh))
        assert(java.util.Arrays.equals(applyWith(t, format(name), vector), expected), name)
    }
  }

  /** Offset of the value of `tag`'s entry in a little-endian TIFF's first IFD. */
  private def tiffValue(tiff: Array[Byte], tag: Int): Int = {
    val b = ByteBuffer.wrap(tiff).order(ByteOrder.LITTLE_ENDIAN)
    val ifd = b.getInt(4)
    (0 until b.getShort(ifd)).map(i => ifd + 2 + 12 * i).find(e => b.getShort(e) == tag)
      .getOrElse(fail(s"no tag $tag")) + 8
  }

  test("a TIFF strip libtiff cannot decode is refused, not passed over by OpenCV's reader") {
    // OpenCV reads 8-bit TIFFs through libtiff's RGBA interface with stop_on_error off: a corrupt
    // strip would come out as whatever its buffer held, where Pillow refuses the file
    def garbled(name: String, from: Int, to: Int): Array[Byte] = {
      val d = format(name).clone()
      for (i <- from until to) d(i) = (i * 131 + 7).toByte
      d
    }
    val packBits = format("tiff-rgb-packbits.tif").clone() // Pillow: its strip at byte 8
    val count = tiffValue(packBits, 279)
    val b = ByteBuffer.wrap(packBits).order(ByteOrder.LITTLE_ENDIAN)
    b.putInt(count, b.getInt(count) / 2)
    val raw = CraftedHeaders.tiff(10, 10) ++ Array.fill[Byte](360)(7) // its strip: 300 at 200
    ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).putInt(tiffValue(raw, 279), 250)
    val cases = Seq(
      garbled("tiff-rgb-lzw.tif", 20, 200) -> ("Corrupt TIFF: strip 0 LZW code 466 not yet in"
        + " its table (271 entries)"),
      garbled("tiff-rgb-adobe_deflate.tif", 20, 40) -> "Corrupt TIFF: strip 0 Deflate data: ",
      packBits -> "Corrupt TIFF: strip 0 PackBits data for ",
      raw -> "Corrupt TIFF: strip 0 holds 250 of its 300 bytes")
    for (((data, prefix), i) <- cases.zipWithIndex; vector <- paths) withClue(s"case $i: ") {
      val m = intercept[ImageException](applyWith(t16, data, vector)).getMessage
      assert(m.startsWith(prefix), m)
    }
    for (name <- Seq("tiff-rgb-lzw.tif", "tiff-rgb-adobe_deflate.tif", "tiff-rgb-packbits.tif",
        "tiff-l-lzw.tif", "tiff-strips5.tif", "tiff-planar.tif", "tiff-tiled.tif"))
      assert(applyTo(t16, format(name)).length == 768, name)
  }

  test("data the decoder cannot read is quarantined naming the format") {
    def garbled(name: String, from: Int, to: Int): Array[Byte] = {
      val d = format(name).clone()
      for (i <- from until math.min(to, d.length)) d(i) = (i * 131 + 7).toByte
      d
    }
    val gif = format("gif-64.gif")
    val webp = format("webp-lossy.webp").clone()
    webp(20) = 0xf0.toByte; webp(21) = 0xff.toByte; webp(22) = 0xff.toByte // partition 0: 512 KiB
    val cases = Seq(
      garbled("gif-64.gif", gif.length - 300, gif.length - 100) -> "Cannot decode GIF",
      webp -> "Cannot decode WEBP")
    for (((data, prefix), i) <- cases.zipWithIndex) withClue(s"case $i: ") {
      val m = refused(t16, data)
      assert(m.startsWith(prefix), m)
    }
  }
}
