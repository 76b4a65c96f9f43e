package dev.spindle.gpu.feed

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

/** The benchmark's report format (never its timings). */
class FeederBenchSuite extends AnyFunSuite {

  test("the host benchmark writes a JSON report with the required fields") {
    val file = Files.createTempFile("feeder-bench", ".json")
    try {
      FeederBench.main(Array("--device", "host", "--report", file.toString, "--seconds", "0.2",
        "--batch", "2", "--size", "8", "--slots", "3", "--producers", "1", "--dtype", "float32"))
      val json = Files.readString(file)
      assert(json.contains("\"device_kind\":\"host\""))
      for (k <- Seq("bare_copy_gbps", "ring_gbps", "ring_efficiency",
          "consumer_wait_ms_per_batch", "ring_normalize_gbps", "host_memcpy_gbps", "ring_zero_copy_gbps")) {
        val m = ("\"" + k + "\":(-?[0-9.]+(e[-+]?[0-9]+)?)").r.findFirstMatchIn(json)
        assert(m.isDefined, s"$k missing or not a number in $json")
        assert(m.get.group(1).toDouble >= 0)
      }
    } finally Files.deleteIfExists(file)
  }

  test("the report measures the feed's own way into the ring too: slots written in place and published") {
    val file = Files.createTempFile("feeder-bench-written", ".json")
    try {
      FeederBench.main(Array("--device", "host", "--report", file.toString, "--seconds", "0.2",
        "--batch", "2", "--size", "8", "--slots", "3", "--producers", "1"))
      val json = Files.readString(file)
      for (k <- Seq("ring_written_gbps", "ring_written_efficiency")) {
        val m = ("\"" + k + "\":([0-9.]+(E[-+]?[0-9]+)?)").r.findFirstMatchIn(json)
        assert(m.isDefined, s"$k missing or not a number in $json")
        assert(m.get.group(1).toDouble > 0, s"$k: no batch went through written slots")
      }
    } finally Files.deleteIfExists(file)
  }

  test("unknown flags and bad values are refused with the flag named") {
    val e = intercept[IllegalArgumentException](FeederBench.main(Array("--gpus", "2")))
    assert(e.getMessage.startsWith("Unknown flag: --gpus"))
    val e2 = intercept[IllegalArgumentException](FeederBench.main(Array("--device", "tpu")))
    assert(e2.getMessage.contains("'tpu'"))
  }
}
