package dev.spindle.spark.image

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

class ReducedDecodeSuite extends AnyFunSuite {

  private def plan(spec: String, w: Int, h: Int): Stage =
    StagePlanner.plan(TransformSpec.parse(spec), w, h, SampleRandom.of(0, 0, 0)).get(0)

  test("the reduced scale is the largest that keeps at least the target resolution") {
    assert(ReducedDecode.scale(plan("resize(256),center_crop(224)", 640, 408)) == 1)
    assert(ReducedDecode.scale(plan("resize(256),center_crop(224)", 1024, 512)) == 2)
    assert(ReducedDecode.scale(plan("resize(256),center_crop(224)", 4000, 3000)) == 8)
    assert(ReducedDecode.scale(plan("resize(256),center_crop(224)", 1100, 1023)) == 2)
    assert(ReducedDecode.scale(plan("crop(0,0,1000,1000),resize(240,240)", 4000, 3000)) == 4)
    assert(ReducedDecode.scale(plan("center_crop(100)", 4000, 3000)) == 1)
  }

  test("a reduced decode stays close to the full decode, in colour") {
    // a smooth 1600 x 1200 photo-like JPEG: reduced decode must not change what the model sees
    val jpeg = encode("jpg", 1600, 1200) { (x, y) =>
      val r = (128 + 100 * math.sin(x / 90.0)).toInt
      val g = (128 + 100 * math.cos(y / 70.0)).toInt
      val b = ((x + y) / 12) & 0xff
      r << 16 | g << 8 | b
    }
    val t = ImageTransform.resizeCenterCrop(128)
    val reduced = applyTo(t.withReducedDecode(true), jpeg)
    val full = applyTo(t, jpeg)
    assert(ReducedDecode.scale(plan("resize(128),center_crop(128)", 1600, 1200)) == 8)
    val diffs = reduced.indices.map(i => math.abs((reduced(i) & 0xff) - (full(i) & 0xff)))
    val mean = diffs.sum.toDouble / diffs.size
    assert(!java.util.Arrays.equals(reduced, full), "the reduced path was not taken")
    assert(mean < 1.5, s"mean absolute difference $mean")
    assert(diffs.max <= 12, s"max difference ${diffs.max}")
    val pixels = reduced.grouped(3).toSeq
    assert(pixels.count(p => p(0) != p(1) || p(1) != p(2)) > pixels.size / 2, "lost colour")
  }

  test("EXIF orientation combines with reduced decode") {
    val t = ImageTransform.parse("resize(10,15)").withReducedDecode(true)
    for (o <- 1 to 8) {
      val jpeg = resource(s"exif$o.jpg") // 60 x 40 stored; 40 x 60 upright for 5..8
      assert(applyTo(t, jpeg).length == 450)
      assert(applyTo(t.withReducedDecode(false), jpeg).length == 450)
    }
  }
}
