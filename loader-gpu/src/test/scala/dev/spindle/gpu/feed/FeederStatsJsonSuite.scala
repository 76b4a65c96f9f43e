package dev.spindle.gpu.feed

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.gpu.ring.{RingSnapshot, SlotState}

import org.scalatest.funsuite.AnyFunSuite

/** A feeder's statistics as JSON (written by Jackson): its strings, numbers and layout. */
class FeederStatsJsonSuite extends AnyFunSuite {
  private val states = SlotState.values().length

  private def stats(device: String, mean: Double) = new FeederStats(device,
    new RingSnapshot(2500000000L, Array.fill(states)(1), Array.fill(states)(2),
      Array.fill(states)(mean), Array(0L, 100L),
      Array(Array.fill(states)(1), Array.fill(states)(2)), 1500000L, 2000000L, 4, 4, 3, 0, 0, 0),
    3000000L, 4, 7000000L, 1, 0, 0, 0)

  test("strings are escaped, numbers keep 6 significant digits, non-finite ones become null") {
    val json = stats("a\"b\\c\n\u0001é", Double.NaN).toJson
    assert(json.startsWith("{\"device\":\"a\\\"b\\\\c\\n\\u0001é\",\"elapsed_ms\":2500,"), json)
    val tree = new ObjectMapper().readTree(json)
    assert(tree.get("device").asText == "a\"b\\c\n\u0001é")
    assert(tree.get("h2d_gbps").doubleValue == 0.428571) // 3e6 bytes in 7e6 ns
    assert(tree.get("consumer_wait_ms_per_batch").doubleValue == 0.5)
    for (s <- SlotState.values()) {
      assert(tree.get("slots").get(s.name).get("mean").isNull, json)
      assert(tree.get("slots").get(s.name).get("peak").intValue == 2)
    }
  }

  test("slot series: a column per state after the time, a row per sample") {
    val json = stats("host", 0.25).toJson
    val names = SlotState.values().map(s => "\"" + s.name + "\"").mkString(",")
    assert(json.contains("\"series_columns\":[\"ms\"," + names + "]"), json)
    assert(json.contains("\"series\":[[0" + ",1" * states + "],[100" + ",2" * states + "]]"), json)
    assert(json.contains("\"mean\":0.25"), json)
  }

  test("reported values: 6 significant digits, null for NaN and infinities") {
    assert(FeederStats.reported(Double.NaN) == null)
    assert(FeederStats.reported(Double.PositiveInfinity) == null)
    assert(FeederStats.reported(Double.NegativeInfinity) == null)
    assert(FeederStats.reported(1.0 / 3).doubleValue == 0.333333)
    assert(FeederStats.reported(123456789.0).doubleValue == 1.23457e8)
    assert(FeederStats.reported(0.0).doubleValue == 0.0)
  }
}
