package dev.spindle.spark.plan

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.scalatest.funsuite.AnyFunSuite

import Plans._

class LoaderStateJsonSuite extends AnyFunSuite {
  private val m = manifest(Seq(100, 60, 40))
  private val mapper = new ObjectMapper()

  private def stateWithTwoLegs(): LoaderState = {
    val plan = EpochPlan.create(m, new PlanSpec(-42L, 3, 4, 5, Remainder.DROP_LAST, 64))
    val resumed = plan.stateAfter(Array(2, 2, 3, 2)).resume(m, 2)
    resumed.stateAfter(Array(1, 2))
  }

  test("a state survives its JSON form unchanged, earlier legs included") {
    val state = stateWithTwoLegs()
    assert(state.legs().size() == 2)
    val back = LoaderState.fromJson(state.toJson())
    assert(back == state)
    assert(back.seed() == -42L && back.worldSize() == 2 && back.batchesConsumed().toSeq == Seq(1, 2))
  }

  test("the JSON document has the documented fields") {
    val json = mapper.readTree(stateWithTwoLegs().toJson())
    assert(json.get("format").asText() == "spindle-loader-state/1")
    assert(json.get("manifest").get("sha256").asText().matches("[0-9a-f]{64}"))
    assert(json.get("manifest").get("shards").asInt() == 3)
    assert(json.get("manifest").get("samples").asLong() == 200)
    assert(json.get("seed").asLong() == -42L)
    assert(json.get("epoch").asInt() == 3)
    assert(json.get("batchSize").asInt() == 5)
    assert(json.get("remainder").asText() == "DROP_LAST")
    assert(json.get("shuffleWindow").asInt() == 64)
    assert(json.get("worldSize").asInt() == 2)
    assert(json.get("batchesConsumed").toString == "[1,2]")
    assert(json.get("earlierLegs").toString == """[{"worldSize":4,"batchesConsumed":[2,2,3,2]}]""")
  }

  private def edited(f: ObjectNode => Unit): String = {
    val node = mapper.readTree(stateWithTwoLegs().toJson()).asInstanceOf[ObjectNode]
    f(node)
    node.toString
  }

  test("malformed states are refused, naming the field") {
    def refused(json: String): String = intercept[IllegalArgumentException](LoaderState.fromJson(json)).getMessage
    assert(refused("not json").startsWith("Invalid loader state: not JSON"))
    assert(refused("[1]") == "Invalid loader state: not a JSON object")
    assert(refused(edited(_.put("format", "other/9"))).contains("format \"other/9\""))
    assert(refused(edited(_.remove("seed"))) == "Invalid loader state: field \"seed\" missing")
    assert(refused(edited(_.put("seed", "seven"))).contains("\"seed\" is \"seven\" (must be a whole number)"))
    assert(refused(edited(_.put("epoch", -1))) == "Invalid epoch: -1 (must be >= 0)")
    assert(refused(edited(_.put("remainder", "SOMETIMES"))).contains("\"remainder\" is \"SOMETIMES\""))
    assert(refused(edited(_.put("worldSize", 3))).contains("2 entries for world size 3"))
    assert(refused(edited(_.put("batchSize", 0))) == "Invalid batch size: 0 (must be >= 1)")
    assert(refused(edited(_.putArray("batchesConsumed").add(1).add(-1))) ==
      "Invalid batches consumed: -1 (must be >= 0)")
  }
}
