package dev.spindle.spark.train
import dev.spindle.spark.feed.FeedData._
import dev.spindle.spark.shard.HadoopConf
import dev.spindle.spark.plan.{EpochPlan, LoaderState}
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * Where a restarted `train` run starts every rank, by the checkpoint records its trainers left in
 * the state store: the latest step all ranks have, else the run's start, saying why.
 */
class RestartPointSuite extends AnyFunSuite {
  private val World = 2

  private def withRun(body: (TrainStateStore, RankStart.Legs, EpochPlan, EpochPlan) => Unit): Unit =
    TestFiles.withTempDir("restart-point") { dir =>
      val m = manifest(tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15))) // 65: 8 batches of 4 a rank
      val epoch0 = EpochPlan.create(m, spec(3, 0, World, 4))
      val epoch1 = EpochPlan.create(m, spec(3, 1, World, 4))
      val store = new TrainStateStore(dir.resolve("states").toUri.toString, new HadoopConf(new Configuration()))
      val legs = new RankStart.Legs(TrainInputs.of(m, epoch0.stateAtStart().toJson, 2), World)
      body(store, legs, epoch0, epoch1)
    }

  /** A record as spindle_bridge.checkpoint writes it: (file, state) newest first. */
  private def record(entries: (String, String)*): String =
    entries.map { case (f, s) => s"""{"file": "$f", "state": $s}""" }
      .mkString("""{"format": "spindle-checkpoint-record/1", "checkpoints": [""", ", ", "]}")

  private def at(plan: EpochPlan, rank: Int, batch: Int): String = {
    val consumed = Array.fill(World)(0)
    consumed(rank) = batch
    plan.stateAfter(consumed).toJson
  }

  test("the latest step every rank has: a rank behind its peer's newest checkpoint brings both to its own") {
    withRun { (store, legs, epoch0, epoch1) =>
      store.saveCheckpoint(0, record("/c/r0.pt" -> at(epoch1, 0, 2), "/c/r0.pt.prev" -> at(epoch0, 0, 8)))
      store.saveCheckpoint(1, record("/c/r1.pt" -> at(epoch0, 1, 8), "/c/r1.pt.prev" -> at(epoch0, 1, 4)))
      val p = RestartPoint.choose(store, legs, World)
      assert(p.fromCheckpoints() && p.step() == 8 && p.why() == null)
      assert(p.ranks().get(0).checkpoint() == "/c/r0.pt.prev" && p.ranks().get(1).checkpoint() == "/c/r1.pt")
      assert(LoaderState.fromJson(p.ranks().get(0).state()) == LoaderState.fromJson(at(epoch0, 0, 8)))

      store.saveCheckpoint(1, record("/c/r1.pt" -> at(epoch1, 1, 2), "/c/r1.pt.prev" -> at(epoch0, 1, 8)))
      assert(RestartPoint.choose(store, legs, World).step() == 8 + 2, "both at epoch 1, batch 2")
    }
  }

  test("a rank without a checkpoint, or no step in common: every rank from the run's start, saying why") {
    withRun { (store, legs, epoch0, _) =>
      assert(RestartPoint.choose(store, legs, World).why() == null, "a new run: nothing to say")
      store.saveState(1, at(epoch0, 1, 5)) // the trainers got further, and saved no checkpoint
      val none = RestartPoint.choose(store, legs, World)
      assert(!none.fromCheckpoints() && none.step() == 0 && none.why().contains("no rank saved a checkpoint"))
      assert((0 until World).forall(r => none.ranks().get(r).state() == null && none.ranks().get(r).checkpoint() == null))

      store.saveCheckpoint(0, record("/c/r0.pt" -> at(epoch0, 0, 6)))
      assert(RestartPoint.choose(store, legs, World).why().contains("rank(s) 1 saved no checkpoint"))

      store.saveCheckpoint(1, record("/c/r1.pt" -> at(epoch0, 1, 5), "/c/r1.pt.prev" -> at(epoch0, 1, 3)))
      val apart = RestartPoint.choose(store, legs, World)
      assert(!apart.fromCheckpoints() && apart.why().contains("no step in common (rank 0 at step(s) 6, " +
        "rank 1 at step(s) 5, 3; save at the same steps on every rank)"), apart.why())
    }
  }

  test("a record of another run's plan is refused, naming the rank and the state directory") {
    withRun { (store, legs, _, _) =>
      TestFiles.withTempDir("restart-point-other") { other =>
        val m = manifest(tars(other.resolve("in"), Seq(5, 6)))
        val foreign = EpochPlan.create(m, spec(3, 0, World, 2)).stateAfter(Array(1, 1)).toJson
        store.saveCheckpoint(0, record("/c/r0.pt" -> foreign))
        val e = intercept[IllegalArgumentException](RestartPoint.choose(store, legs, World))
        assert(e.getMessage.contains("Rank 0's checkpoint record in " + store.location()), e.getMessage)
        assert(e.getMessage.contains("is of another plan than this run's: 'batchSize' (2 vs 4), 'manifest'"), e.getMessage)
      }
    }
  }
}
