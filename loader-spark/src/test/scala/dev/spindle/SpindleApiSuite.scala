package dev.spindle

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * The public API on a session the test owns: jobs read its spark.spindle.* settings, apply their
 * own on top for that job only, never change its configuration and never stop it.
 */
class SpindleApiSuite extends AnyFunSuite with SparkFixture with BeforeAndAfterAll {
  override protected def extraConf: Map[String, String] =
    Map("spark.spindle.batchSize" -> "3", "spark.spindle.image.size" -> "8")

  private var dir: Path = _
  private var in: Path = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    dir = TestFiles.tempDir("api")
    in = FeedData.tars(dir.resolve("in"), Seq(13, 7, 21)) // 41 samples
  }

  override protected def afterAll(): Unit =
    try TestFiles.deleteRecursively(dir)
    finally super.afterAll()

  /**
   * Everything the session is configured with: its runtime settings and its SparkConf. (The
   * runtime settings first: their first use starts Spark's shared SQL state, which records the
   * warehouse folder in the SparkConf once, whoever asks.)
   */
  private def snapshot(): (Map[String, String], Map[String, String]) = {
    val runtime = spark.conf.getAll
    (runtime, spark.sparkContext.getConf.getAll.toMap)
  }

  test("preprocess and feed run on the caller's session, leave its configuration as it was and it open") {
    val before = snapshot()
    val out = dir.resolve("arrow")
    val p = Spindle.preprocess(spark).input(in.toString)
      .transforms("resize(20),center_crop(16)").output(out.toString).batchSize(5).run()
    assert(p.images() == 41L && p.quarantined() == 0L && p.output().endsWith("/arrow"))
    assert(p.get("batch_size") == 5, "the job's own batch size")
    assert(p.get("image_shape") == java.util.List.of(16, 16, 3), "the job's own transforms")
    assert(ArrowFiles.readAll(out).size == 41)
    assert(snapshot() == before, "preprocess changed the session's configuration")

    val f = Spindle.feed(spark).input(in.toString).worldSize(2).seed(4).epochs(2).run()
    assert(f.get("batch_size") == 3, "the session's batch size")
    val m = FeedData.manifest(in)
    for (epoch <- 0 to 1) {
      val digests = f.ranks().asScala.filter(_.epoch == epoch).sortBy(_.rank).map(_.digest).toSeq
      assert(digests == FeedData.planDigests(m, FeedData.spec(4, epoch, 2, 3)), s"epoch $epoch")
    }
    assert(f.ranks().asScala.map(_.batches).toSet == Set(6L)) // 41 samples / (2 ranks × 3)
    assert(snapshot() == before, "feed changed the session's configuration")
    assert(!spark.sparkContext.isStopped)
    assert(spark.range(10).count() == 10L, "the session is still usable")
  }

  test("a stopped feed resumes from its report's loader state and delivers exactly the rest") {
    val full = Spindle.feed(spark).input(in.toString).worldSize(2).run()
    val stopped = Spindle.feed(spark).input(in.toString).worldSize(2).stopAfterBatches(2).run()
    assert(stopped.ranks().asScala.map(_.batches).toSet == Set(2L))
    val state = dir.resolve("state.json")
    stopped.saveState(state)
    val rest = Spindle.feed(spark).input(in.toString).worldSize(2)
      .resume(Files.readString(state)).run()
    assert(stopped.images() + rest.images() == full.images())
    assert(rest.loaderState() == full.loaderState())
  }

  test("a setting the job does not allow is refused where it is given, before any Spark work") {
    def refused(body: => Any): String = intercept[IllegalArgumentException](body).getMessage
    assert(refused(Spindle.preprocess(spark).batchSize(0)) ==
      "Invalid value for spark.spindle.batchSize: '0' (must be an integer > 0)")
    assert(refused(Spindle.feed(spark).set("spark.spindle.maxFailures", "lots")).startsWith(
      "Invalid value for spark.spindle.maxFailures: 'lots' (must be a count >= 0"))
    assert(refused(Spindle.preprocess(spark).set("spark.executor.memory", "1g")).contains(
      "Spark's own settings belong to the SparkSession"))
    assert(refused(Spindle.feed(spark).worldSize(0)) == "Invalid worldSize: 0 (must be an integer > 0)")
    assert(refused(Spindle.preprocess(spark).input(in.toString).run()) ==
      "preprocess needs output(...) before run()")
    assert(refused(Spindle.feed(spark).input(in.toString).run()) == "feed needs worldSize(...) before run()")
    assert(refused(Spindle.feed(spark).input(in.toString).worldSize(2).device("host").run()) ==
      "spark.spindle.feed.device needs serve() (it configures the trainer bridge)")
    assert(refused(Spindle.feed(spark).transforms("resize(8),normalize")).contains("normalize"))
    val jobs = spark.sparkContext.statusTracker.getJobIdsForGroup(null).length
    spark.conf.set("spark.spindle.numClasses", "-3") // the session's own setting, checked too
    try {
      assert(refused(Spindle.preprocess(spark).input(in.toString).output(dir.resolve("x").toString)
        .run()) == "Invalid value for spark.spindle.numClasses: '-3' (must be an integer >= 0)")
    } finally spark.conf.unset("spark.spindle.numClasses")
    assert(spark.sparkContext.statusTracker.getJobIdsForGroup(null).length == jobs, "a Spark job ran")
    assert(!Files.exists(dir.resolve("x")))
  }

  test("an unknown spark.spindle key, given to a builder or set on the session, is refused naming the closest") {
    def refused(body: => Any): String = intercept[IllegalArgumentException](body).getMessage
    assert(refused(Spindle.preprocess(spark).set("spark.spindle.batchsize", "64")).startsWith(
      "Unknown key spark.spindle.batchsize (did you mean spark.spindle.batchSize?)"))
    assert(refused(Spindle.feed(spark).set("spark.spindle.maxFailure", "10")).startsWith(
      "Unknown key spark.spindle.maxFailure (did you mean spark.spindle.maxFailures?)"))
    val jobs = spark.sparkContext.statusTracker.getJobIdsForGroup(null).length
    spark.conf.set("spark.spindle.image.sise", "64") // as the session builder or spark-defaults would
    try {
      val out = dir.resolve("unknown-key")
      assert(refused(Spindle.preprocess(spark).input(in.toString).output(out.toString).run())
        .startsWith("Unknown key spark.spindle.image.sise (did you mean spark.spindle.image.size?)"))
      assert(refused(Spindle.feed(spark).input(in.toString).worldSize(2).run())
        .startsWith("Unknown key spark.spindle.image.sise"))
      assert(!Files.exists(out))
    } finally spark.conf.unset("spark.spindle.image.sise")
    assert(spark.sparkContext.statusTracker.getJobIdsForGroup(null).length == jobs, "a Spark job ran")
    // the escape hatch, on the builder or the session: the key is kept, logged and ignored
    Spindle.feed(spark).set("spark.spindle.allowUnknownKeys", "true").set("spark.spindle.newKey", "1")
    spark.conf.set("spark.spindle.allowUnknownKeys", "true")
    try {
      val r = Spindle.feed(spark).input(in.toString).worldSize(2).set("spark.spindle.newKey", "1").run()
      assert(r.images() == 36) // 41 samples, batches of 3 per rank of 2: 6 rounds
    } finally spark.conf.unset("spark.spindle.allowUnknownKeys")
  }

  test("read loads shards as a DataFrame through the spindle data source") {
    val df = Spindle.read(spark).option("size", "16").load(in.toString)
    assert(df.columns.toSeq.take(4) == Seq("image", "height", "width", "channels"))
    val rows = df.select("height", "width", "index").collect()
    assert(rows.length == 41 && rows.forall(r => r.getInt(0) == 16 && r.getInt(1) == 16))
    assert(rows.map(_.getLong(2)).sorted.toSeq == (0L until 41L))
  }
}
