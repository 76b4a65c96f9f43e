package dev.spindle.spark.train
import dev.spindle.spark.feed.FeedData._
import dev.spindle.spark.plan.{EpochPlan, LoaderState}
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/**
 * How far a train run's ranks got, by their saved states: the count a restarted run's progress
 * line continues from (batches since the run began, as the run's total counts them).
 */
class RankStartSuite extends AnyFunSuite {
  test("batches since the run began: within the first leg, in later epochs, from a resumed start") {
    TestFiles.withTempDir("rank-start") { dir =>
      val m = manifest(tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15))) // 65: 8 batches of 4 a rank
      val epoch0 = EpochPlan.create(m, spec(3, 0, 2, 4))
      val epoch1 = EpochPlan.create(m, spec(3, 1, 2, 4))
      assert(epoch0.batchesPerRank() == 8)
      def since(start: LoaderState, rank: Int, saved: LoaderState): Long =
        RankStart.batchesSinceRunStart(rank, 2, TrainInputs.of(m, start.toJson, 3),
          if (saved == null) null else saved.toJson)

      val fresh = epoch0.stateAtStart()
      assert(since(fresh, 0, null) == 0)
      assert(since(fresh, 0, epoch0.stateAfter(Array(3, 5))) == 3)
      assert(since(fresh, 1, epoch0.stateAfter(Array(3, 5))) == 5)
      assert(since(fresh, 0, epoch1.stateAfter(Array(2, 0))) == 8 + 2)

      val resumed = epoch0.stateAfter(Array(2, 2)) // the run itself resumed mid-epoch
      val leg = resumed.resume(m, 2)
      assert(since(resumed, 0, leg.stateAfter(Array(6, 4))) == 4)
      assert(since(resumed, 1, leg.stateAfter(Array(6, 4))) == 2)
      val epoch2 = EpochPlan.create(m, spec(3, 2, 2, 4))
      assert(since(resumed, 0, epoch2.stateAfter(Array(1, 1))) == (8 - 2) + 8 + 1)
    }
  }

  test("the driver's count over every rank plans each epoch once, whatever the world size") {
    TestFiles.withTempDir("rank-start-legs") { dir =>
      val m = manifest(tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15)))
      val world = 4
      val start = EpochPlan.create(m, spec(3, 0, world, 2)).stateAtStart()
      val in = TrainInputs.of(m, start.toJson, 3)
      val saved = (0 until world).map(r => EpochPlan.create(m, spec(3, r % 2, world, 2))
        .stateAfter(Array.fill(world)(r)).toJson)
      val legs = new RankStart.Legs(in, world)
      val counted = (0 until world).map(r => RankStart.batchesSinceRunStart(r, legs, saved(r)))
      assert(counted == (0 until world).map(r => RankStart.batchesSinceRunStart(r, world, in, saved(r))))
      assert(counted == Seq(0L, 8 + 1, 2, 8 + 3))
      assert(legs.of(0) eq legs.first())
      assert(legs.of(1) eq legs.of(1), "each epoch's plan made once")
    }
  }
}
