package dev.spindle.spark.plan

import java.util.{List => JList}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.manifest.Manifest

import dev.spindle.spark.shard.{Shard, ShardFormat}
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

  /**
   * Calls `check` with random manifests that hold samples, each with a valid spec and its plan,
   * drawn from `rnd` in `cases` tries (a manifest without samples is skipped).
   */
  def forRandomPlans(rnd: Random, cases: Int)(check: (Manifest, PlanSpec, EpochPlan) => Unit): Unit =
    for (_ <- 0 until cases) {
      val m = manifest(randomSizes(rnd))
      if (m.totalSamples() > 0) {
        val spec = validSpec(rnd, m.totalSamples())
        check(m, spec, EpochPlan.create(m, spec))
      }
    }

  /** Real (not padded) entries a rank delivers from its first batch on. */
  def realDelivered(r: RankPlan): Seq[Long] =
    (r.firstBatch() * r.batchSize() until r.realSamples()).map(r.index)

  /** Everything a rank delivers from its first batch on, padding included. */
  def delivered(r: RankPlan): Array[Long] = r.indices(r.firstBatch(), r.batches())

  def rankSeqs(plan: EpochPlan): Seq[RankPlan] = plan.ranks().asScala.toSeq
}
