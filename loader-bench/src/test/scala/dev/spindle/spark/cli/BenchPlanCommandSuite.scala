package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.plan.{EpochPlan, PlanSpec, Plans, Remainder}
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/** `spindle bench plan` run in this JVM on a small synthetic manifest: flags and report keys. */
class BenchPlanCommandSuite extends AnyFunSuite {
  test("bench plan writes the report with the issue's keys, and its task slice is the plan's") {
    TestFiles.withTempDir("bench-plan") { dir =>
      val file = dir.resolve("plan.json")
      val err = new ByteArrayOutputStream()
      val args = Array("bench", "plan", "--shards", "300", "--per-shard", "40", "--world-size", "6",
        "--report", file.toString)
      val code = SpindleMain.run(args, new PrintStream(new ByteArrayOutputStream(), true),
        new PrintStream(err, true))
      assert(code == 0, err.toString)
      val r = new ObjectMapper().readTree(file.toFile)
      assert(r.get("shards").asInt() == 300 && r.get("samples").asLong() == 12000)
      assert(r.get("world_size").asInt() == 6)
      for (k <- Seq("driver_plan_s", "driver_heap_mb", "task_bytes", "task_slice_s")) {
        assert(r.get(k).isNumber && r.get(k).asDouble() > 0, k)
      }
      for (k <- Seq("manifest_json_bytes", "manifest_bin_bytes", "manifest_bin_write_s", "manifest_bin_read_s")) {
        assert(r.get(k).isNumber && r.get(k).asDouble() > 0, k)
      }
      assert(r.get("manifest_bin_same").asBoolean())
      assert(r.get("manifest_bin_bytes").asLong() * 5 < r.get("manifest_json_bytes").asLong())
      // The slice the task derived is the last rank's whole epoch 3 (the last one planned).
      val m = Plans.manifest(Seq.fill(300)(40L), "file:/bench")
      val plan = EpochPlan.create(m, new PlanSpec(42, 3, 6, 256, Remainder.PAD,
        PlanSpec.DEFAULT_SHUFFLE_WINDOW))
      assert(r.get("task_digest").asText() == plan.rank(5).digest())
      // feed's task results and the driver's ledger over them: one run per slice, every rank checked
      for (k <- Seq("task_result_bytes", "epoch_result_bytes", "driver_ledger_s", "task_digest_s")) {
        assert(r.get(k).isNumber && r.get(k).asDouble() > 0, k)
      }
      assert(r.get("driver_ledger_ranks").asInt() == 6)
      assert(r.get("epoch_result_runs").asInt() >= 6 && r.get("epoch_result_runs").asInt() <= 11)
      assert(r.get("task_result_bytes").asInt() < 2048)
    }
  }
}
