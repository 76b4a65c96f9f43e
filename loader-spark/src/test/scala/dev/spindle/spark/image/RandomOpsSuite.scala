package dev.spindle.spark.image

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

class RandomOpsSuite extends AnyFunSuite {
  private val photo = resource("gradient_rgb.png") // 97 x 61
  private val rrc = new ImageOp.RandomResizedCrop(32, 32, 0.08, 1.0, 0.75, 4.0 / 3.0,
    ResampleFilter.BILINEAR)

  test("random_resized_crop is exactly crop(torchvision's sampled box) + resize") {
    val t = ImageTransform.parse("random_resized_crop(32)").withSeed(42).forEpoch(3)
      .withReducedDecode(false)
    for (index <- 0L until 20L) {
      val box = RandomResizedCropParams.sample(rrc, 97, 61, SampleRandom.of(42, 3, index))
      val explicit = ImageTransform.parse(
        s"crop(${box(0)},${box(1)},${box(2)},${box(3)}),resize(32,32)")
      assert(java.util.Arrays.equals(applyTo(t, photo, index), applyTo(explicit, photo, index)))
    }
  }

  test("random choices depend only on (seed, epoch, sample index)") {
    val t = ImageTransform.parse("random_resized_crop(24),hflip").withSeed(7)
    val a = (0L until 30L).map(i => applyTo(t, photo, i).toSeq)
    assert((0L until 30L).map(i => applyTo(t, photo, i).toSeq) == a)
    assert((0L until 30L).map(i => applyTo(t.forEpoch(1), photo, i).toSeq) != a)
    assert((0L until 30L).map(i => applyTo(t.withSeed(8), photo, i).toSeq) != a)
    assert(a.distinct.size > 25)
    val pool = Executors.newFixedThreadPool(6)
    try {
      val tasks = (0 until 6).map(w => new Callable[Seq[Seq[Byte]]] {
        def call(): Seq[Seq[Byte]] = (0L until 30L).reverse.map(i => applyTo(t, photo, i).toSeq).reverse
      })
      for (f <- pool.invokeAll(tasks.asJava, 120, TimeUnit.SECONDS).asScala) assert(f.get() == a)
    } finally pool.shutdownNow()
  }

  test("sampled crops respect the scale and ratio ranges, with torchvision's fallback") {
    var fallbacks = 0
    for (i <- 0L until 2000L) {
      val Array(top, left, h, w) = RandomResizedCropParams.sample(rrc, 97, 61, SampleRandom.of(1, 0, i))
      assert(top >= 0 && left >= 0 && top + h <= 61 && left + w <= 97)
      val area = h.toDouble * w / (97 * 61)
      if (h == 61 && w == 97 && top == 0 && left == 0) fallbacks += 1
      else {
        // rounding to whole pixels can move area and ratio slightly outside the ranges
        assert(area > 0.06 && area <= 1.0, s"area $area")
        assert(w.toDouble / h > 0.7 && w.toDouble / h < 1.4, s"ratio ${w.toDouble / h}")
      }
    }
    assert(fallbacks < 100)
    // an image far wider than any allowed ratio only fits the central fallback crop
    val wide = new ImageOp.RandomResizedCrop(8, 8, 0.9, 1.0, 1.0, 1.0, ResampleFilter.BILINEAR)
    assert(RandomResizedCropParams.sample(wide, 400, 10, SampleRandom.of(1, 0, 0)).toSeq ==
      Seq(0, 195, 10, 10))
  }

  test("hflip flips with its probability and mirrors exactly") {
    val plain = ImageTransform.parse("resize(20),center_crop(20)")
    val flipped = ImageTransform.parse("resize(20),center_crop(20),hflip").withSeed(5)
    val base = applyTo(plain, photo)
    val mirrored = base.grouped(60).flatMap(_.grouped(3).toSeq.reverse.flatten).toArray
    val flips = (0L until 1000L).count { i =>
      val out = applyTo(flipped, photo, i)
      if (java.util.Arrays.equals(out, mirrored)) true
      else { assert(java.util.Arrays.equals(out, base)); false }
    }
    assert(flips > 400 && flips < 600, s"$flips of 1000")
  }
}
