package dev.spindle.spark.image

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

class ImageInfoSuite extends AnyFunSuite {

  private def probe(data: Array[Byte]): ImageInfo = ImageInfo.probe(data, 0, data.length)

  private def refused(data: Array[Byte]): String =
    intercept[ImageException](probe(data)).getMessage

  test("probe reads format, size and channels of JPEG and PNG headers") {
    assert(probe(resource("noise_rgb.jpg")) == new ImageInfo(ImageFormat.JPEG, 120, 80, 3))
    assert(probe(resource("noise_prog.jpg")) == new ImageInfo(ImageFormat.JPEG, 88, 131, 3))
    assert(probe(resource("gray.jpg")) == new ImageInfo(ImageFormat.JPEG, 50, 70, 1))
    assert(probe(resource("gradient_rgb.png")) == new ImageInfo(ImageFormat.PNG, 97, 61, 3))
    assert(probe(resource("gray.png")) == new ImageInfo(ImageFormat.PNG, 50, 70, 1))
    assert(probe(resource("gray_alpha.png")) == new ImageInfo(ImageFormat.PNG, 50, 70, 2))
    assert(probe(resource("rgba.png")) == new ImageInfo(ImageFormat.PNG, 77, 40, 4))
    assert(probe(resource("palette.png")) == new ImageInfo(ImageFormat.PNG, 60, 45, 3))
    assert(probe(resource("one_pixel.png")) == new ImageInfo(ImageFormat.PNG, 1, 1, 3))
  }

  test("probe honours offset and length inside a larger array") {
    val jpeg = resource("gray.jpg")
    val padded = Array.fill[Byte](7)(0x55) ++ jpeg ++ Array.fill[Byte](5)(0x55)
    assert(ImageInfo.probe(padded, 7, jpeg.length).width() == 50)
  }

  test("probe reads a crafted header declaring a huge image without allocating it") {
    val info = probe(CraftedHeaders.png(100000, 100000))
    assert(info == new ImageInfo(ImageFormat.PNG, 100000, 100000, 3))
    assert(info.pixels() == 10000000000L)
    assert(probe(CraftedHeaders.jpeg(65500, 65000)).pixels() == 65500L * 65000L)
  }

  test("probe refuses empty input, unknown formats and garbage") {
    assert(refused(Array.emptyByteArray).contains("Empty"))
    assert(refused(Array[Byte](0, 0, 1, 0, 1, 0)).contains("Unknown image format: first bytes "
      + "000001000100")) // an icon
    assert(refused("RIFF....WAVE".getBytes).contains("Unknown image format"))
    assert(refused(Array[Byte](0xff.toByte, 0xd8.toByte, 0x12, 0x34)).contains("Garbled JPEG"))
  }

  test("probe refuses truncated headers") {
    val jpeg = resource("noise_rgb.jpg")
    assert(refused(jpeg.take(2)).contains("Truncated JPEG header"))
    assert(refused(jpeg.take(40)).contains("Truncated JPEG header"))
    val png = resource("gray.png")
    assert(refused(png.take(20)).contains("Truncated PNG header"))
  }

  test("probe refuses zero dimensions and invalid PNG colour types") {
    assert(refused(CraftedHeaders.png(0, 10)).contains("Invalid PNG size: 0x10"))
    assert(refused(CraftedHeaders.jpeg(10, 0)).contains("Invalid JPEG size: 10x0"))
    assert(refused(CraftedHeaders.png(4, 4, depth = 3)).contains("colour type 2 with bit depth 3"))
  }

  test("probe rejects an invalid range with the bad values named") {
    val e = intercept[IllegalArgumentException](ImageInfo.probe(new Array[Byte](4), 2, 3))
    assert(e.getMessage.contains("offset 2, length 3 in 4 bytes"))
  }

  private def format(name: String): Array[Byte] =
    java.nio.file.Files.readAllBytes(
      new java.io.File(getClass.getResource("/formats/" + name).toURI).toPath)

