package dev.spindle.spark.plan

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import Plans._

/**
 * Plans derived per slice (O(shards + ranks) on the driver) against the materializing
 * implementation they replaced ({@link MaterializedPlan}): the same indices, padding and digests
 * for random manifests, settings and resumes; and a slice derivation that rebuilds only the
 * windows it overlaps.
 */
class DerivedPlanSuite extends AnyFunSuite {
  private def spec(rnd: Random, samples: Long, maxWorld: Int = 16): PlanSpec = {
    var s: PlanSpec = null
    while (s == null || samples < s.worldSize().toLong * s.batchSize() ||
      (s.remainder() == Remainder.EXACT && samples % (s.worldSize().toLong * s.batchSize()) != 0)) {
      val window = Seq(1, 2, 7, 64, 1000, 16384, 1 << 20)(rnd.nextInt(7))
      s = new PlanSpec(rnd.nextLong(), rnd.nextInt(100), 1 + rnd.nextInt(maxWorld),
        1 + rnd.nextInt(16), Remainder.values()(rnd.nextInt(3)), window)
    }
    s
  }

  private def sizes(rnd: Random, shards: Int, max: Int): Seq[Long] =
    Seq.fill(shards)(if (rnd.nextInt(8) == 0) 0L else rnd.nextInt(max + 1).toLong)

  /** Every rank of {@code plan} equals the reference's: entries, real count, first batch, digest. */
  private def assertSame(plan: EpochPlan, ref: Seq[MaterializedPlan.Rank], what: => String): Unit = {
    assert(plan.worldSize() == ref.size, what)
    for (r <- ref.indices) {
      val got = plan.rank(r)
      val want = ref(r)
      assert(got.samples() == want.indices.length, s"$what, rank $r")
      assert(got.realSamples() == want.real, s"$what, rank $r")
      assert(got.firstBatch() == want.firstBatch, s"$what, rank $r")
      assert(delivered(got).sameElements(want.delivered(got.batchSize())), s"$what, rank $r")
      assert(got.digest() == Digest.of(want.delivered(got.batchSize())), s"$what, rank $r")
    }
  }

  test("fresh plans equal the materialized reference for random shards, settings and windows") {
    val rnd = new Random(2201)
    for (trial <- 0 until 400) {
      val m = manifest(sizes(rnd, 1 + rnd.nextInt(40), 1 + rnd.nextInt(300)))
      if (m.totalSamples() > 0) {
        val s = spec(rnd, m.totalSamples())
        assertSame(EpochPlan.create(m, s), MaterializedPlan.create(m, s), s"trial $trial, $s")
      }
    }
  }

  test("resumes over up to four legs equal the materialized reference") {
    val rnd = new Random(2202)
    var resumed = 0
    for (trial <- 0 until 300) {
      val m = manifest(sizes(rnd, 1 + rnd.nextInt(30), 1 + rnd.nextInt(200)))
      if (m.totalSamples() > 0) {
        var plan = EpochPlan.create(m, spec(rnd, m.totalSamples()))
        for (_ <- 0 until 1 + rnd.nextInt(4)) {
          val consumed = Array.tabulate(plan.worldSize()) { r =>
            val first = plan.rank(r).firstBatch()
            first + rnd.nextInt(plan.batchesPerRank() - first + 1)
          }
          val state = LoaderState.fromJson(plan.stateAfter(consumed).toJson())
          val world = if (rnd.nextInt(4) == 0) plan.worldSize() else 1 + rnd.nextInt(12)
          val next = scala.util.Try(state.resume(m, world))
          val ref = scala.util.Try(MaterializedPlan.resume(state, m, world))
          assert(next.isSuccess == ref.isSuccess, s"trial $trial: $next vs $ref")
          if (next.isSuccess) {
            assert(next.get.epoch() == ref.get._1, s"trial $trial")
            assertSame(next.get, ref.get._2, s"trial $trial, resume to $world from $state")
            plan = next.get
            resumed += 1
          }
        }
      }
    }
    assert(resumed > 300)
  }

