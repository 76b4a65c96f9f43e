package dev.spindle.spark.pipeline

import org.scalatest.funsuite.AnyFunSuite

import dev.spindle.spark.pipeline.Fixtures._

/** An aggregate whose groups also close at an item that ends one (a token budget's batches). */
class PipelineAggregateEndsSuite extends AnyFunSuite {
  test("aggregate closes a group at an ending item, or at its size, whichever comes first") {
    // groups end after 1, 2, 6 and 9; size 3 closes 3..5 before 6 would
    val ends = Set(1, 2, 6, 9)
    val out = drain(Pipeline.source("read", ints(12))
      .aggregate("batch", 3, LastBatch.KEEP, (i: Integer) => ends.contains(i.intValue))
      .build().start()).map(_.toArray.toSeq)
    assert(out == Seq(Seq(0, 1), Seq(2), Seq(3, 4, 5), Seq(6), Seq(7, 8, 9), Seq(10, 11)))
  }
}
