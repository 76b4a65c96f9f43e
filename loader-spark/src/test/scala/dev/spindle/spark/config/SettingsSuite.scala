package dev.spindle.spark.config

import scala.jdk.CollectionConverters._

import dev.spindle.spark.image.OutputMode
import dev.spindle.spark.sink.OutputFormat
import org.scalatest.funsuite.AnyFunSuite

/**
 * A job's settings parsed once on the driver ([[Settings]]): typed values, defaults for keys not
 * given, whether a key was given, and the checks and messages of [[SpindleConfig.validate]].
 */
class SettingsSuite extends AnyFunSuite {
  private def of(kv: (String, String)*): Settings = Settings.of(kv.toMap.asJava)

  test("values are typed, parsed once; a key not given has its default and is not set") {
    val s = of("spark.spindle.batchSize" -> " 64 ", "spark.spindle.output.format" -> "parquet",
      "spark.spindle.feed.serve" -> "true", "spark.executor.memory" -> "1g")
    assert(s.get(SpindleConfig.BATCH_SIZE) == 64 && s.isSet(SpindleConfig.BATCH_SIZE))
    assert(s.get(SpindleConfig.OUTPUT_FORMAT) == OutputFormat.PARQUET)
    assert(s.get(SpindleConfig.FEED_SERVE))
    assert(s.get(SpindleConfig.THREADS) == 0 && !s.isSet(SpindleConfig.THREADS))
    assert(s.get(SpindleConfig.SEED) == 0L)
    assert(s.given().get("spark.executor.memory") == "1g", "other components' settings are kept as given")
    assert(s.uint8Transform().outputMode() == OutputMode.UINT8_HWC)
  }

  test("of() refuses what validate refuses, with the same messages") {
    for (bad <- Seq(Map("spark.spindle.batchsize" -> "64"), Map("spark.spindle.batchSize" -> "-3"),
      Map("spark.spindle.image.transforms" -> "resize(8),normalize"), Map("spark.spindle.maxFailures" -> "lots"))) {
      val viaValidate = intercept[IllegalArgumentException](SpindleConfig.validate(bad.asJava)).getMessage
      assert(intercept[IllegalArgumentException](Settings.of(bad.asJava)).getMessage == viaValidate)
    }
    assert(intercept[IllegalArgumentException](of("spark.spindle.batchSize" -> "-3")).getMessage ==
      "Invalid value for spark.spindle.batchSize: '-3' (must be an integer > 0)")
  }

  test("read() parses the known keys given and leaves unknown ones alone; withValue() sets one more") {
    val s = Settings.read(Map("spark.spindle.batchsize" -> "64", "spark.spindle.seed" -> "9").asJava)
    assert(s.get(SpindleConfig.SEED) == 9L && s.get(SpindleConfig.BATCH_SIZE) == 256)
    assert(intercept[IllegalArgumentException](Settings.read(Map("spark.spindle.seed" -> "x").asJava))
      .getMessage.startsWith("Invalid value for spark.spindle.seed: 'x'"))
    val socket = s.withValue(SpindleConfig.FEED_SOCKET, "/tmp/x.sock")
    assert(socket.get(SpindleConfig.FEED_SOCKET) == "/tmp/x.sock" && socket.isSet(SpindleConfig.FEED_SOCKET))
    assert(!s.isSet(SpindleConfig.FEED_SOCKET), "withValue() makes new settings")
  }
}