  test("probe reads format, size and channels of BMP, PNM, TIFF, WebP and GIF headers") {
    val expected = Seq(
      "bmp-rgb.bmp" -> new ImageInfo(ImageFormat.BMP, 37, 23, 3),
      "bmp-24-core.bmp" -> new ImageInfo(ImageFormat.BMP, 37, 23, 3),
      "bmp-24-topdown.bmp" -> new ImageInfo(ImageFormat.BMP, 37, 23, 3),
      "bmp-32-bgra-h124.bmp" -> new ImageInfo(ImageFormat.BMP, 37, 23, 4),
      "bmp-rle4.bmp" -> new ImageInfo(ImageFormat.BMP, 37, 23, 3),
      "bmp-16-565-ramp.bmp" -> new ImageInfo(ImageFormat.BMP, 32, 32, 3),
      "pnm-p1.pbm" -> new ImageInfo(ImageFormat.PNM, 37, 23, 1),
      "pnm-p5.pgm" -> new ImageInfo(ImageFormat.PNM, 37, 23, 1),
      "pnm-p6-comment.ppm" -> new ImageInfo(ImageFormat.PNM, 37, 23, 3),
      "pnm-p6-16.ppm" -> new ImageInfo(ImageFormat.PNM, 37, 23, 3),
      "tiff-rgb-lzw.tif" -> new ImageInfo(ImageFormat.TIFF, 37, 23, 3),
      "tiff-be-rgb.tif" -> new ImageInfo(ImageFormat.TIFF, 37, 23, 3),
      "tiff-la.tif" -> new ImageInfo(ImageFormat.TIFF, 37, 23, 2),
      "tiff-cmyk.tif" -> new ImageInfo(ImageFormat.TIFF, 37, 23, 4),
      "tiff-orientation6.tif" -> new ImageInfo(ImageFormat.TIFF, 37, 23, 3), // as stored
      "tiff-tiled.tif" -> new ImageInfo(ImageFormat.TIFF, 37, 23, 3),
      "webp-lossy.webp" -> new ImageInfo(ImageFormat.WEBP, 37, 23, 3),
      "webp-lossless.webp" -> new ImageInfo(ImageFormat.WEBP, 37, 23, 3),
      "webp-lossy-alpha.webp" -> new ImageInfo(ImageFormat.WEBP, 37, 23, 4),
      "webp-animated.webp" -> new ImageInfo(ImageFormat.WEBP, 37, 23, 4), // Pillow flags alpha
      "gif-256.gif" -> new ImageInfo(ImageFormat.GIF, 37, 23, 3),
      "gif-partial.gif" -> new ImageInfo(ImageFormat.GIF, 37, 23, 3))
    for ((name, info) <- expected) assert(probe(format(name)) == info, name)
    val turned = DecodeCost.of(probe(format("tiff-orientation6.tif")), format(
      "tiff-orientation6.tif"), 0, format("tiff-orientation6.tif").length)
    assert((turned.decodedWidth(), turned.decodedHeight()) == (23, 37), "libtiff turns it")
  }

  test("probe reads crafted headers of each format declaring huge images without allocating") {
    assert(probe(CraftedHeaders.bmp(100000, -60000)) == new ImageInfo(ImageFormat.BMP, 100000,
      60000, 3))
    assert(probe(CraftedHeaders.pnm(2000000000L, 3)).pixels() == 6000000000L)
    assert(probe(CraftedHeaders.tiff(2000000000L, 6)).pixels() == 12000000000L)
    assert(probe(CraftedHeaders.webp(16777216, 255)).pixels() == 16777216L * 255)
    assert(probe(CraftedHeaders.gif(65535, 65535)) == new ImageInfo(ImageFormat.GIF, 65535, 65535,
      3))
  }

  test("probe refuses truncated headers of each format, naming the format") {
    val cases = Seq(
      format("bmp-rgb.bmp").take(10) -> "Truncated BMP header: 10 bytes",
      format("bmp-rgb.bmp").take(40) -> "Truncated BMP header: 40 bytes",
      format("pnm-p6.ppm").take(3) -> "Truncated PNM header: the data ends in its width",
      format("pnm-p6-comment.ppm").take(24) -> "Truncated PNM header: the data ends in its height",
      format("tiff-rgb.tif").take(6) -> "Truncated TIFF header: 6 bytes",
      CraftedHeaders.tiff(10, 10).take(60) -> ("Truncated TIFF header: the 10 entries of its first"
        + " IFD run past the end of its 60 bytes"),
      CraftedHeaders.tiff(10, 10).take(135) -> ("Truncated TIFF header: tag 258's values at byte "
        + "134 run past the end"),
      format("webp-lossy.webp").take(18) -> "Truncated WebP header: no chunk in 18 bytes",
      CraftedHeaders.webp(10, 10).take(25) -> "Truncated WebP header: VP8X chunk of 5 bytes",
      format("gif-256.gif").take(12) -> "Truncated GIF header: 12 bytes",
      format("gif-256.gif").take(300) -> ("Truncated GIF header: the data ends before its global"
        + " colour table"),
      CraftedHeaders.gif(5, 5).take(25) -> ("Truncated GIF header: the data ends before its image"
        + " descriptor"))
    for ((data, message) <- cases) assert(refused(data) == message)
  }

