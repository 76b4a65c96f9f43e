package dev.spindle.spark.plan

import org.scalatest.funsuite.AnyFunSuite

import Plans._

class ShuffleQualitySuite extends AnyFunSuite {
  private val m = manifest(Seq.fill(100)(100L))
  private val n = 10000

  private def order(seed: Long, epoch: Int, window: Int = 1000): Array[Long] =
    delivered(EpochPlan.create(m, new PlanSpec(seed, epoch, 1, 1, Remainder.DROP_LAST, window)).rank(0))

  private def samePlaces(a: Array[Long], b: Array[Long]) = a.indices.count(i => a(i) == b(i))

  test("the order is a permutation that is not the identity") {
    val o = order(1, 0)
    assert(o.sorted.toSeq == (0L until n).toSeq)
    assert(samePlaces(o, Array.tabulate(n)(_.toLong)) < n / 100)
  }

  test("the order differs between epochs and between seeds") {
    assert(samePlaces(order(1, 0), order(1, 1)) < n / 100)
    assert(samePlaces(order(1, 0), order(2, 0)) < n / 100)
    assert(order(1, 0).toSeq == order(1, 0).toSeq)
  }

  test("a sample's position is spread across the epoch") {
    // Correlation between dataset index and position within one epoch is weak...
    val o = order(5, 0)
    val pos = new Array[Double](n)
    o.indices.foreach(p => pos(o(p).toInt) = p)
    val mean = (n - 1) / 2.0
    val cov = (0 until n).map(i => (i - mean) * (pos(i) - mean)).sum
    val variance = (0 until n).map(i => (i - mean) * (i - mean)).sum
    assert(math.abs(cov / variance) < 0.2, s"correlation ${cov / variance}")
    // ...and over 16 epochs, a sample visits most quarters of the epoch.
    val quarters = Array.fill(n)(Set.empty[Int])
    for (e <- 0 until 16) {
      val oe = order(5, e)
      oe.indices.foreach(p => quarters(oe(p).toInt) += p * 4 / n)
    }
    val meanQuarters = quarters.map(_.size).sum.toDouble / n
    assert(meanQuarters > 3.5, s"mean quarters visited $meanQuarters")
  }

  test("within a window, neighbours in a shard are scattered") {
    // With the window the size of a shard or more, consecutive positions rarely hold consecutive samples.
    val o = order(9, 0)
    val adjacent = (1 until n).count(i => o(i) == o(i - 1) + 1)
    assert(adjacent < n / 50, s"$adjacent adjacent pairs")
    // With window 1, only the shard order is shuffled: each shard stays in order (99 adjacent
    // pairs per shard), plus the odd shard that happens to follow its neighbour.
    val w1 = order(9, 0, window = 1)
    val adjacentW1 = (1 until n).count(i => w1(i) == w1(i - 1) + 1)
    assert(adjacentW1 >= n - 100 && adjacentW1 < n - 90, s"$adjacentW1 adjacent pairs")
    assert(w1.grouped(100).forall(s => s.toSeq == (s(0) until s(0) + 100).toSeq))
  }
}
