package dev.spindle.spark.preprocess

import org.scalatest.funsuite.AnyFunSuite

/** preprocess writes every sample once: a token budget (feed and train only) is refused by name. */
class PreprocessBudgetSuite extends AnyFunSuite {
  test("preprocess refuses spark.spindle.batchTokens, naming it") {
    val e = intercept[IllegalArgumentException] {
      PreprocessSettings.from(java.util.Map.of("spark.spindle.batchTokens", "24"))
    }
    assert(e.getMessage.contains("spark.spindle.batchTokens") && e.getMessage.contains("preprocess"))
    assert(PreprocessSettings.from(java.util.Map.of("spark.spindle.batchTokens", "0")) != null)
  }
}
