package dev.spindle.spark.image

import java.nio.ByteBuffer
import java.nio.file.{Files, Paths}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * The native decoder's seek index ([[JpegSeekIndex]], spindle_seek.c): a decode of bytes decoded
 * before starts each row of its region at the MCU it needs, from the state the first decode
 * recorded, and its pixels are still exactly those of a whole-image decode by OpenCV, whatever the
 * order of the regions (top first, bottom first, one row, full width), on every layout it indexes
 * (4:2:0, 4:2:2, 4:4:4, odd and tall sizes, photographs); the first decode indexes every row (the
 * ones below its region Huffman-decoded only); the JPEGs it does not index (progressive,
 * grayscale, restart markers, DCT-scaled decodes) keep no index; bytes that differ never share one;
 * corrupt data libjpeg-turbo warns about is never skipped over (the same warnings and pixels with
 * or without an index).
 */
class NativeJpegSeekSuite extends AnyFunSuite {
  private def file(dir: String, name: String): Array[Byte] =
    Files.readAllBytes(Paths.get(getClass.getResource(s"/$dir/$name").toURI))

  private lazy val indexed: Seq[(String, Array[Byte])] =
    Seq("s420.jpg", "s422.jpg", "s444.jpg", "odd420.jpg", "tall420.jpg", "tiny420.jpg")
      .map(n => n -> file("jpeg-variants", n)) ++
      (0 until 8).map(i => s"photo$i.jpg" -> file("photos", s"photo$i.jpg"))

  private def requireIndex(): Unit = {
    requireNativeJpeg()
    assume(JpegSeekIndex.ENABLED, "spindle.image.seekIndex=false")
  }

  private def whole(data: Array[Byte]): DecodedImage = wholeDecode(data, 1)

  private def key(data: Array[Byte]): JpegSeekIndex.Key =
    JpegSeekIndex.key(ByteBuffer.allocateDirect(data.length).put(data).flip(), data.length)

  /** Rows the index kept for `data` knows completely (0: no index). */
  private def known(data: Array[Byte]): Long =
    Option(JpegSeekIndex.get(key(data))).map(_(JpegSeekIndex.KNOWN)).getOrElse(0L)

  /** Decodes [x0,x1)x[y0,y1) natively and checks it against the whole decode. */
  private def check(name: String, data: Array[Byte], full: DecodedImage, progressive: Boolean,
      box: (Int, Int, Int, Int)): Unit = {
    val (x0, y0, x1, y1) = box
    val band = NativeJpeg.open(data, 0, data.length, 1, progressive, x0, y0, x1, y1,
      DecodeScratch.current())
    val rgb = try band.all() finally band.close()
    assert(band.warnings() == 0, s"$name: libjpeg-turbo warned")
    regionMismatch(rgb, band.region, full, box).foreach { m =>
      fail(s"$name, region [$x0,$x1)x[$y0,$y1) (index knowing ${known(data)} rows): $m")
    }
  }

  test("decodes after the first resume from the index and hold the whole decode's pixels") {
    requireIndex()
    val rnd = new Random(33)
    for ((name, data) <- indexed) {
      JpegSeekIndex.clear()
      val full = whole(data)
      val (w, h) = (full.width(), full.height())
      // a middle band first (the index then knows the rows above it), then regions everywhere:
      // inside the known rows, across their end, below it, single pixels, full rows
      val boxes = Seq((w / 3, h / 3, 2 * w / 3, h / 2), (w / 4, h / 8, w / 2, h / 4),
        (0, 0, w, h / 3), (w - 1, h / 3, w, h / 3 + 1), (w / 2, h / 4, w, h), (0, 0, 1, 1),
        (0, h - 1, w, h), (0, 0, w, h)) ++ Seq.fill(30) {
        val x0 = rnd.nextInt(w); val y0 = rnd.nextInt(h)
        (x0, y0, x0 + 1 + rnd.nextInt(w - x0), y0 + 1 + rnd.nextInt(h - y0))
      }
      val before = JpegSeekIndex.hitsAndMisses()
      for (box <- boxes) check(name, data, full, progressive = false, box)
      val after = JpegSeekIndex.hitsAndMisses()
      if (h <= 16) { // one MCU row: the last is never known (nothing follows it), so no index
        assert(known(data) == 0, s"$name: an index for one MCU row")
      } else {
        assert(after(0) - before(0) == boxes.size - 1 && after(1) - before(1) == 1,
          s"$name: ${after(0) - before(0)} decodes found the index, ${after(1) - before(1)} not")
        // a full decode passed every row: all but the last are known (nothing comes after it)
        val rows = JpegSeekIndex.get(key(data))(3)
        assert(known(data) == rows - 1,
          s"$name: after a full decode the index knows ${known(data)} of $rows MCU rows")
      }
    }
  }

