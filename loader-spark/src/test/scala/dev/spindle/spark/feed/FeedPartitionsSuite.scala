package dev.spindle.spark.feed

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.plan.{EpochPlan, LoaderState, Plans}
import org.scalatest.funsuite.AnyFunSuite

class FeedPartitionsSuite extends AnyFunSuite {
  test("partitions cover every rank's remaining batches exactly once, in order, as asked") {
    val rnd = new Random(11)
    for (_ <- 0 until 300) {
      val m = Plans.manifest(Plans.randomSizes(rnd).map(_ + 40))
      val spec = Plans.validSpec(rnd, m.totalSamples())
      var plan = EpochPlan.create(m, spec)
      if (rnd.nextBoolean() && plan.batchesPerRank() > 1) { // a resumed plan starts mid-epoch
        val c = rnd.nextInt(plan.batchesPerRank())
        plan = plan.stateAfter(Array.fill(plan.worldSize())(c)).resume(m, plan.worldSize())
      }
      val first = plan.rank(0).firstBatch()
      val stop = first + rnd.nextInt(plan.batchesPerRank() - first + 1)
      val asked = 1 + rnd.nextInt(12)
      val parts = FeedPartitions.split(plan, stop, asked).asScala.map(_.asScala.toSeq).toSeq
      val units = (stop - first) * plan.worldSize()
      assert(parts.size == math.min(asked, units))
      assert(parts.forall(_.nonEmpty))
      val covered = parts.flatten.flatMap(s => (s.fromBatch until s.toBatch).map(b => (s.rank, b)))
      val expected = for (r <- 0 until plan.worldSize(); b <- first until stop) yield (r, b)
      assert(covered == expected, s"$plan stop $stop parts $asked")
      for (s <- parts.flatten) { // the slice that ends a rank's share reports the share's digest
        assert(s.digestFrom == (if (s.toBatch == stop) first else s.fromBatch), s"$plan stop $stop slice $s")
      }
      val sizes = parts.map(_.map(s => s.toBatch - s.fromBatch).sum)
      assert(sizes.isEmpty || sizes.max - sizes.min <= 1)
    }
  }

  test("zero partitions are refused, naming the value") {
    val m = Plans.manifest(Seq(40))
    val plan = EpochPlan.create(m, FeedData.spec(1, 0, 2, 4))
    val e = intercept[IllegalArgumentException](FeedPartitions.split(plan, 1, 0))
    assert(e.getMessage == "Invalid partitions: 0 (must be >= 1)")
  }
}
