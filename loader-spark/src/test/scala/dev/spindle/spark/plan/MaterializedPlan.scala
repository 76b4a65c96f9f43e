package dev.spindle.spark.plan

import scala.jdk.CollectionConverters._

import dev.spindle.spark.manifest.Manifest

/**
 * The plan implementation Spindle had before plans were derived per slice, kept as the reference:
 * it materializes the whole epoch (8 bytes per sample) and cuts arrays, step by step as the
 * package documentation states the algorithm. Test code only.
 */
object MaterializedPlan {
  /** One rank: every entry (padding included), how many are real, the first batch to deliver. */
  final case class Rank(indices: Array[Long], real: Int, firstBatch: Int) {
    def delivered(batch: Int): Array[Long] = indices.drop(firstBatch * batch)
    def realRemaining(consumed: Int, batch: Int): Array[Long] =
      indices.slice(math.min(real, consumed * batch), real)
  }

  /** The whole shuffled epoch. */
  def epochOrder(offsets: Array[Long], seed: Long, epoch: Int, window: Int): Array[Long] = {
    val shards = offsets.length - 1
    val total = offsets(shards)
    val sequence = new Array[Long](total.toInt)
    var at = 0
    for (shard <- EpochOrder.shardOrder(shards, seed, epoch); i <- offsets(shard) until offsets(shard + 1)) {
      sequence(at) = i; at += 1
    }
    var block = 0L
    while (block * window < total) {
      val from = (block * window).toInt
      val to = math.min(total, from.toLong + window).toInt
      SplitMix64.stream(seed, epoch, SplitMix64.WINDOW, block).shuffle(sequence, from, to)
      block += 1
    }
    sequence
  }

  def fresh(q: Array[Long], spec: PlanSpec): Seq[Rank] = {
    val n = q.length
    val round = spec.worldSize().toLong * spec.batchSize()
    require(n >= round, s"Refused plan: $n samples, zero batches per rank")
    require(spec.remainder() != Remainder.EXACT || n % round == 0, s"Refused plan: EXACT, $n samples")
    if (spec.remainder() == Remainder.PAD) padded(q, spec.worldSize(), spec.batchSize())
    else {
      val perRank = spec.freshBatchesPerRank(n) * spec.batchSize()
      (0 until spec.worldSize()).map(r => Rank(q.slice(r * perRank, (r + 1) * perRank), perRank, 0))
    }
  }

  def padded(q: Array[Long], ranks: Int, batch: Int): Seq[Rank] = {
    val n = q.length
    val round = ranks.toLong * batch
    val perRank = ((n + round - 1) / round).toInt * batch
    val base = n / ranks
    val extra = n % ranks
    (0 until ranks).map { r =>
      val start = r * base + math.min(r, extra)
      val share = base + (if (r < extra) 1 else 0)
      val part = new Array[Long](perRank)
      System.arraycopy(q, start, part, 0, share)
      for (j <- 0 until perRank - share) {
        part(share + j) = if (share > 0) q(start + j % share) else q(j % n)
      }
      Rank(part, share, 0)
    }
  }

  def remaining(ranks: Seq[Rank], consumed: Array[Int], batch: Int): Array[Long] =
    ranks.indices.flatMap(r => ranks(r).realRemaining(consumed(r), batch)).toArray

  /** The fresh plan of an epoch. */
  def create(m: Manifest, spec: PlanSpec): Seq[Rank] =
    fresh(epochOrder(m.offsets(), spec.seed(), spec.epoch(), spec.shuffleWindow()), spec)

  /** The plan that continues {@code state} with {@code world} ranks (package doc, "Resume"). */
  def resume(state: LoaderState, m: Manifest, world: Int): (Int, Seq[Rank]) = {
    var legs = state.legs().asScala.toSeq
    if (legs.last.batchesConsumed().forall(_ == 0)) legs = legs.dropRight(1)
    if (legs.isEmpty) return (state.epoch(), create(m, state.spec().withWorldSize(world)))
    val b = state.batchSize()
    var split = fresh(epochOrder(m.offsets(), state.seed(), state.epoch(), state.shuffleWindow()),
      state.spec().withWorldSize(legs.head.worldSize()))
    for (k <- 1 until legs.size) {
      split = padded(remaining(split, legs(k - 1).batchesConsumed(), b), legs(k).worldSize(), b)
    }
    val last = legs.last.batchesConsumed()
    val rest = remaining(split, last, b)
    if (rest.isEmpty) {
      (state.epoch() + 1, create(m, state.spec().withEpoch(state.epoch() + 1).withWorldSize(world)))
    } else if (world == last.length && last.forall(_ == last(0))) {
      (state.epoch(), split.map(_.copy(firstBatch = last(0))))
    } else (state.epoch(), padded(rest, world, b))
  }
}
