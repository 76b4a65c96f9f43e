package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import dev.spindle.spark.config.SpindleConfig
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/**
 * `spindle bench io` run in this JVM on a tiny generated data set: the report's figures agree with
 * each other, the counted store fed the very bytes local disk did, and a variant this build has no
 * keys for is skipped by name.
 */
class BenchIoCommandSuite extends AnyFunSuite {
  private def run(args: String*): (Int, String) = {
    val err = new ByteArrayOutputStream()
    val code = SpindleMain.run(("bench" +: "io" +: args).toArray,
      new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true))
    (code, err.toString)
  }

  test("bench io reports consistent figures per variant, the store's content equal to local disk's") {
    TestFiles.withTempDir("bench-io") { dir =>
      val file = dir.resolve("io.json")
      val (code, err) = run("--shards", "4", "--per-shard", "12", "--batch-size", "4",
        "--shuffle-window", "24", "--latency-ms", "5", "--rounds", "1", "--report", file.toString)
      assert(code == 0, err)
      val r = new ObjectMapper().readTree(file.toFile)
      assert(r.get("benchmark").asText() == "io")
      assert(r.get("command").asText().contains("--latency-ms 5"))
      assert(r.get("parameters").get("world_size").asInt() == 4)
      assert(r.get("parameters").get("latency_ms").asInt() == 5)
      assert(r.get("machine").get("cores").asInt() == Runtime.getRuntime.availableProcessors())
      assert(r.get("load_average_start").size() == 3 && r.get("load_average_end").size() == 3)
      val dataset = r.get("dataset_bytes").asLong()
      assert(dataset > 4 * 12 * 40000L, "JPEGs of about 50 KB or more")
      assert(r.get("dataset_samples").asLong() == 48)
      val variants = r.get("variants")
      val skipped = r.get("variants_skipped")
      // Every variant ran, or was skipped for a key this build lacks (the index, the cache).
      for (name <- Seq("local", "store", "store-latency", "indexed", "indexed-latency",
          "indexed-1mib-latency", "cache-cold", "cache-warm")) {
        assert(variants.has(name) != skipped.has(name), name)
        if (skipped.has(name)) {
          val key = skipped.get(name).asText().split(" ")(0)
          assert(SpindleConfig.key(key) == null, s"$name skipped for $key, a key this build has")
        }
      }
      for (name <- Seq("local", "store", "store-latency")) assert(variants.has(name), name)
      val local = variants.get("local")
      assert(local.get("bytes_read_per_epoch").isNull, "local disk is the uncounted reference")
      assert(local.get("images_per_s_vs_local").asDouble() == 1.0)
      val runs = r.get("runs").asScala.toSeq
      for (name <- variants.fieldNames().asScala.toSeq.filter(_ != "local")) {
        val v = variants.get(name)
        val run = runs.find(_.get("variant").asText() == name).get
        checkRun(name, run, dataset)
        assert(v.get("bytes_read_ratio").asDouble() ==
          v.get("bytes_read_per_epoch").asDouble() / dataset, name)
        assert(v.get("images_per_s").asDouble() > 0, name)
        if (v.get("epoch").asInt() == 0) {
          assert(v.get("same_content_as_local").asBoolean(), s"$name fed other bytes than local disk")
          assert(v.get("feed_digest").asText() == local.get("feed_digest").asText(), name)
        }
      }
      assert(variants.get("store").get("bytes_read_per_epoch").asLong() ==
        variants.get("store-latency").get("bytes_read_per_epoch").asLong(), "latency changes no read")
      assert(variants.get("store-latency").get("peak_concurrent_requests").asInt() >= 1)
      assert(variants.get("store").get("peak_concurrent_requests").asInt() == 0, "no latency, no wait")
      // The member index and the shard cache (issue 31): the index reads about the data set once
      // (its samples, 40 KB or more, are farther apart than the default gap), the warm cache nothing.
      assert(variants.get("indexed").get("bytes_read_ratio").asDouble() <= 1.1)
      assert(variants.get("indexed").get("bytes_read_per_epoch").asLong() <
        variants.get("store").get("bytes_read_per_epoch").asLong())
      assert(variants.get("cache-cold").get("bytes_read_ratio").asDouble() >= 1.0)
      assert(variants.get("cache-warm").get("bytes_read_ratio").asDouble() <= 0.05)
    }
  }

  /** One counted run's figures against each other and the data set. */
  private def checkRun(name: String, run: JsonNode, dataset: Long): Unit = {
    val bytes = run.get("bytes_read_per_epoch").asLong()
    val requests = run.get("read_requests").asLong()
    val opens = run.get("shard_opens").asLong()
    val samples = run.get("samples").asLong()
    assert(run.get("dataset_bytes").asLong() == dataset, name)
    assert(run.get("bytes_read_ratio").asDouble() == bytes.toDouble / dataset, name)
    assert(run.get("requests_per_sample").asDouble() == requests.toDouble / samples, name)
    assert(run.get("quarantined").asLong() == 0 && run.get("images").asLong() == samples, name)
    assert(samples == 48, s"$name: DROP_LAST keeps all 48 samples of 4 ranks x batches of 4")
    if (name != "cache-warm") { // a warm cache's epoch reads its local copies, not the store
      assert(opens >= 4, s"$name: every shard is opened at least once in an epoch")
      assert(requests >= opens, s"$name: each open that is read costs a request")
      assert(bytes >= run.get("images").asLong() * 40000L, s"$name: at least the images' bytes")
    }
    assert(run.get("manifest_count_requests").asLong() >= 4, s"$name: counting reads every shard")
    assert(run.get("batches_hashed").asInt() == samples / 4, name)
  }

  test("an unknown variant, a world size under 4 or a missing --tars is a usage error, named") {
    val (code, err) = run("--variants", "local,nope", "--rounds", "1")
    assert(code == 2, err)
    assert(err.contains("unknown variant 'nope'") && err.contains("store-latency"), err)
    val (ranks, ranksErr) = run("--world-size", "3")
    assert(ranks == 2 && ranksErr.contains("Invalid --world-size: 3"), ranksErr)
    val (tars, tarsErr) = run("--tars", "/nonexistent/spindle-tars")
    assert(tars == 2 && tarsErr.contains("Invalid --tars: /nonexistent/spindle-tars"), tarsErr)
  }
}