  test("the first decode indexes every row, those below its region too, and later ones add nothing") {
    requireIndex()
    for ((name, data) <- indexed) {
      JpegSeekIndex.clear()
      val full = whole(data)
      val (w, h) = (full.width(), full.height())
      // a region in the top quarter: the rows below it are Huffman-decoded to complete the index
      check(name, data, full, progressive = false, (w / 3, 0, 2 * w / 3, math.max(1, h / 4)))
      if (h > 16) {
        val rows = JpegSeekIndex.get(key(data))(3)
        assert(known(data) == rows - 1,
          s"$name: after a top region the index knows ${known(data)} of $rows MCU rows")
        val before = JpegSeekIndex.hitsAndMisses()
        check(name, data, full, progressive = false, (0, h / 2, w, h))
        assert(JpegSeekIndex.hitsAndMisses()(0) == before(0) + 1, s"$name: no index found")
        assert(known(data) == rows - 1, s"$name: the index changed")
      }
    }
  }

  test("regions bottom first, then top, then every row one by one") {
    requireIndex()
    val (name, data) = indexed.find(_._1 == "photo3.jpg").get
    JpegSeekIndex.clear()
    val full = whole(data)
    val (w, h) = (full.width(), full.height())
    check(name, data, full, progressive = false, (0, h - 20, w, h))
    val all = known(data)
    assert(all >= (h - 20) / 16, s"the index knows only $all rows") // photo3 is 4:2:0
    check(name, data, full, progressive = false, (10, 0, 60, 30))
    for (y <- 0 until h by 7) check(name, data, full, progressive = false, (w / 2, y, w / 2 + 9, y + 1))
    assert(known(data) == all, "the index changed without new rows decoded")
  }

  test("progressive, grayscale, restart-marked and DCT-scaled decodes keep no index") {
    requireIndex()
    for (n <- Seq("progressive420.jpg", "gray.jpg", "progressive-gray.jpg")) {
      JpegSeekIndex.clear()
      val data = file("jpeg-variants", n)
      val full = whole(data)
      val progressive = n.startsWith("progressive")
      for (_ <- 0 until 2) {
        check(n, data, full, progressive, (0, full.height() / 2, full.width(), full.height()))
      }
      assert(known(data) == 0, s"$n kept an index")
    }
    JpegSeekIndex.clear()
    val s420 = file("jpeg-variants", "s420.jpg")
    for (_ <- 0 until 2) {
      NativeJpeg.open(s420, 0, s420.length, 2, false, 0, 0, 50, 50, DecodeScratch.current()).close()
    }
    assert(known(s420) == 0, "a 1/2-scale decode kept an index")
  }

