package dev.spindle.spark.image

import org.apache.arrow.memory.util.Float16
import org.scalatest.funsuite.AnyFunSuite

class TransformSpecSuite extends AnyFunSuite {

  private def error(spec: String): String =
    intercept[IllegalArgumentException](ImageTransform.parse(spec)).getMessage

  test("a spec parses into operations in the declared order") {
    val ops = TransformSpec.parse(
      "resize(256, filter=bicubic), center_crop(224), hflip, crop(1,2,3,4), normalize")
    assert(ops.size == 5)
    assert(ops.get(0) == new ImageOp.Resize(256, 256, true, ResampleFilter.BICUBIC))
    assert(ops.get(1) == new ImageOp.CenterCrop(224, 224))
    assert(ops.get(2) == new ImageOp.HorizontalFlip(0.5))
    assert(ops.get(3) == new ImageOp.Crop(1, 2, 3, 4))
    assert(ops.get(4) == new ImageOp.Normalize(ImageOp.Normalize.IMAGENET_MEAN,
      ImageOp.Normalize.IMAGENET_STD))
  }

  test("random_resized_crop takes torchvision's defaults and explicit ranges and fractions") {
    assert(TransformSpec.parse("random_resized_crop(224)").get(0) ==
      new ImageOp.RandomResizedCrop(224, 224, 0.08, 1.0, 0.75, 4.0 / 3.0, ResampleFilter.BILINEAR))
    assert(TransformSpec.parse("random_resized_crop(100,200,scale=0.5:0.9,ratio=1/2:2)").get(0) ==
      new ImageOp.RandomResizedCrop(100, 200, 0.5, 0.9, 0.5, 2.0, ResampleFilter.BILINEAR))
  }

  test("output size and mode follow the chain") {
    val t = ImageTransform.parse("resize(256),center_crop(224),normalize")
    assert(t.outputMode() == OutputMode.FLOAT32_CHW)
    assert((t.height(), t.width(), t.outputBytes()) == (224, 224, 224L * 224 * 3 * 4))
    val u = ImageTransform.parse("random_resized_crop(100, 160), hflip")
    assert(u.outputMode() == OutputMode.UINT8_HWC && (u.height(), u.width()) == (100, 160))
    assert(u.withOutput(OutputMode.FLOAT16_CHW).outputBytes() == 100L * 160 * 3 * 2)
    assert(ImageTransform.parse("resize(20, 30)").width() == 30)
  }

  test("bad specs are refused naming the operation and the problem") {
    assert(error("") == "Invalid image transforms: empty")
    assert(error("resize(256)").contains("the output size depends on the input"))
    assert(error("rotate(90)").contains("unknown operation 'rotate'"))
    assert(error("resize(0),center_crop(4)") ==
      "Invalid image transform 'resize(0)': Invalid resize size: 0 (must be 1..16384)")
    assert(error("resize(abc),center_crop(4)").contains("not an integer: 'abc'"))
    assert(error("resize(8,filter=lanczos),center_crop(4)").contains("unknown filter 'lanczos'"))
    assert(error("normalize,center_crop(4)").contains("normalize must be the last operation"))
    assert(error("center_crop(4),hflip(2)").contains("Invalid hflip probability: 2.0"))
    assert(error("random_resized_crop(8,scale=0.5:0.1)").contains("Invalid random_resized_crop scale"))
    assert(error("center_crop(4,4,4)").contains("takes 1 to 2 values, got 3"))
    assert(error("center_crop(4").contains("unbalanced '('"))
    assert(error("center_crop(4),normalize(std=1:0:1)").contains("Invalid normalize std"))
    assert(intercept[IllegalArgumentException](
      ImageTransform.parse("center_crop(4),normalize").withOutput(OutputMode.UINT8_HWC))
      .getMessage.contains("normalize needs float32-chw or float16-chw"))
  }

  test("output modes parse by their spec names") {
    for (m <- OutputMode.values()) assert(OutputMode.parse(m.specName()) == m)
    assert(intercept[IllegalArgumentException](OutputMode.parse("rgb")).getMessage.contains("'rgb'"))
  }

  test("half-precision conversion rounds to nearest even like numpy") {
    val cases = Seq(1.0f -> 0x3c00, -2.0f -> 0xc000, 0.1f -> 0x2e66, 65504f -> 0x7bff,
      65520f -> 0x7c00, 5.9604645e-8f -> 0x0001, 2.9802322e-8f -> 0x0000, 0f -> 0,
      Float.PositiveInfinity -> 0x7c00, 1.0009766f -> 0x3c01, 1.00048828125f -> 0x3c00)
    for ((f, h) <- cases) assert((Float16.toFloat16(f) & 0xffff) == h, s"$f")
  }
}
