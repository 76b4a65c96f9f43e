package dev.spindle.spark.config

import scala.jdk.CollectionConverters._

import dev.spindle.spark.image.{ImageTransform, OutputMode}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spark.spindle.image.*` keys live in the one registry ([[SpindleConfig]]) and describe the
 * image transform ([[SpindleConfig.imageTransform]]); moved here from `image.ImageConfigSuite`
 * when that second registry was folded in.
 */
class ImageKeysSuite extends AnyFunSuite {
  private def from(m: Map[String, String]): ImageTransform = SpindleConfig.imageTransform(m.asJava)

  test("defaults give resize + center_crop to spark.spindle.image.size (224) as uint8 HWC") {
    val t = from(Map.empty)
    assert(t.spec() == "resize(224),center_crop(224)")
    assert(t.outputMode() == OutputMode.UINT8_HWC && t.outputBytes() == 224L * 224 * 3)
    assert(t.maxPixels() == ImageTransform.DEFAULT_MAX_PIXELS)
    assert(t.maxDecodeBytes() == ImageTransform.DEFAULT_MAX_DECODE_BYTES)
    assert(t.toString.contains("exifOrientation=true, reducedDecode=false"))
  }

  test("every key is applied") {
    val t = from(Map(
      SpindleConfig.IMAGE_TRANSFORMS.key -> "random_resized_crop(64),hflip,normalize",
      SpindleConfig.IMAGE_OUTPUT.key -> "float16-chw",
      SpindleConfig.IMAGE_MAX_PIXELS.key -> "1000",
      SpindleConfig.IMAGE_MAX_DECODE_BYTES.key -> "5000",
      SpindleConfig.IMAGE_EXIF_ORIENTATION.key -> "false",
      SpindleConfig.IMAGE_REDUCED_DECODE.key -> "true",
      SpindleConfig.IMAGE_SEED.key -> "99"))
    assert(t.outputMode() == OutputMode.FLOAT16_CHW && t.height() == 64)
    assert(t.maxPixels() == 1000L && t.maxDecodeBytes() == 5000L)
    assert(t.toString.contains("seed=99") && t.toString.contains("exifOrientation=false"))
    assert(t.toString.contains("reducedDecode=true"))
    assert(from(Map(SpindleConfig.IMAGE_SIZE.key -> "32")).spec() == "resize(32),center_crop(32)")
  }

  test("keys are documented with defaults, in the one registry") {
    val keys = SpindleConfig.keys().asScala.filter(_.key.startsWith("spark.spindle.image."))
    assert(keys.map(_.key).toSet == Set("size", "transforms", "output", "maxPixels", "maxDecodeBytes",
      "exifOrientation", "reducedDecode", "seed").map("spark.spindle.image." + _))
    keys.foreach { k =>
      assert(k.doc().nonEmpty && k.defaultValue().nonEmpty, k.key)
      assert(SpindleConfig.key(k.key) eq k)
    }
  }

  test("bad values name their key") {
    val e = intercept[IllegalArgumentException](
      from(Map(SpindleConfig.IMAGE_EXIF_ORIENTATION.key -> "yes")))
    assert(e.getMessage == "Invalid value for spark.spindle.image.exifOrientation: 'yes' (must be true or false)")
    assert(intercept[IllegalArgumentException](from(Map(SpindleConfig.IMAGE_OUTPUT.key -> "rgb")))
      .getMessage.contains("Invalid image output: 'rgb'"))
    assert(intercept[IllegalArgumentException](from(Map(SpindleConfig.IMAGE_MAX_PIXELS.key -> "lots")))
      .getMessage.contains(SpindleConfig.IMAGE_MAX_PIXELS.key))
    assert(intercept[IllegalArgumentException](from(Map(SpindleConfig.IMAGE_MAX_DECODE_BYTES.key -> "1 GB")))
      .getMessage.contains(SpindleConfig.IMAGE_MAX_DECODE_BYTES.key))
  }
}
