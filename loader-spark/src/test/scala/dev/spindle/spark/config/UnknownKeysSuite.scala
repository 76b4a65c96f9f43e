package dev.spindle.spark.config

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * A misspelled `spark.spindle.*` key is an error naming the closest valid key, not a setting left
 * on its default; `spark.spindle.allowUnknownKeys=true` turns it into a warning; every key Spindle
 * reads is known, and other components' keys are never looked at.
 */
class UnknownKeysSuite extends AnyFunSuite {
  private def refused(settings: (String, String)*): String =
    intercept[IllegalArgumentException](SpindleConfig.validate(settings.toMap.asJava)).getMessage

  test("an unknown spark.spindle key fails validation, naming it and the closest valid key") {
    assert(refused("spark.spindle.batchsize" -> "64").startsWith(
      "Unknown key spark.spindle.batchsize (did you mean spark.spindle.batchSize?)"))
    assert(refused("spark.spindle.maxFailure" -> "10").startsWith(
      "Unknown key spark.spindle.maxFailure (did you mean spark.spindle.maxFailures?)"))
    assert(refused("spark.spindle.image.sise" -> "64").startsWith(
      "Unknown key spark.spindle.image.sise (did you mean spark.spindle.image.size?)"))
    val both = refused("spark.spindle.batchsize" -> "64", "spark.spindle.thread" -> "2")
    assert(both.contains("Unknown key spark.spindle.batchsize (did you mean spark.spindle.batchSize?)"), both)
    assert(both.contains("Unknown key spark.spindle.thread (did you mean spark.spindle.threads?)"), both)
    assert(both.endsWith("spark.spindle.allowUnknownKeys=true turns this error into a warning"), both)
  }

  test("spark.spindle.allowUnknownKeys=true lets unknown keys through; it is a checked key itself") {
    SpindleConfig.validate(Map("spark.spindle.batchsize" -> "64",
      "spark.spindle.allowUnknownKeys" -> "true").asJava)
    assert(refused("spark.spindle.batchsize" -> "64", "spark.spindle.allowUnknownKeys" -> "false")
      .startsWith("Unknown key spark.spindle.batchsize"))
    assert(refused("spark.spindle.allowUnknownKeys" -> "yes") ==
      "Invalid value for spark.spindle.allowUnknownKeys: 'yes' (must be true or false)")
    assert(SpindleConfig.key("spark.spindle.allowUnknownKeys").defaultValue == "false")
  }

  test("every key Spindle reads is known; other components' keys are never looked at") {
    val all = SpindleConfig.keys().asScala.map(k => k.key -> k.defaultValue).toMap ++
      Map("spark.executor.memory" -> "1g", "spark.spindlex.any" -> "x", "spark.sql.shuffle.partitions" -> "2",
        "spark.hadoop.fs.s3a.endpoint" -> "x", "spindle.ui" -> "true")
    SpindleConfig.validate(all.asJava)
    assert(SpindleConfig.unknownKeys(all.keys.asJava).isEmpty)
    assert(SpindleConfig.isKnown("spark.spindle.feed.readBatches"))
    Seq("size", "transforms", "output", "maxPixels", "maxDecodeBytes", "exifOrientation", "reducedDecode",
      "seed").map("spark.spindle.image." + _).foreach(k => assert(SpindleConfig.isKnown(k), k))
  }

  test("the closest name ignores case: one helper for keys, options and flags") {
    assert(Nearest.among("BATCHSIZE", Seq("threads", "batchSize", "seed").asJava) == "batchSize")
    assert(Nearest.among("--ouptut", Seq("--input", "--output", "--overwrite").asJava) == "--output")
    assert(Nearest.distance("Size", "sIZE") == 0 && Nearest.distance("sise", "size") == 1)
    assert(Nearest.among("x", Seq.empty[String].asJava) == null)
    assert(SpindleConfig.closest("spark.spindle.BATCHSIZE") == "spark.spindle.batchSize")
    assert(OptionNames.closest("SISE", java.util.List.of("decode")) == "size")
  }
}
