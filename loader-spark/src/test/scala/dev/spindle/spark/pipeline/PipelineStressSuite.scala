package dev.spindle.spark.pipeline

import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.pipeline.Fixtures._
import org.scalatest.funsuite.AnyFunSuite

class PipelineStressSuite extends AnyFunSuite {
  private final case class PipeShape(concurrency: Int, order: Order, io: Boolean, failRate: Int)

  private def fails(stage: Int, id: Int, rate: Int): Boolean = ((id * 31 + stage * 17) % 97) < rate

  test("random pipelines deliver every item exactly once or quarantine it, and leak nothing") {
    val seed = System.nanoTime()
    val rnd = new Random(seed)
    // More runs: mvn ... -Dspindle.stress.runs=N
    val runs = Integer.getInteger("spindle.stress.runs", 300).intValue
    var closedEarly = 0
    for (run <- 0 until runs) {
      val n = rnd.nextInt(300)
      val pipes = Seq.fill(rnd.nextInt(5))(PipeShape(1 + rnd.nextInt(6),
        if (rnd.nextBoolean()) Order.INPUT else Order.COMPLETION, rnd.nextInt(4) == 0,
        rnd.nextInt(12)))
      val batch = if (rnd.nextInt(3) == 0) Some((1 + rnd.nextInt(7), rnd.nextBoolean())) else None
      val stopAfter = if (rnd.nextInt(5) == 0) Some(rnd.nextInt(20)) else None
      val context = s"run $run of seed $seed: n=$n pipes=$pipes batch=$batch stopAfter=$stopAfter"

      val open = new AtomicInteger
      val ids = new AtomicInteger
      val source = Iterator.continually(new Tracked(ids.getAndIncrement(), open)).take(n).asJava
      var b: PipelineBuilder[Tracked] = Pipeline.source("read", source)
        .queueItems(1 + rnd.nextInt(8)).failureBudget(FailureBudget.count(Long.MaxValue))
      pipes.zipWithIndex.foreach { case (p, s) =>
        val work = op[Tracked, Tracked] { t =>
          if (ThreadLocalRandom.current().nextInt(4) == 0) Thread.sleep(0, 200000)
          if (fails(s, t.id, p.failRate)) throw new IllegalStateException(s"fail ${t.id}")
          t
        }
        b = if (p.io) b.pipeIo(s"p$s", work, p.concurrency, p.order)
            else b.pipe(s"p$s", work, p.concurrency, p.order)
      }
      val it: MappedIterator[_, Seq[Tracked]] = batch match {
        case Some((size, keep)) =>
          val agg = b.aggregate("batch", size, if (keep) LastBatch.KEEP else LastBatch.DROP)
          val pit = agg.build().start()
          new MappedIterator(pit, (l: java.util.List[Tracked]) => l.asScala.toSeq)
        case None => new MappedIterator(b.build().start(), (t: Tracked) => Seq(t))
      }
      val out = Vector.newBuilder[Seq[Tracked]]
      try {
        var taken = 0
        while (stopAfter.forall(taken < _) && it.hasNext) { out += it.next(); taken += 1 }
      } finally it.close()
      val got = out.result()
      got.foreach(_.foreach(_.close()))

      assert(open.get == 0, s"items left open; $context")
      assert(it.active() == 0, s"ops still running; $context")
      if (stopAfter.exists(_ <= got.size) && got.size < n) closedEarly += 1
      else {
        val survivors = (0 until n).filterNot(id => pipes.zipWithIndex.exists {
          case (p, s) => fails(s, id, p.failRate) })
        assert(it.quarantine().size == n - survivors.size, context)
        val expected = batch match {
          case Some((size, keep)) =>
            survivors.grouped(size).filter(g => keep || g.size == size).toSeq
          case None => survivors.map(Seq(_))
        }
        if (pipes.forall(_.order == Order.INPUT)) {
          assert(got.map(_.map(_.id)) == expected, context)
        } else {
          val ids = got.flatten.map(_.id)
          assert(ids.distinct.size == ids.size, s"an item was delivered twice; $context")
          assert(ids.toSet.subsetOf(survivors.toSet), context)
          assert(got.map(_.size) == expected.map(_.size), context)
          if (!batch.exists(!_._2)) assert(ids.sorted == survivors, context)
        }
      }
    }
    assert(RunningPipeline.live() == 0)
    println(s"[PipelineStressSuite] $runs random pipelines, $closedEarly closed early, seed $seed")
  }

  /** Maps items and forwards everything else, so every run is checked through one type. */
  private final class MappedIterator[A, B](inner: PipelineIterator[A], f: A => B)
      extends PipelineIterator[B] {
    def hasNext: Boolean = inner.hasNext
    def next(): B = f(inner.next())
    def stats(): PipelineStats = inner.stats()
    def quarantine(): java.util.List[QuarantineEntry] = inner.quarantine()
    def close(): Unit = inner.close()
    def active(): Int = inner.asInstanceOf[RunningPipeline[_]].active()
  }
}
