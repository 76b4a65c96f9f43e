package dev.spindle.spark.preprocess
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.FixedShapeTensorType
import dev.spindle.spark.image.ImageTransform
import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.shard.{SampleLimits, Shard, ShardFormat, ShardReader}
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.example.SampleImages

class PreprocessJobSuite extends AnyFunSuite with SparkFixture {
  private val size = 32
  private val baseConf = Map(
    "spark.spindle.image.size" -> size.toString,
    "spark.spindle.batchSize" -> "8",
    "spark.spindle.partitionBytes" -> "1") // one shard per partition

  private def gen(dir: Path, shards: Int, perShard: Int): Unit =
    GenSample.run(new GenSample.Options(dir.toString, shards, perShard, 96, 64, 11L), new Configuration())

  private def preprocess(in: Path, out: Path, conf: Map[String, String] = Map.empty, overwrite: Boolean = false): JobReport =
    PreprocessJob.run(spark, in.toString, out.toString, overwrite, (baseConf ++ conf).asJava)

  /** The expected pixels: the same transform applied directly to the source bytes. */
  private def expectedPixels(encoded: Array[Byte], index: Long): Seq[Byte] = {
    val t = ImageTransform.resizeCenterCrop(size)
    val alloc = new RootAllocator(Long.MaxValue)
    try {
      val buf = alloc.buffer(t.outputBytes)
      try {
        t.apply(encoded, 0, encoded.length, index, buf, 0)
        val out = new Array[Byte](t.outputBytes.toInt)
        buf.getBytes(0, out)
        out.toSeq
      } finally buf.close()
    } finally alloc.close()
  }

  test("every sample is written once with its label, key, index and transformed pixels") {
    TestFiles.withTempDir("pp") { dir =>
      val in = dir.resolve("in")
      val out = dir.resolve("out")
      gen(in, shards = 3, perShard = 10)
      val report = preprocess(in, out)
      assert(report.get("images") == 30L)
      assert(report.get("failures") == 0L)
      assert(report.get("partitions") == 3)
      assert(report.get("images_per_s").asInstanceOf[Double] > 0)
      assert(report.get("time_to_first_batch_s").asInstanceOf[Double] > 0)
      val stages = report.get("stages").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(stages.map(_.get("name")) == Seq("read", "decode", "batch", "sink"))
      assert(stages.find(_.get("name") == "decode").get.get("items") == 30L)
      assert(stages.map(_.get("name")).contains(report.get("bottleneck")))

      val files = ArrowFiles.partFiles(out)
      val names = files.map(_.getFileName.toString)
      assert(names.size == 3 && names.zipWithIndex.forall { case (n, i) =>
        n.matches(f"part-$i%05d-[0-9a-f]{8}\\.arrow") }, names)
      assert(names.map(_.drop("part-00000-".length)).distinct.size == 1, "one job tag: " + names)
      val rows = ArrowFiles.readAll(out)
      assert(rows.map(_.index) == (0L until 30L))
      assert(rows.map(_.key) == (0 until 30).map(i => f"sample-$i%06d"))
      assert(rows.map(_.label) == (0 until 30).map(i => SampleImages.label(11L, i)))

      val sources = (0 until 3).flatMap { s =>
        val tar = in.resolve(f"shard-$s%05d.tar")
        val shard = new Shard(tar.toUri.toString, ShardFormat.TAR, Files.size(tar), 0L, 10L, java.util.List.of())
        val reader = ShardReader.open(shard, new Configuration(), new SampleLimits(1 << 20, 0))
        try reader.asScala.map(_.image).toList finally reader.close()
      }
      rows.zip(sources).foreach { case (row, encoded) =>
        assert(row.image == expectedPixels(encoded, row.index), s"pixels of ${row.key}")
      }

      val (schema, _) = ArrowFiles.read(files.head)
      val image = schema.findField("image")
      val ext = image.getType.asInstanceOf[FixedShapeTensorType]
      assert(ext.extensionName == "arrow.fixed_shape_tensor")
      assert(ext.shape.toSeq == Seq(size, size, 3))
      assert(schema.getFields.asScala.map(_.getName) == Seq("image", "label", "key", "index"))

      val manifest = JobReport.read(out.resolve("_manifest.json")).asScala
      assert(manifest("rows") == 30)
      assert(manifest("files").asInstanceOf[java.util.List[_]].size == 3)
      assert(!Files.exists(out.resolve("_temporary")), "temporary folder left behind")
    }
  }

  test("existing output is kept unless overwrite is asked for") {
    TestFiles.withTempDir("ow") { dir =>
      val in = dir.resolve("in")
      val out = dir.resolve("out")
      gen(in, shards = 1, perShard = 4)
      preprocess(in, out)
      val e = intercept[java.io.IOException](preprocess(in, out))
      assert(e.getMessage.contains("already holds committed output; pass --overwrite"))
      assert(ArrowFiles.readAll(out).size == 4)
      preprocess(in, out, overwrite = true)
      assert(ArrowFiles.readAll(out).size == 4)
    }
  }

  test("small shards are grouped into one partition up to the byte limit") {
    TestFiles.withTempDir("group") { dir =>
      val in = dir.resolve("in")
      gen(in, shards = 4, perShard = 3)
      val report = preprocess(in, dir.resolve("out"), Map("spark.spindle.partitionBytes" -> (1L << 30).toString))
      assert(report.get("partitions") == 1)
      assert(ArrowFiles.readAll(dir.resolve("out")).map(_.index) == (0L until 12L))
    }
  }
}
