package dev.spindle.spark.image

import org.scalatest.funsuite.AnyFunSuite

class ImageConfigSuite extends AnyFunSuite {
  private def from(m: Map[String, String]): ImageTransform = ImageConfig.transform(k => m.getOrElse(k, null))

  test("defaults give resize(256) + center_crop(224) as uint8 HWC") {
    val t = from(Map.empty)
    assert(t.spec() == "resize(256),center_crop(224)")
    assert(t.outputMode() == OutputMode.UINT8_HWC && t.outputBytes() == 224L * 224 * 3)
    assert(t.maxPixels() == ImageTransform.DEFAULT_MAX_PIXELS)
    assert(t.maxDecodeBytes() == ImageTransform.DEFAULT_MAX_DECODE_BYTES)
    assert(t.toString.contains("exifOrientation=true, reducedDecode=false"))
  }

  test("every key is applied") {
    val t = from(Map(
      ImageConfig.TRANSFORMS -> "random_resized_crop(64),hflip,normalize",
      ImageConfig.OUTPUT -> "float16-chw",
      ImageConfig.MAX_PIXELS -> "1000",
      ImageConfig.MAX_DECODE_BYTES -> "5000",
      ImageConfig.EXIF_ORIENTATION -> "false",
      ImageConfig.REDUCED_DECODE -> "TRUE",
      ImageConfig.SEED -> "99"))
    assert(t.outputMode() == OutputMode.FLOAT16_CHW && t.height() == 64)
    assert(t.maxPixels() == 1000L && t.maxDecodeBytes() == 5000L)
    assert(t.toString.contains("seed=99") && t.toString.contains("exifOrientation=false"))
    assert(t.toString.contains("reducedDecode=true"))
  }

  test("keys are documented with defaults and flags") {
    val keys = ImageConfig.keys()
    assert(keys.size() == 7)
    keys.values().forEach { k =>
      assert(k.name().startsWith("spark.spindle.image.") && k.flag().startsWith("--"))
      assert(k.doc().nonEmpty && k.defaultValue().nonEmpty)
    }
  }

  test("bad values name their key") {
    val e = intercept[IllegalArgumentException](from(Map(ImageConfig.EXIF_ORIENTATION -> "yes")))
    assert(e.getMessage == "Invalid spark.spindle.image.exifOrientation: 'yes' (true or false)")
    assert(intercept[IllegalArgumentException](from(Map(ImageConfig.OUTPUT -> "rgb")))
      .getMessage.contains("Invalid image output: 'rgb'"))
    assert(intercept[IllegalArgumentException](from(Map(ImageConfig.MAX_PIXELS -> "lots")))
      .getMessage.contains(ImageConfig.MAX_PIXELS))
    assert(intercept[IllegalArgumentException](from(Map(ImageConfig.MAX_DECODE_BYTES -> "1 GB")))
      .getMessage.contains(ImageConfig.MAX_DECODE_BYTES))
  }
}
