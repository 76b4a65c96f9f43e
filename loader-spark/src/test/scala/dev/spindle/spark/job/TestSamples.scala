package dev.spindle.spark.job

import java.nio.file.Path

import org.apache.hadoop.conf.Configuration

/** `gen-sample`'s deterministic data for suites outside this package. */
object TestSamples {
  /** Tar shards `shard-NNNNN.tar` of `perShard` JPEG samples each (keys `sample-NNNNNN`). */
  def generate(dir: Path, shards: Int, perShard: Int, width: Int, height: Int, seed: Long): Unit =
    GenSample.run(new GenSample.Options(dir.toString, shards, perShard, width, height, seed),
      new Configuration())

  /** The JPEG `gen-sample` draws for (seed, index). */
  def jpeg(seed: Long, index: Int, width: Int, height: Int): Array[Byte] =
    SampleImages.jpeg(seed, index, width, height)
}
