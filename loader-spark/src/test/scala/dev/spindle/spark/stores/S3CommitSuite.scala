package dev.spindle.spark.stores

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.sink.{OutputCommitter, OutputLock}
import dev.spindle.spark.testkit.{ArrowFiles, S3Server, SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * `preprocess --output s3a://…`, where a rename is a copy and a delete: a driver JVM killed
 * (SIGKILL) in the middle of an `--overwrite` commit leaves the old output the one its manifest
 * names, whole, and what readers (the DataSource, feed) see; the next job names the dead driver's
 * lock and removes what it left. The killed driver reached the server with credentials from the
 * environment; neither its log nor any report holds the secret key.
 */
class S3CommitSuite extends AnyFunSuite with SparkFixture {
  @transient private var s3: S3Server = _

  override protected def extraConf: Map[String, String] = s3.sparkSettings

  override protected def beforeAll(): Unit = {
    s3 = new S3Server().start()
    super.beforeAll()
  }

  override protected def afterAll(): Unit =
    try super.afterAll()
    finally if (s3 != null) s3.close()

  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1")

  private val OwnPart = "part-\\d{5}-[0-9a-f]{8}\\.arrow"

  /** The message (of `e` or a cause) that says `what`. */
  private def says(e: Throwable, what: String): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).exists(t => Option(t.getMessage).exists(_.contains(what)))

  private def gen(dir: Path, seed: Long): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 3, 4, 48, 32, seed), new Configuration())
    dir
  }

  /**
   * `bin/spindle preprocess` into `out` as a separate driver JVM with this JVM's flags and
   * classpath; each commit step waits 3 s. It reaches the server through S3A's settings and the
   * AWS environment variables, as a user's driver should: no credential on its command line.
   */
  private def driver(in: Path, out: String, log: Path, extra: Map[String, String] = Map.empty): Process = {
    val java = ProcessHandle.current().info().command().get()
    val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val args = Seq(java) ++ flags ++ Seq(s"-D${OutputCommitter.STEP_DELAY_PROPERTY}=3000",
      "-cp", cp, "dev.spindle.spark.cli.SpindleMain",
      "preprocess", "--input", in.toString, "--output", out, "--overwrite", "--master", "local[2]") ++
      (conf ++ extra ++ s3.forkedJvmSettings).toSeq.flatMap { case (k, v) => Seq("--conf", s"$k=$v") }
    assert(!args.exists(_.contains(S3Server.SecretKey)))
    val pb = new ProcessBuilder(args: _*).redirectErrorStream(true).redirectOutput(log.toFile)
    pb.environment().putAll(s3.credentialsEnvironment.asJava)
    pb.start()
  }

  private def await(what: String, log: Path, timeoutS: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for $what; driver log:\n" +
        Files.readString(log).linesIterator.toSeq.takeRight(40).mkString("\n"))
      Thread.sleep(100)
    }
  }

  /** The output's rows, as a reader that trusts its manifest reads them (a local copy). */
  private def rows(out: String, local: Path) = ArrowFiles.readAll(s3.download(out, local))

  test("a driver killed mid-commit to s3a:// leaves the old output whole and read; the next job cleans up") {
    TestFiles.withTempDir("s3-kill") { dir =>
      val out = s3.uri("kill/out")
      val first = PreprocessJob.run(spark, gen(dir.resolve("a"), 1L).toString, out, false, conf.asJava)
      val oldManifest = s3.read(out + "/_manifest.json")
      val oldFiles = s3.names(out).filter(_.matches(OwnPart))
      val oldRows = rows(out, dir.resolve("old"))
      assert(oldRows.size == 12 && oldFiles.size == 3)

      val log = dir.resolve("driver.log")
      val child = driver(gen(dir.resolve("b"), 2L), out, log)
      try {
        await("the first part renamed (copied) into the output", log, 180) {
          s3.names(out).exists(n => n.matches(OwnPart) && !oldFiles(n))
        }
      } finally {
        child.destroyForcibly()
        child.waitFor(30, TimeUnit.SECONDS)
      }
      // the commit record is the old one and names none of the dead job's parts
      assert(s3.read(out + "/_manifest.json") == oldManifest)
      val orphans = s3.names(out).filter(n => n.matches(OwnPart) && !oldFiles(n))
      assert(orphans.nonEmpty && orphans.forall(n => !oldManifest.contains(n)))
      assert(rows(out, dir.resolve("during")) == oldRows, "the old output changed under a dying commit")
      // readers that trust the manifest see the old output
      val seen = spark.read.format("spindle").load(out).collect()
        .map(r => (r.getAs[Long]("index"), r.getAs[String]("key"), r.getAs[Int]("label"))).sortBy(_._1).toSeq
      assert(seen == oldRows.map(r => (r.index, r.key, r.label)))
      val fed = FeedCommand.run(spark, Array("--input", out, "--size", "16", "--world-size", "2",
        "--batch-size", "3"))
      assert(FeedData.ranks(fed).map(_("samples").asInstanceOf[Long]).sum == 12L)
      assert(s3.read(out + "/" + OutputLock.FILE).contains("\"pid\":" + child.pid()))

      val next = PreprocessJob.run(spark, dir.resolve("b").toString, out, true, conf.asJava)
      val recovered = next.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      assert(recovered("stale_lock").toString.contains("pid " + child.pid()))
      val removed = recovered("removed").asInstanceOf[java.util.List[String]].asScala.toSet
      assert(removed.exists(_.startsWith("_temporary/")), removed)
      assert(orphans.subsetOf(removed), removed)
      val newRows = rows(out, dir.resolve("new"))
      val listed = ArrowFiles.partFiles(dir.resolve("new")).map(_.getFileName.toString).toSet
      assert(s3.files(out).filterNot(_ == OutputLock.FILE) == listed + "_manifest.json",
        "nothing but the new output and its manifest: no orphan, no _temporary")
      assert(newRows.size == 12 && newRows.map(_.label) != oldRows.map(_.label), "still the old data")

      val said = Files.readString(log)
      assert(!said.contains(S3Server.SecretKey), "the driver's log")
      Seq(first.toJson, fed.toJson, next.toJson).foreach(json =>
        assert(!json.contains(S3Server.SecretKey) && !json.contains(S3Server.AccessKey), json))
    }
  }

  test("a first job killed mid-commit to s3a:// leaves no output: readers refuse the folder, saying why; the next job commits") {
    TestFiles.withTempDir("s3-kill-first") { dir =>
      val out = s3.uri("first/out")
      val parquet = Map("spark.spindle.output.format" -> "parquet")
      val log = dir.resolve("driver.log")
      val child = driver(gen(dir.resolve("b"), 2L), out, log, parquet)
      try {
        await("the first part renamed (copied) into the output", log, 180) {
          s3.names(out).exists(_.matches("part-\\d{5}-[0-9a-f]{8}\\.parquet"))
        }
      } finally {
        child.destroyForcibly()
        child.waitFor(30, TimeUnit.SECONDS)
      }
      // copied parts at the top, which a plain listing would take for Parquet shards, and no manifest
      assert(!s3.names(out).contains("_manifest.json"))
      val Uncommitted = s"Input $out holds no committed preprocess output"
      val ds = intercept[Exception](spark.read.format("spindle").option("size", "16").load(out).collect())
      assert(says(ds, Uncommitted), ds)
      val fed = intercept[Exception](FeedCommand.run(spark, Array("--input", out, "--size", "16",
        "--world-size", "2", "--batch-size", "3")))
      assert(says(fed, Uncommitted) && says(fed, "run preprocess with --output"), fed)

      val next = PreprocessJob.run(spark, dir.resolve("b").toString, out, false, (conf ++ parquet).asJava)
      val recovered = next.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      assert(recovered("stale_lock").toString.contains("pid " + child.pid()))
      assert(spark.read.format("spindle").load(out).count() == 12L)
    }
  }
}
