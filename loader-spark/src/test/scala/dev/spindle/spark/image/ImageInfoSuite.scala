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
    assert(refused("GIF89a....".getBytes).contains("Unknown image format: first bytes 4749463839"))
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
}
