package dev.spindle.spark.plan

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import Plans._

class ReadPlanSuite extends AnyFunSuite {

  /**
   * What a reader does with a read plan: walk each listed shard, "decode" only the listed
   * positions (here: compute the dataset index), put each in its slot, then fill the repeats.
   */
  private def execute(offsets: Array[Long], plan: ReadPlan): Array[Long] = {
    val out = Array.fill(plan.outputSize())(-1L)
    for (read <- plan.shards().asScala) {
      for (i <- read.positions().indices) out(read.slots()(i)) = offsets(read.shard()) + read.positions()(i)
    }
    for (i <- plan.repeatSlots().indices) out(plan.repeatSlots()(i)) = out(plan.repeatSources()(i))
    out
  }

  test("executing a read plan reproduces the planned slice, reading each sample once, in shard order") {
    val rnd = new Random(31)
    forRandomPlans(rnd, 200) { (m, spec, plan) =>
      val offsets = m.offsets()
      for (r <- rankSeqs(plan)) {
        val from = rnd.nextInt(r.batches())
        val to = from + 1 + rnd.nextInt(r.batches() - from)
        val rp = r.readPlan(offsets, from, to)
        assert(execute(offsets, rp).toSeq == r.indices(from, to).toSeq)
        assert(rp.samplesToRead() == r.indices(from, to).distinct.length)
        val shards = rp.shards().asScala.map(_.shard())
        assert(shards == shards.sorted && shards.distinct == shards)
        for (read <- rp.shards().asScala) {
          val p = read.positions()
          assert(p.indices.drop(1).forall(i => p(i) > p(i - 1)), "positions must be strictly increasing")
          assert(p.forall(x => x >= 0 && x < m.shards().get(read.shard()).samples()))
        }
      }
    }
  }

  test("padded repeats are read once and copied") {
    val m = manifest(Seq(5, 0, 4))
    val plan = EpochPlan.create(m, PlanSpec.of(2, 0, 2, 4, Remainder.PAD))
    val r = plan.rank(1)
    assert(r.realSamples() == 4 && r.samples() == 8)
    val rp = r.readPlan(m.offsets(), 0, 2)
    assert(rp.samplesToRead() == 4)
    assert(rp.repeatSlots().sorted.toSeq == Seq(4, 5, 6, 7))
    assert(execute(m.offsets(), rp).toSeq == r.indices(0, 2).toSeq)
    assert(!rp.shards().asScala.exists(_.shard() == 1), "an empty shard is never read")
  }

  test("a resumed rank's read plan never lists the batches it skips") {
    val m = manifest(Seq(300, 300))
    val plan = EpochPlan.create(m, new PlanSpec(4, 0, 2, 10, Remainder.DROP_LAST, 1 << 20))
    val resumed = plan.stateAfter(Array(20, 20)).resume(m, 2)
    val r = resumed.rank(0)
    val rp = r.readPlan(m.offsets(), r.firstBatch(), r.batches())
    assert(rp.samplesToRead() == (r.batches() - 20) * 10)
    val read = rp.shards().asScala.flatMap(s => s.positions().map(p => m.offsets()(s.shard()) + p)).toSet
    assert(read.intersect(plan.rank(0).indices(0, 20).toSet).isEmpty)
  }

  test("per-rank digests are the same for 1, 2 and 4 partitions read by 1, 2 and 4 threads") {
    val m = manifest(Seq(120, 7, 0, 333, 90, 250))
    val plan = EpochPlan.create(m, new PlanSpec(77, 1, 3, 8, Remainder.PAD, 100))
    val expected = rankSeqs(plan).map(_.digest())
    for (partitions <- Seq(1, 2, 4); threads <- Seq(1, 2, 4)) {
      val pool = Executors.newFixedThreadPool(threads)
      try {
        val digests = rankSeqs(plan).map { r =>
          val cuts = (0 to partitions).map(p => r.batches() * p / partitions)
          val tasks = cuts.zip(cuts.drop(1)).map { case (a, b) =>
            pool.submit(new Callable[Array[Long]] {
              def call(): Array[Long] = execute(m.offsets(), r.readPlan(m.offsets(), a, b))
            })
          }
          val d = new Digest()
          tasks.foreach { t => val xs = t.get(60, TimeUnit.SECONDS); d.update(xs, 0, xs.length) }
          d.hex()
        }
        assert(digests == expected, s"$partitions partitions, $threads threads")
      } finally {
        pool.shutdownNow()
      }
    }
  }

  test("an index outside the manifest is refused, naming it") {
    val e = intercept[IllegalArgumentException](ReadPlan.of(Array(0L, 5L), Array(1L, 5L), 0, 2))
    assert(e.getMessage.contains("Invalid sample index 5 (the manifest has 5 samples)"))
  }
}
