package dev.spindle.spark.metrics

import java.nio.file.Files
import java.time.Duration

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.gpu.device.{NormalizeSpec, SharedMemoryDevice}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder}
import dev.spindle.spark.batch.ImageBatch
import dev.spindle.spark.testkit.TestFiles
import org.apache.arrow.memory.RootAllocator
import org.apache.spark.SparkConf
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/**
 * An executor's trace (started as the plugin starts it) holds a `feeder copy` span per batch a
 * real host feeder copied, on the feeder's copy thread, with device, slot and bytes; once the
 * trace stops, copies write nothing more.
 */
class FeederTraceSuite extends AnyFunSuite {
  test("feeder copies are spans of the executor's trace, on the copy thread") {
    TestFiles.withTempDir("feeder-trace") { dir =>
      val file = dir.resolve("trace.json")
      val alloc = new RootAllocator()
      val feeder = GpuFeeder.open(new SharedMemoryDevice(),
        FeederConfig.of(4, NormalizeSpec.raw(8, 8, 3)).withSlots(2))
      val batch = new ImageBatch(alloc, 8, 8, 3, 4)
      def pass(rows: Int): Unit = {
        (0 until rows).foreach(i => batch.setRow(i, i, s"k$i", i))
        feeder.offer(batch.seal(rows), Duration.ofSeconds(30))
        batch.reset()
        feeder.next(Duration.ofSeconds(30)).close()
      }
      try {
        Traces.start(new SparkConf(false).set("spark.spindle.trace.file", file.toString), "driver")
        try Seq(4, 3, 4).foreach(pass)
        finally Traces.stop()
        pass(2) // after the trace: not written, and no failure
      } finally {
        feeder.close()
        batch.close()
        alloc.close()
      }
      val events = new ObjectMapper().readTree(file.toFile).get("traceEvents").asScala.toSeq
      val copies = events.filter(e => e.get("name").asText == "feeder copy")
      assert(copies.map(_.get("args").get("bytes").asLong) ==
        Seq(4, 3, 4).map(rows => rows * (8L * 8 * 3) + 8L * rows))
      assert(copies.forall(c => c.get("ph").asText == "X" && c.get("cat").asText == "feeder"
        && c.get("dur").asDouble >= 0 && Set(0, 1).contains(c.get("args").get("slot").asInt)))
      val tids = copies.map(_.get("tid").asLong).toSet
      val names = events.filter(e => e.get("ph").asText == "M" && tids.contains(e.get("tid").asLong))
        .map(_.get("args").get("name").asText)
      assert(names.size == 1 && names.head != Thread.currentThread().getName, names)
    }
  }
}
