package dev.spindle.spark.pipeline

import java.nio.file.Files

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.pipeline.Fixtures._
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/** The trace writer on its own: sampling bound, JSON shape, and off by default. */
class TraceWriterSuite extends AnyFunSuite {
  test("past half its bound the writer samples ever more sparsely and never exceeds it") {
    val file = Files.createTempFile("spindle-trace", ".json")
    val w = new TraceWriter(file, 1000)
    for (i <- 0 until 100000) w.span("decode", i * 1000L, i * 1000L + 500)
    val kept = w.written()
    w.close()
    // 500 kept, then 250 of 500, 125 of 500, ... : close to the bound, never above it.
    assert(kept <= 1000 && kept > 900, kept)
    val events = new ObjectMapper().readTree(file.toFile).get("traceEvents").asScala.toSeq
    assert(events.count(_.get("ph").asText == "X") == kept)
    assert(events.count(_.get("ph").asText == "M") == 1, "one thread, named once")
    Files.delete(file)
  }

  test("a pipeline run while tracing gives spans of every stage; when off, none are written") {
    assert(Trace.writer == null, "tracing is off by default")
    val file = Files.createTempFile("spindle-trace", ".json")
    Trace.start(file, 100000)
    try {
      val e = intercept[IllegalStateException](Trace.start(file, 1))
      assert(e.getMessage.contains(file.toString))
      val it = Pipeline.source("read", ints(200))
        .pipe("square", op[Integer, Integer](i => i * i), 3, Order.INPUT)
        .aggregate("batch", 10, LastBatch.KEEP)
        .build().start()
      assert(drain(it).size == 20)
    } finally Trace.stop()
    assert(Trace.writer == null)
    val events = new ObjectMapper().readTree(file.toFile).get("traceEvents").asScala.toSeq
    val spans = events.filter(_.get("ph").asText == "X")
    val byStage = spans.groupBy(_.get("name").asText).map { case (k, v) => k -> v.size }
    assert(byStage.get("read").contains(200) && byStage.get("square").contains(200), byStage)
    assert(byStage.get("batch").contains(20) && byStage.contains("sink"), byStage)
    val names = events.filter(_.get("ph").asText == "M").map(_.get("tid").asLong).toSet
    assert(spans.map(_.get("tid").asLong).toSet.subsetOf(names), "every track is named")
    assert(spans.forall(s => s.get("dur").asDouble >= 0 && s.get("ts").asDouble >= 0))
    val counters = events.filter(_.get("ph").asText == "C")
    assert(counters.nonEmpty && counters.head.get("args").has("square"), counters)
    Files.delete(file)
  }
}