  test("100,000 small shards: fresh and resumed plans equal the reference") {
    val rnd = new Random(2203)
    val m = manifest(sizes(rnd, 100000, 20))
    for (trial <- 0 until 3) {
      val s = spec(rnd, m.totalSamples(), maxWorld = 256)
      val plan = EpochPlan.create(m, s)
      assertSame(plan, MaterializedPlan.create(m, s), s"trial $trial, $s")
      val consumed = Array.fill(plan.worldSize())(rnd.nextInt(plan.batchesPerRank()))
      val state = plan.stateAfter(consumed)
      val world = 1 + rnd.nextInt(300)
      assertSame(state.resume(m, world), MaterializedPlan.resume(state, m, world)._2,
        s"trial $trial, resume to $world")
    }
  }

  test("a slice derivation rebuilds exactly the windows its batches overlap, and no others") {
    val window = 1000
    val m = manifest(Seq.fill(2000)(500L)) // 1,000,000 samples, 1,000 windows
    val s = new PlanSpec(7, 3, 8, 100, Remainder.DROP_LAST, window)
    val plan = EpochPlan.create(m, s)
    val reference = MaterializedPlan.create(m, s)
    val perRank = plan.rank(0).samples().toLong
    for ((r, a, b) <- Seq((0, 0, 1), (3, 17, 18), (5, 100, 250), (7, 1240, 1250))) {
      val sequence = plan.rank(r).sequence()
      val before = sequence.windowsDerived()
      val slice = plan.rank(r).indices(a, b)
      val first = r * perRank + a * 100L
      val last = r * perRank + b * 100L - 1
      assert(sequence.windowsDerived() - before == last / window - first / window + 1,
        s"rank $r, batches [$a, $b)")
      assert(slice.sameElements(reference(r).indices.slice(a * 100, b * 100)))
    }
  }

  test("a padded slice re-derives no window its real entries already rebuilt") {
    val m = manifest(Seq(3L, 0L, 5L))
    val s = new PlanSpec(1, 0, 2, 3, Remainder.PAD, 4) // 8 samples: shares 4, 4 padded to 6
    val plan = EpochPlan.create(m, s)
    val r = plan.rank(1)
    val before = r.sequence().windowsDerived()
    val got = r.indices(0, 2)
    // Real entries 4..7 are window 1; the padding repeats 4 and 5: no second derivation.
    assert(r.sequence().windowsDerived() - before == 1)
    assert(got.sameElements(MaterializedPlan.create(m, s)(1).indices))
  }

  test("a plan ships O(shards + ranks) bytes and derives the same batches where it arrives") {
    val m = manifest(Seq.fill(10000)(1000L)) // 10 M samples
    val s = new PlanSpec(5, 1, 512, 256, Remainder.PAD, PlanSpec.DEFAULT_SHUFFLE_WINDOW)
    val plan = EpochPlan.create(m, s)
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(plan)
    out.close()
    // The offsets (8 bytes per shard) and a few dozen bytes per rank, not 8 bytes per sample.
    assert(bytes.size() < 8 * 10001 + 100 * 512 + 4096, s"${bytes.size()} bytes")
    val back = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[EpochPlan]
    for (r <- Seq(0, 255, 511)) {
      assert(back.rank(r).indices(3, 5).sameElements(plan.rank(r).indices(3, 5)))
    }
  }

  test("shard counts packed for shipping decode to the same offsets, empty and huge shards too") {
    val rnd = new Random(2204)
    for (n <- Seq(0, 1, 2, 1000)) {
      val counts = Seq.fill(n)(Seq(0L, 1L, 127L, 128L, 1000L, 1L << 40, rnd.nextInt(100000).toLong)(rnd.nextInt(7)))
      val offsets = counts.scanLeft(0L)(_ + _).toArray
      assert(ShardCounts.decode(ShardCounts.encode(offsets)).sameElements(offsets))
    }
  }

  test("an epoch beyond 2^31 samples is planned without materializing it") {
    val m = manifest(Seq.fill(3000)(1000000L)) // 3 billion samples
    val s = new PlanSpec(11, 0, 8192, 256, Remainder.DROP_LAST, PlanSpec.DEFAULT_SHUFFLE_WINDOW)
    val plan = EpochPlan.create(m, s)
    assert(plan.batchesPerRank() == 3000000000L / (8192 * 256))
    val slice = plan.rank(8191).indices(0, 4)
    assert(slice.distinct.length == slice.length)
    assert(slice.forall(i => i >= 0 && i < 3000000000L))
    assert(plan.rank(8191).sequence().windowsDerived() <= 2)
  }
}
