package dev.spindle.spark.config

import java.nio.file.{Files, Path}

import dev.spindle.spark.pipeline.FailureBudget

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The keys, defaults and docs live in SpindleConfig; the example file and the key table of
 * docs/reference/config.md follow them (bin/gen-docs regenerates both).
 */
class ConfigDocsSuite extends AnyFunSuite {
  private val repo = Path.of("..").toAbsolutePath.normalize

  test("conf/spark-defaults.conf.example lists every key with its default, as generated") {
    val file = repo.resolve("conf/spark-defaults.conf.example")
    assert(Files.readString(file) == ConfigDocs.sparkDefaultsExample(),
      "conf/spark-defaults.conf.example drifted: regenerate with bin/gen-docs (bin/spindle config --example)")
  }

  test("docs/reference/config.md's key table is the generated one") {
    val page = Files.readString(repo.resolve("docs/reference/config.md"))
    val begin = page.indexOf("<!-- keys:begin")
    val end = page.indexOf("<!-- keys:end -->")
    assert(begin >= 0 && end > begin, "docs/reference/config.md lacks the keys:begin/keys:end markers")
    val table = page.substring(page.indexOf('\n', begin) + 1, end)
    assert(table == ConfigDocs.markdownTable(),
      "docs/reference/config.md's key table drifted: regenerate with bin/gen-docs (bin/spindle config --markdown)")
  }

  test("every key's default parses and every key is documented") {
    SpindleConfig.keys().asScala.foreach { k =>
      assert(k.key.startsWith("spark.spindle."), k.key)
      assert(k.doc.nonEmpty, k.key)
      k.defaultParsed()
    }
  }

  test("an unknown key is reported with the closest valid key") {
    val unknown = SpindleConfig.unknownKeys(Seq("spark.spindle.batchSzie", "spark.other", "spark.spindle.batchSize").asJava)
    assert(unknown.asScala == Seq("Unknown key spark.spindle.batchSzie (did you mean spark.spindle.batchSize?)"))
  }

  test("invalid values fail with the key, the value and what is allowed") {
    val e = intercept[IllegalArgumentException](SpindleConfig.get(Map("spark.spindle.threads" -> "-1").asJava, SpindleConfig.THREADS))
    assert(e.getMessage == "Invalid value for spark.spindle.threads: '-1' (must be an integer >= 0)")
    val f = intercept[IllegalArgumentException](SpindleConfig.MAX_FAILURES.parse("1.5"))
    assert(f.getMessage.contains("spark.spindle.maxFailures") && f.getMessage.contains("[0, 1)"))
  }

  test("a value that is no number says what is allowed, not how parsing failed") {
    def msg(k: dev.spindle.spark.config.ConfigKey[_], v: String) = intercept[IllegalArgumentException](k.parse(v)).getMessage
    assert(msg(SpindleConfig.BATCH_SIZE, "abc") == "Invalid value for spark.spindle.batchSize: 'abc' (must be an integer > 0)")
    assert(msg(SpindleConfig.BATCH_SIZE, "0") == "Invalid value for spark.spindle.batchSize: '0' (must be an integer > 0)")
    assert(msg(SpindleConfig.MAX_FAILURES, "lots") == "Invalid value for spark.spindle.maxFailures: 'lots' (must be a" +
      " count >= 0 such as 10, or a fraction in [0, 1) such as 0.01 or 1%)")
    assert(msg(SpindleConfig.SEED, "x1") == "Invalid value for spark.spindle.seed: 'x1' (must be an integer)")
    assert(msg(SpindleConfig.FEED_SLOTS, "many") == "Invalid value for spark.spindle.feed.slots: 'many' (must be an integer >= 2)")
    for (k <- SpindleConfig.keys().asScala; v <- Seq("abc", "-1", "1e99")) {
      val m = try { k.parse(v); "" } catch { case e: IllegalArgumentException => e.getMessage }
      assert(!m.contains("For input string"), m)
    }
  }

  test("failure budgets read as counts or fractions") {
    assert(FailureBudget.parse("3", 100).exceeded(4, 1000))
    assert(!FailureBudget.parse("3", 100).exceeded(3, 1000))
    assert(FailureBudget.parse("1%", 100).exceeded(2, 100))
    assert(!FailureBudget.parse("0.01", 100).exceeded(1, 20)) // judged over at least 100 samples
    assert(FailureBudget.parse("0.01", 100).exceeded(2, 20))
    assert(FailureBudget.parse("5", 100).exceededEarly(6))
    assert(!FailureBudget.parse("0.5", 100).exceededEarly(1000))
  }

  test("image keys build the transform of Arrow jobs; a chain that does not give uint8 HWC is refused") {
    val t = SpindleConfig.uint8Transform(Map("spark.spindle.image.size" -> "64").asJava)
    assert((t.height, t.width, t.channels) == (64, 64, 3))
    val flipped = SpindleConfig.uint8Transform(Map(
      "spark.spindle.image.transforms" -> "resize(80),center_crop(48,32),hflip").asJava)
    assert((flipped.height, flipped.width) == (48, 32))
    val e = intercept[IllegalArgumentException](SpindleConfig.uint8Transform(Map(
      "spark.spindle.image.transforms" -> "resize(SIZE),center_crop(SIZE),normalize").asJava))
    assert(e.getMessage.contains("spark.spindle.image.transforms") && e.getMessage.contains("uint8 HWC"))
    val bad = intercept[IllegalArgumentException](SpindleConfig.uint8Transform(Map(
      "spark.spindle.image.exifOrientation" -> "yes").asJava))
    assert(bad.getMessage.contains("spark.spindle.image.exifOrientation"))
  }

  test("the example job configurations use only known keys with valid values") {
    val examples = Files.list(repo.resolve("conf/examples")).iterator().asScala.filter(_.toString.endsWith(".conf")).toSeq
    assert(examples.nonEmpty)
    val known = SpindleConfig.keys().asScala.map(k => k.key -> k).toMap
    for (file <- examples) {
      val p = new java.util.Properties()
      val in = Files.newBufferedReader(file)
      try p.load(in) finally in.close()
      val spindleKeys = p.stringPropertyNames().asScala.filter(_.startsWith("spark.spindle."))
      assert(spindleKeys.nonEmpty, file)
      for (key <- spindleKeys) {
        assert(known.contains(key), s"$file: unknown key $key")
        known(key).parse(p.getProperty(key))
      }
      SpindleConfig.uint8Transform(p.asScala.toMap.asJava)
    }
  }
}
