package dev.spindle.gpu.feed

import org.scalatest.funsuite.AnyFunSuite

/** The hand-written JSON of the feeder's statistics. */
class JsonSuite extends AnyFunSuite {
  test("JSON strings are escaped and non-finite numbers become null") {
    val j = new Json().field("s", "a\"b\\c\n\u0001é").field("x", Double.NaN).field("n", 3L).build()
    assert(j == "{\"s\":\"a\\\"b\\\\c\\n\\u0001é\",\"x\":null,\"n\":3}")
  }
}
