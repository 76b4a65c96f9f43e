package dev.spindle.spark.plan

import java.util.{List => JList}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.shard.{Manifest, Shard, ShardFormat}

/** Test helpers: manifests of tar shards with given sizes, random plan inputs, plan walkers. */
object Plans {
  def manifest(sizes: Seq[Long], input: String = "file:/data"): Manifest = {
    val shards = sizes.zipWithIndex.map { case (n, i) =>
      new Shard(f"$input/shard-$i%05d.tar", ShardFormat.TAR, 1000L + n, 1700000000000L + i, n, JList.of())
    }
    new Manifest(input, shards.asJava, JList.of())
  }

  def randomSizes(rnd: Random): Seq[Long] = {
    val shards = 1 + rnd.nextInt(20)
    Seq.fill(shards)(if (rnd.nextInt(8) == 0) 0L else rnd.nextInt(300).toLong)
  }

  def randomSpec(rnd: Random, samples: Long): PlanSpec = {
    val world = 1 + rnd.nextInt(8)
    val batch = 1 + rnd.nextInt(16)
    val remainder = Remainder.values()(rnd.nextInt(3))
    val window = Seq(1, 7, 64, 1000, 1 << 20)(rnd.nextInt(5))
    new PlanSpec(rnd.nextLong(), rnd.nextInt(1000), world, batch, remainder, window)
  }

  /** A random spec whose plan is not refused: EXACT is only drawn when it divides evenly. */
  def validSpec(rnd: Random, samples: Long): PlanSpec = {
    var spec = randomSpec(rnd, samples)
    while (samples < spec.worldSize().toLong * spec.batchSize() ||
      (spec.remainder() == Remainder.EXACT && samples % (spec.worldSize().toLong * spec.batchSize()) != 0)) {
      spec = randomSpec(rnd, samples)
    }
    spec
  }

  /** Real (not padded) entries a rank delivers from its first batch on. */
  def realDelivered(r: RankPlan): Seq[Long] =
    (r.firstBatch() * r.batchSize() until r.realSamples()).map(r.index)

  /** Everything a rank delivers from its first batch on, padding included. */
  def delivered(r: RankPlan): Array[Long] = r.indices(r.firstBatch(), r.batches())

  def rankSeqs(plan: EpochPlan): Seq[RankPlan] = plan.ranks().asScala.toSeq
}