  test("bytes that differ, even at the same length, never find each other's index") {
    requireIndex()
    JpegSeekIndex.clear()
    val data = file("photos", "photo1.jpg")
    val other = data.clone()
    other(other.length - 40) = (other(other.length - 40) ^ 0x01).toByte // in the last MCUs
    assert(key(data) != key(other))
    val full = whole(data)
    check("photo1.jpg", data, full, progressive = false, (0, 0, full.width(), full.height()))
    assert(known(data) > 0 && known(other) == 0)
    val changed = whole(other)
    val band = NativeJpeg.open(other, 0, other.length, 1, false, 0, 0, full.width(),
      full.height(), DecodeScratch.current())
    val rgb = try band.all() finally band.close()
    val got = new Array[Byte](rgb.remaining().min(changed.pixels().length))
    rgb.get(0, got)
    assert(java.util.Arrays.equals(got, changed.pixels()), "the changed JPEG decoded otherwise")
  }

  test("corrupt data gives the same warnings and pixels with or without an index, and keeps none") {
    requireIndex()
    val data = file("photos", "photo6.jpg")
    val full = whole(data)
    val (w, h) = (full.width(), full.height())
    val sos = data.indices.find(i => (data(i) & 0xFF) == 0xFF && (data(i + 1) & 0xFF) == 0xDA).get
    val rnd = new Random(8)
    var warned = 0
    for (_ <- 0 until 60) {
      JpegSeekIndex.clear()
      val bad = data.clone()
      val at = sos + 20 + rnd.nextInt(bad.length - sos - 40)
      for (i <- at until at + 3) bad(i) = rnd.nextInt(256).toByte
      val region = (w / 2, h / 2, w / 2 + 40, h / 2 + 30)
      def decode(box: (Int, Int, Int, Int)): (Int, Array[Byte]) = {
        val (x0, y0, x1, y1) = box
        try {
          val band = NativeJpeg.open(bad, 0, bad.length, 1, false, x0, y0, x1, y1,
            DecodeScratch.current())
          try {
            val rgb = band.all()
            val out = new Array[Byte](band.rows * band.region.rowPixels() * 3)
            rgb.get(0, out)
            (band.warnings(), out)
          } finally band.close()
        } catch {
          case e: ImageException => (-1, e.getMessage.getBytes)
        }
      }
      val first = decode(region) // no index yet; it keeps one when it met no corrupt data
      val before = known(bad)
      val (fullWarnings, _) = decode((0, 0, w, h))
      if (fullWarnings != 0) { // the rows a warning came from are never recorded
        warned += 1
        assert(known(bad) == before, s"bytes $at.. changed: a decode that warned grew the index")
      }
      val again = decode(region)
      assert(again._1 == first._1 && java.util.Arrays.equals(again._2, first._2),
        s"bytes $at.. changed: warnings ${first._1} without an index, ${again._1} after a full decode")
    }
    assert(warned >= 10, s"only $warned of 60 corrupted JPEGs drew a warning")
  }

  test("threads decoding the same images at once share the index and keep the whole decode's pixels") {
    requireIndex()
    JpegSeekIndex.clear()
    val photos = indexed.filter(_._1.startsWith("photo")).take(3)
    val wholes = photos.map { case (_, data) => whole(data) }
    val errors = new java.util.concurrent.ConcurrentLinkedQueue[Throwable]()
    val threads = (0 until 4).map { t =>
      new Thread(() => {
        val rnd = new Random(100 + t)
        try {
          for (_ <- 0 until 40) {
            val i = rnd.nextInt(photos.size)
            val (name, data) = photos(i)
            val full = wholes(i)
            val (w, h) = (full.width(), full.height())
            val x0 = rnd.nextInt(w); val y0 = rnd.nextInt(h)
            check(name, data, full, progressive = false,
              (x0, y0, x0 + 1 + rnd.nextInt(w - x0), y0 + 1 + rnd.nextInt(h - y0)))
          }
        } catch {
          case e: Throwable => errors.add(e)
        }
      })
    }
    threads.foreach(_.start())
    threads.foreach(_.join())
    if (!errors.isEmpty) throw errors.peek() // the first thread's failure, with its message
    assert(photos.forall { case (_, data) => known(data) > 0 }, "no index was kept")
  }
}
