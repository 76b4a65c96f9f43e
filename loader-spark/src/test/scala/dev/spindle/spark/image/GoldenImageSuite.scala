package dev.spindle.spark.image

import java.nio.{ByteBuffer, ByteOrder}

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * Compares Spindle with outputs that Pillow + torchvision produced for small synthetic images
 * (src/test/python/make_golden.py wrote them; see golden.tsv). Reduced decode (off by default)
 * stays off here: these cases pin down bit-exactness; ReducedDecodeSuite covers it.
 */
class GoldenImageSuite extends AnyFunSuite {

  private def transform(g: Golden): ImageTransform =
    ImageTransform.parse(g.spec).withOutput(g.output).withExifOrientation(g.exif)
      .withReducedDecode(false)

  private def maxDifference(g: Golden, a: Array[Byte], b: Array[Byte]): Double = g.output match {
    case OutputMode.UINT8_HWC | OutputMode.UINT8_CHW =>
      a.indices.map(i => math.abs((a(i) & 0xff) - (b(i) & 0xff))).max.toDouble
    case OutputMode.FLOAT32_CHW =>
      val fa = floats(a); val fb = floats(b)
      fa.indices.map(i => math.abs(fa(i) - fb(i)).toDouble).max
    case _ => if (java.util.Arrays.equals(a, b)) 0.0 else Double.PositiveInfinity
  }

  private def floats(b: Array[Byte]): Array[Float] = {
    val f = new Array[Float](b.length / 4)
    ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f)
    f
  }

  private val all = goldens

  test("the golden set covers every format, operation and output mode") {
    assert(all.size >= 50)
    assert(all.map(_.image).distinct.size >= 20)
    assert(all.map(_.output).toSet == OutputMode.values().toSet)
    for (op <- Seq("resize(", "center_crop(", "crop(", "hflip(1)", "normalize", "bicubic", "box"))
      assert(all.exists(_.spec.contains(op)), op)
  }

  for (g <- all) {
    val exactness = if (g.maxDifference == 0) "byte for byte" else s"within ${g.maxDifference}"
    test(s"${g.image} ${g.spec} -> ${g.output.specName()}${if (g.exif) " (EXIF)" else ""} " +
      s"matches torchvision $exactness") {
      val t = transform(g)
      val expected = resource(g.reference)
      for (path <- decodePaths) {
        val actual = applyWith(t, resource(g.image), path)
        assert(actual.length == expected.length, s"${t.height()}x${t.width()}")
        if (g.maxDifference == 0) {
          assert(java.util.Arrays.equals(actual, expected),
            s"differs from torchvision ($path): " +
              firstDifference(actual, expected))
        } else {
          val d = maxDifference(g, actual, expected)
          assert(d <= g.maxDifference, s"max difference $d ($path)")
        }
      }
    }
  }
}
