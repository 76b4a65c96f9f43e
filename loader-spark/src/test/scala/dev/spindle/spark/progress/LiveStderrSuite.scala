package dev.spindle.spark.progress

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

/** The live line and other writers to stderr (Spark's log lines) do not garble each other. */
class LiveStderrSuite extends AnyFunSuite {
  private val erase = "\r\u001b[K"

  test("a log line first erases the live line; the line is drawn again only at a line start") {
    val out = new ByteArrayOutputStream()
    val live = new LiveStderr(out, 0)
    live.draw("feed: 1/2 samples")
    live.write("12:00:00 WARN x: half ".getBytes(UTF_8))
    live.draw("feed: 2/2 samples") // mid-line: not drawn
    live.write("a line\n".getBytes(UTF_8))
    live.draw("feed: 2/2 samples")
    live.erase()
    live.erase() // nothing shown: nothing written
    assert(out.toString(UTF_8) == "\rfeed: 1/2 samples\u001b[K" + erase +
      "12:00:00 WARN x: half a line\n" + "\rfeed: 2/2 samples\u001b[K" + erase)
  }

  test("a line wider than the terminal is cut to fit, so the carriage return redraws it in place") {
    val out = new ByteArrayOutputStream()
    new LiveStderr(out, 10).draw("preprocess: 1/2 samples")
    assert(out.toString(UTF_8) == "\rpreproces\u001b[K") // columns - 1: the cursor never wraps
  }

  test("the line: counts, percentage, rates, quarantined, bottleneck, ETA; no ETA or percentage without a total") {
    val none = java.util.Map.of[String, Array[Long]]()
    val s = new ProgressListener.Snapshot(true, "preprocess", 2000, 1234, 38200000L, 3, none)
    assert(ProgressLine.format(s, 812.0, 38.2e6, "decode") == "preprocess: 1,234/2,000 samples"
      + " 61.7% 812 images/s 38.2 MB/s 3 quarantined bottleneck decode ETA 0:01")
    val unknown = new ProgressListener.Snapshot(true, "feed epoch 0 of 0..1", 0, 10, 0, 0, none)
    assert(ProgressLine.format(unknown, Double.NaN, Double.NaN, null) ==
      "feed epoch 0 of 0..1: 10 samples 0 quarantined")
    assert(ProgressLine.duration(3723) == "1:02:03")
  }

  test("the line of samples without an image says samples/s, never images") {
    val none = java.util.Map.of[String, Array[Long]]()
    val s = new ProgressListener.Snapshot(true, "preprocess", 2000, 1234, 38200000L, 3, none, "samples")
    assert(ProgressLine.format(s, 812.0, 38.2e6, "check") == "preprocess: 1,234/2,000 samples"
      + " 61.7% 812 samples/s 38.2 MB/s 3 quarantined bottleneck check ETA 0:01")
  }
}
