package dev.spindle.spark.preprocess
import java.nio.file.{Files, Path}

import dev.spindle.spark.testkit.{BadImages, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.example.SampleImages

/** `gen-sample`'s deterministic data for suites outside this package. */
object TestSamples {
  /** Tar shards `shard-NNNNN.tar` of `perShard` JPEG samples each (keys `sample-NNNNNN`). */
  def generate(dir: Path, shards: Int, perShard: Int, width: Int, height: Int, seed: Long): Unit =
    GenSample.run(new GenSample.Options(dir.toString, shards, perShard, width, height, seed),
      new Configuration())

  /** The JPEG `gen-sample` draws for (seed, index). */
  def jpeg(seed: Long, index: Int, width: Int, height: Int): Array[Byte] =
    SampleImages.jpeg(seed, index, width, height)

  /**
   * One shard `mixed.tar` in `dir` (made if missing): 6 good 64x48 JPEG samples (g0 to g5) and 4
   * bad ones of different kinds (garbage bytes, a truncated JPEG, a PNG declaring 100000 x 100000
   * pixels, an image without a label). Returns `dir`.
   */
  def mixedShard(dir: Path): Path = {
    def good(i: Int) = jpeg(5L, i, 64, 48)
    val cut = good(100)
    TestFiles.writeTar(Files.createDirectories(dir).resolve("mixed.tar"), Seq(
      "g0.jpg" -> good(0), "g0.cls" -> ascii("0"),
      "garbage.jpg" -> BadImages.garbage(300), "garbage.cls" -> ascii("1"),
      "g1.jpg" -> good(1), "g1.cls" -> ascii("1"),
      "truncated.jpg" -> cut.take(cut.length / 3), "truncated.cls" -> ascii("2"),
      "g2.jpg" -> good(2), "g2.cls" -> ascii("2"),
      "huge.png" -> BadImages.pngHeader(100000, 100000), "huge.cls" -> ascii("3"),
      "g3.jpg" -> good(3), "g3.cls" -> ascii("3"),
      "nolabel.jpg" -> good(4),
      "g4.jpg" -> good(4), "g4.cls" -> ascii("4"),
      "g5.jpg" -> good(5), "g5.cls" -> ascii("5")))
    dir
  }
}
