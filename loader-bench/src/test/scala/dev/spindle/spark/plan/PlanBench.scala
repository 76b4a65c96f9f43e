package dev.spindle.spark.plan

import java.util.{List => JList}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.shard.{FolderEntry, Shard, ShardFormat}

import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.manifest.FileFacts
import dev.spindle.spark.manifest.ManifestCheck
import dev.spindle.spark.manifest.ManifestCodec
import dev.spindle.spark.manifest.ManifestFingerprint
/**
 * Benchmark, not a test (it asserts nothing and is not run by Surefire): the cost of planning an
 * ImageNet-sized epoch (1,281,167 samples). Reports the median of 7 runs after 3 warm-up runs.
 *
 * Run: see the report; `java -cp <test classpath> dev.spindle.spark.plan.PlanBench`.
 */
object PlanBench {
  private val Samples = 1281167

  private def time[T](what: String)(f: => T): T = {
    var result: T = f
    for (_ <- 0 until 2) result = f
    val runs = (0 until 7).map { _ =>
      val t0 = System.nanoTime(); result = f; (System.nanoTime() - t0) / 1e6
    }.sorted
    println(f"$what%-58s median ${runs(3)}%8.1f ms  (min ${runs.head}%.1f, max ${runs.last}%.1f)")
    result
  }

  private def tarManifest(): Manifest = {
    val shards = (0 until 1282).map { i =>
      val n = if (i < 1281) 1000L else (Samples - 1281000).toLong
      new Shard(f"file:/data/imagenet/train-$i%05d.tar", ShardFormat.TAR, n * 110000L, 1700000000000L, n, JList.of())
    }
    new Manifest("file:/data/imagenet", shards.asJava, JList.of())
  }

  private def folderManifest(): Manifest = {
    val perShard = 1000
    val shards = (0 until (Samples + perShard - 1) / perShard).map { s =>
      val entries = (s * perShard until math.min(Samples, (s + 1) * perShard)).map { i =>
        new FolderEntry(f"n${i / 1281}%08d/n${i / 1281}%08d_$i%d.JPEG", i / 1281)
      }
      new Shard("file:/data/imagenet/train", ShardFormat.IMAGE_FOLDER, entries.size * 110000L, 1700000000000L,
        entries.size.toLong, entries.asJava)
    }
    new Manifest("file:/data/imagenet/train", shards.asJava, (0 until 1000).map(c => f"n$c%08d").asJava)
  }

  def main(args: Array[String]): Unit = {
    println(s"java ${System.getProperty("java.version")}, ${Runtime.getRuntime.availableProcessors()} CPUs, " +
      s"max heap ${Runtime.getRuntime.maxMemory() >> 20} MB")
    val tars = tarManifest()
    val spec = PlanSpec.of(42, 0, 8, 256, Remainder.DROP_LAST)
    time("fingerprint, 1282 tar shards")(ManifestFingerprint.of(tars))
    time("epoch order only (shard order + 16384-sample windows)")(
      MaterializedPlan.epochOrder(tars.offsets(), 42, 0, PlanSpec.DEFAULT_SHUFFLE_WINDOW))
    val plan = time("EpochPlan.create, 1.28M samples, 8 ranks x 256, DROP_LAST")(EpochPlan.create(tars, spec))
    time("EpochPlan.create, same, PAD")(EpochPlan.create(tars, new PlanSpec(42, 0, 8, 256, Remainder.PAD, PlanSpec.DEFAULT_SHUFFLE_WINDOW)))
    val state = plan.stateAfter(Array.fill(8)(300))
    time("resume 8 -> 8 at batch 300 (exact tail)")(state.resume(tars, 8))
    time("resume 8 -> 6 at batch 300 (re-split)")(state.resume(tars, 6))
    val r0 = plan.rank(0)
    time(s"ReadPlan of rank 0's whole epoch (${r0.samples()} samples)")(r0.readPlan(tars.offsets(), 0, r0.batches()))
    time("ReadPlan of one batch of 256")(r0.readPlan(tars.offsets(), 10, 11))
    val order = MaterializedPlan.epochOrder(tars.offsets(), 1, 0, 1)
    time("Digest of 1.28M indices")(Digest.of(order))
    println(s"loader state JSON, 8 ranks: ${state.toJson().length} bytes")
    val shards = r0.readPlan(tars.offsets(), 0, r0.batches()).shards().size()
    println(s"shards touched by rank 0 of 8: $shards of 1282")

    val folder = folderManifest()
    time("fingerprint, image folder with 1.28M entries")(ManifestFingerprint.of(folder))
    val json = time("ManifestCodec.toJson, image folder, 1.28M entries")(ManifestCodec.toJson(folder))
    println(s"manifest JSON, image folder: ${json.length >> 20} MB; tar manifest: " +
      s"${ManifestCodec.toJson(tars).length >> 10} KB")
    time("ManifestCodec.fromJson, image folder, 1.28M entries")(ManifestCodec.fromJson(json))
    val listing = folder.shards().asScala.flatMap(s => s.entries().asScala.map(e =>
      new FileFacts(ManifestCheck.join(s.uri(), e.path()), 110000L, 1700000000000L))).asJava
    time("ManifestCheck.compare, 1.28M files")(ManifestCheck.compare(folder, listing))
  }
}
