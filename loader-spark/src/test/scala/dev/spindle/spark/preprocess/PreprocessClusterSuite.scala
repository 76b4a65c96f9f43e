package dev.spindle.spark.preprocess
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.sys.process._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.testkit.{ArrowFiles, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.GenSample

/**
 * The preprocess job on two executor JVMs (local-cluster) writes exactly what local mode writes,
 * and an independent Arrow implementation (arrow-js under Node) reads it back.
 */
class PreprocessClusterSuite extends AnyFunSuite {
  private val conf = Map(
    "spark.spindle.image.size" -> "24",
    "spark.spindle.batchSize" -> "5",
    "spark.spindle.partitionBytes" -> "1").asJava

  private def session(master: String, extra: Map[String, String] = Map.empty): SparkSession = {
    val b = SparkSession.builder().master(master).appName("cluster-suite")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.ui.enabled", "false")
    extra.foreach { case (k, v) => b.config(k, v) }
    b.getOrCreate()
  }

  private def runOn(spark: SparkSession, in: Path, out: Path) =
    try PreprocessJob.run(spark, in.toString, out.toString, false, conf)
    finally spark.stop()

  test("local-cluster output equals local mode, and arrow-js reads it") {
    TestFiles.withTempDir("cluster") { dir =>
      val in = dir.resolve("in")
      GenSample.run(new GenSample.Options(in.toString, 4, 7, 80, 60, 3L), new Configuration())

      runOn(session("local[2]"), in, dir.resolve("local"))
      val testHome = Files.createDirectories(dir.resolve("spark-home"))
      System.setProperty("spark.test.home", testHome.toString)
      val report = runOn(session("local-cluster[2,1,1024]", Map(
        "spark.executor.extraClassPath" -> System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
        "spark.executor.memory" -> "1g")), in, dir.resolve("cluster"))
      assert(report.get("images") == 28L)

      val local = ArrowFiles.partFiles(dir.resolve("local"))
      val cluster = ArrowFiles.partFiles(dir.resolve("cluster"))
      // committed names carry each job's tag: part-00003-1a2b3c4d.arrow
      def partition(p: Path) = p.getFileName.toString.take("part-00000".length)
      assert(local.map(partition) == cluster.map(partition))
      local.zip(cluster).foreach { case (a, b) => assert(ArrowFiles.read(a)._2 == ArrowFiles.read(b)._2, s"$a vs $b") }

      checkWithArrowJs(cluster)
    }
  }

  private def checkWithArrowJs(files: Seq[Path]): Unit = {
    val nodeDir = Path.of("src/test/node").toAbsolutePath
    if (!Files.isDirectory(nodeDir.resolve("node_modules/apache-arrow"))) {
      val msg = s"arrow-js not installed: run `npm ci --prefix $nodeDir`"
      if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
    }
    val json = Seq("node", nodeDir.resolve("read_arrow.mjs").toString).++(files.map(_.toString)).!!
    val results = new ObjectMapper().readTree(json)
    assert(results.size == files.size)
    files.zip(results.elements().asScala.toSeq).foreach { case (file, r) =>
      val rows = ArrowFiles.read(file)._2
      assert(r.get("rows").asInt == rows.size)
      assert(r.get("extension").asText == "arrow.fixed_shape_tensor")
      assert(r.get("shape").elements().asScala.map(_.asInt).toSeq == Seq(24, 24, 3))
      assert(r.get("dim_names").elements().asScala.map(_.asText).toSeq == Seq("H", "W", "C"))
      assert(r.get("list_size").asInt == 24 * 24 * 3)
      assert(r.get("fields").elements().asScala.map(_.asText).toSeq ==
        Seq("image:FixedSizeList[1728]<Uint8>", "label:Int32", "key:Utf8", "index:Int64"))
      assert(BigInt(r.get("image_byte_sum").asText) == BigInt(rows.map(_.image.map(_ & 0xff).sum.toLong).sum))
      assert(r.get("indices").elements().asScala.map(_.asLong).toSeq == rows.map(_.index))
      assert(r.get("labels").elements().asScala.map(_.asInt).toSeq == rows.map(_.label))
      assert(r.get("keys").elements().asScala.map(_.asText).toSeq == rows.map(_.key))
    }
  }
}
