package dev.spindle.spark.image

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/** Both benchmark loaders: the plain pool (BatchLoader) and the executor engine (EngineLoader). */
class BatchLoaderSuite extends AnyFunSuite {
  private val transform = ImageTransform.resizeCenterCrop(16)

  /** A directory of reference images plus one truncated JPEG; deleted afterwards. */
  private def withInput(body: Path => Unit): Unit = {
    val dir = Files.createTempDirectory("spindle-batches")
    try {
      referenceImages.filter(n => n.endsWith(".jpg") || n.startsWith("gradient"))
        .foreach(n => Files.write(dir.resolve(n), resource(n)))
      Files.write(dir.resolve("zz_corrupt.jpg"), resource("noise_rgb.jpg").take(500))
      body(dir)
    } finally {
      Files.list(dir).forEach(p => Files.delete(p))
      Files.delete(dir)
    }
  }

  /** Runs two epochs; returns, per epoch, every delivered image's bytes. */
  private def epochs(make: (java.util.List[BenchInput.Sample], RootAllocator) => BenchLoader,
      dir: Path): (Seq[Seq[Seq[Byte]]], Long) = {
    val allocator = new RootAllocator(1L << 30)
    try {
      val loader = make(BenchInput.list(dir), allocator)
      try {
        val delivered = for (epoch <- 0L until 2L) yield {
          loader.startEpoch(11L, epoch)
          val images = Seq.newBuilder[Seq[Byte]]
          var batch = loader.next()
          while (batch != null) {
            assert(loader.lastSize() <= 4)
            for (slot <- 0 until loader.lastSize())
              images += read(batch, slot * transform.outputBytes(), transform.outputBytes().toInt).toSeq
            loader.release()
            batch = loader.next()
          }
          images.result()
        }
        (delivered, loader.quarantined())
      } finally loader.close()
    } finally allocator.close() // fails if a buffer leaked
  }

  private def expected(dir: Path): Seq[Seq[Byte]] =
    BenchInput.list(dir).asScala.toSeq.filterNot(_.key == "zz_corrupt.jpg")
      .map(s => applyTo(transform, s.read()).toSeq)

  private def sorted(images: Seq[Seq[Byte]]): Seq[String] = images.map(_.mkString(",")).sorted

  test("the plain pool delivers every sample once per epoch, a corrupt one as zeros") {
    withInput { dir =>
      val (delivered, quarantined) =
        epochs((s, a) => new BatchLoader(s, transform, 3, 4, 2, a), dir)
      val zeros = Seq.fill(transform.outputBytes().toInt)(0.toByte)
      for (images <- delivered) {
        assert(images.count(_ == zeros) == 1)
        assert(sorted(images.filterNot(_ == zeros)) == sorted(expected(dir)))
      }
      assert(quarantined == 2)
    }
  }

  test("the executor engine delivers every good sample once per epoch and quarantines the bad") {
    withInput { dir =>
      val (delivered, quarantined) = epochs((s, a) => new EngineLoader(s, transform, 3, 4, a), dir)
      for (images <- delivered) assert(sorted(images) == sorted(expected(dir)))
      assert(delivered(0) != delivered(1), "epochs are shuffled differently")
      assert(quarantined == 2)
    }
  }

  test("benchmark input reads whole files and tar members byte for byte, and names a shrunk file") {
    TestFiles.withTempDir("bench-input") { dir =>
      val a = resource("noise_rgb.jpg")
      val b = referenceImages.filter(_.endsWith(".jpg")).map(resource).find(_.length != a.length).get
      Files.write(dir.resolve("a.jpg"), a)
      TestFiles.writeTar(dir.resolve("shard.tar"), Seq("one.jpg" -> b, "two.jpg" -> a))
      val samples = BenchInput.list(dir).asScala.map(s => s.key -> s).toMap
      assert(samples.keySet == Set("a.jpg", "shard.tar/one.jpg", "shard.tar/two.jpg"))
      assert(samples("a.jpg").read().sameElements(a))
      assert(samples("shard.tar/one.jpg").read().sameElements(b))
      assert(samples("shard.tar/two.jpg").read().sameElements(a))
      Files.write(dir.resolve("a.jpg"), a.take(10))
      val e = intercept[java.io.EOFException](samples("a.jpg").read())
      assert(e.getMessage.contains("a.jpg") && e.getMessage.contains(s"byte ${a.length}"))
    }
  }
}
