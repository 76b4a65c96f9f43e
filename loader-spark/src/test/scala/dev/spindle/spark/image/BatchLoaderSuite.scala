package dev.spindle.spark.image

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

class BatchLoaderSuite extends AnyFunSuite {

  test("every sample of an epoch arrives exactly once, in its shuffled slot, through a small ring") {
    val dir = Files.createTempDirectory("spindle-batches")
    val names = referenceImages.filter(n => n.endsWith(".jpg") || n.startsWith("gradient"))
    try {
      names.foreach(n => Files.write(dir.resolve(n), resource(n)))
      Files.write(dir.resolve("zz_corrupt.jpg"), resource("noise_rgb.jpg").take(500))
      val sampleList = BenchInput.list(dir)
      val samples = sampleList.asScala.toIndexedSeq
      assert(samples.size == names.size + 1)
      val t = ImageTransform.resizeCenterCrop(16)
      val expected = samples.map { s =>
        if (s.key == "zz_corrupt.jpg") Seq.empty[Byte] else applyTo(t, s.read()).toSeq
      }
      val allocator = new RootAllocator(1L << 30)
      try {
        val loader = new BatchLoader(sampleList, t, 3, 4, 2, allocator)
        try {
          for (epoch <- 0L until 2L) {
            loader.startEpoch(11L, epoch)
            var position = 0
            var seen = Set.empty[Int]
            var batch = loader.next()
            while (batch != null) {
              for (slot <- 0 until loader.sizeOf(position / 4)) {
                val index = loader.sampleAt(position)
                val bytes = read(batch, slot * t.outputBytes(), t.outputBytes().toInt).toSeq
                if (samples(index).key == "zz_corrupt.jpg") assert(bytes.forall(_ == 0))
                else assert(bytes == expected(index), samples(index).key)
                seen += index
                position += 1
              }
              loader.release()
              batch = loader.next()
            }
            assert(seen == samples.indices.toSet)
          }
          assert(loader.quarantined() == 2)
        } finally loader.close()
      } finally allocator.close() // fails if a ring buffer leaked
    } finally {
      Files.list(dir).forEach(p => Files.delete(p))
      Files.delete(dir)
    }
  }
}