  test("probe refuses garbled headers of each format, naming what is wrong") {
    val bmp = CraftedHeaders.bmp(10, 10)
    def bmpWith(at: Int, value: Int, bytes: Int) = {
      val b = bmp.clone()
      for (i <- 0 until bytes) b(at + i) = (value >> (8 * i)).toByte
      b
    }
    val tiff = CraftedHeaders.tiff(10, 10)
    val badIfd = tiff.clone()
    badIfd(4) = 200.toByte
    val webp = CraftedHeaders.webp(10, 10)
    val cases = Seq(
      bmpWith(14, 7, 4) -> "Unsupported BMP header size 7 (Pillow reads 12, 40, 64, 108 and 124",
      bmpWith(28, 3, 2) -> "Unsupported BMP bit depth 3",
      bmpWith(30, 1, 4) -> "Garbled BMP header: RLE8 with 24 bits a pixel",
      bmpWith(30, 4, 4) -> "Unsupported BMP: its pixels are an embedded JPEG",
      bmpWith(10, 20, 4) -> "Garbled BMP header: pixel data at byte 20, inside its headers",
      "P6\n37 x\n".getBytes -> "Garbled PNM header: byte 0x78 where its height should be",
      "P5 37 23 255x".getBytes -> "Garbled PNM header: byte 0x78 after its maximum value",
      "P5 37 23 70000\n".getBytes -> "Invalid PNM maximum value 70000 (1 to 65535)",
      badIfd -> "Garbled TIFF header: its first IFD at byte 200 of 140",
      "II+\u0000\u0008\u0000\u0000\u0000".getBytes -> "Unsupported TIFF: BigTIFF is not decoded",
      webp.updated(12, 'J'.toByte) -> "Garbled WebP header: first chunk 'JP8X'",
      "RIFF\u0016\u0000\u0000\u0000WEBPVP8 \u000a\u0000\u0000\u0000\u0001\u0000\u0000xxxxxxx"
        .getBytes -> "Garbled WebP header: its VP8 data does not start a key frame",
      CraftedHeaders.gif(5, 5).updated(19, 0x99.toByte) -> ("Garbled GIF header: block 0x99 at"
        + " byte 19"),
      CraftedHeaders.gif(5, 5).updated(29, 12.toByte) -> ("Garbled GIF: minimum LZW code size 12"
        + " (2 to 8)"),
      CraftedHeaders.gif(5, 5).updated(11, 7.toByte) -> ("Garbled GIF header: background colour 7"
        + " outside its 2-colour table"))
    for ((data, message) <- cases) {
      val got = refused(data)
      assert(got.startsWith(message), s"$got (expected: $message)")
    }
  }

  test("probe refuses zero sizes of each format") {
    assert(refused(CraftedHeaders.bmp(0, 10)) == "Invalid BMP size: 0x10")
    assert(refused(CraftedHeaders.bmp(10, 0)) == "Invalid BMP size: 10x0")
    assert(refused(CraftedHeaders.pnm(0, 10)) == "Invalid PNM size: 0x10")
    assert(refused(CraftedHeaders.tiff(10, 0)) == "Invalid TIFF size: 10x0")
    assert(refused(CraftedHeaders.gif(0, 10)) == "Invalid GIF size: 0x10")
    val vp8 = format("webp-lossy.webp").clone()
    val at = vp8.indexOfSlice(Array(0x9d, 0x01, 0x2a).map(_.toByte)) + 3
    vp8(at) = 0; vp8(at + 1) = 0
    assert(refused(vp8) == "Invalid WebP size: 0x23")
  }

  test("sniff names each format by its magic number, never by its name") {
    val magic = Seq(
      "BM" -> ImageFormat.BMP, "P1 " -> ImageFormat.PNM, "P6\n" -> ImageFormat.PNM,
      "II*\u0000" -> ImageFormat.TIFF, "MM\u0000*" -> ImageFormat.TIFF,
      "RIFF\u0000\u0000\u0000\u0000WEBP" -> ImageFormat.WEBP, "GIF87a" -> ImageFormat.GIF,
      "GIF89a" -> ImageFormat.GIF)
    for ((m, f) <- magic) assert(ImageFormat.sniff(m.getBytes, 0, m.length) == f, m)
    for (m <- Seq("P7 ", "P6x", "GIF88a", "RIFF\u0000\u0000\u0000\u0000WAVE", "II*\u0001", "B"))
      assert(ImageFormat.sniff(m.getBytes, 0, m.length) == null, m)
  }
}
