package dev.spindle.spark.metrics

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import dev.spindle.spark.pipeline.{FailureBudget, Order, Pipeline}
import dev.spindle.spark.pipeline.Fixtures._
import org.apache.spark.{SparkConf, SparkContext}
import org.scalatest.funsuite.AnyFunSuite

/** A task that runs a two-stage pipeline over 1,000 ints, dropping every 100th + 7. */
object PluginProbe {
  def task(partition: Int): Long = {
    val it = Pipeline.source("ints", ints(1000))
      .pipe("square", op[Integer, Integer] { i =>
        if (i % 100 == 7) throw new IllegalArgumentException(s"bad $i") else Int.box(i * i)
      }, 2, Order.INPUT)
      .failureBudget(FailureBudget.count(1000))
      .named(s"plugin-$partition")
      .build().start()
    drain(it).size.toLong
  }

  /** Opened by the test once it has read the gauges of the held pipeline. */
  @volatile var gate = new CountDownLatch(1)

  /** A pipeline whose stage `held` waits at its 50th item until `gate` opens. */
  def held(partition: Int): Long = {
    val it = Pipeline.source("heldsource", ints(200))
      .pipe("held", op[Integer, Integer] { i =>
        if (i == 50) gate.await(60, TimeUnit.SECONDS)
        i
      }, 1, Order.INPUT)
      .named(s"plugin-held-$partition")
      .build().start()
    drain(it).size.toLong
  }
}

/**
 * The plugin in a real local Spark job: Spark's own Prometheus servlet on the driver UI
 * (127.0.0.1, a free port) lists the Spindle series with the job's counts.
 */
class SpindlePluginSuite extends AnyFunSuite {
  /** A local[2] context with the plugin and Spark's Prometheus servlet on its UI. */
  private def withContext(body: SparkContext => Unit): Unit = {
    val conf = new SparkConf().setMaster("local[2]").setAppName("plugin-suite")
      .set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
      .set("spark.ui.enabled", "true").set("spark.ui.port", "0")
      .set("spark.plugins", SpindlePlugin.CLASS_NAME)
      .set("spark.metrics.conf.*.sink.prometheusServlet.class",
        "org.apache.spark.metrics.sink.PrometheusServlet")
      .set("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
    val sc = new SparkContext(conf)
    try body(sc) finally sc.stop()
  }

  /** One scrape of the servlet: series name (after `SpindlePlugin_`) → value. */
  private def scrape(sc: SparkContext): String => Double = {
    val url = sc.uiWebUrl.get + "/metrics/prometheus"
    // Jetty answers the path with a redirect to ".../prometheus/".
    val client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build()
    val resp = client.send(HttpRequest.newBuilder(URI.create(url)).build(),
      HttpResponse.BodyHandlers.ofString())
    assert(resp.statusCode() == 200, s"$url: HTTP ${resp.statusCode()}")
    val body = resp.body()
    series => {
      val line = body.linesIterator.find(l => l.contains("SpindlePlugin_" + series + "_Value"))
      assert(line.isDefined, s"no $series in $url:\n" +
        body.linesIterator.filter(_.contains("Spindle")).mkString("\n") + "\n---\n" + body.take(3000))
      line.get.split(' ').last.toDouble
    }
  }

  test("Spark's Prometheus servlet exports the stages' items, failures and quarantine") {
    withContext { sc =>
      val rows = sc.parallelize(0 until 4, 4).map(PluginProbe.task).collect().sum
      assert(rows == 4 * 990)
      val value = scrape(sc)
      // Counts are this JVM's totals: other suites' pipelines may add to them, never take away.
      assert(value("stage_ints_items") >= 4000)
      assert(value("stage_square_items") >= 4 * 990)
      assert(value("stage_square_failures") >= 40)
      assert(value("quarantined") >= 40)
      assert(value("stage_square_blockedMs") >= 0)
      assert(value("stage_square_running") == 0)
      assert(value("feeder_h2dBytes") == 0, "no feeder is installed")
    }
  }

  test("while a pipeline runs: its stages' queue occupancy and busy fraction, from a live scrape") {
    withContext { sc =>
      PluginProbe.gate = new CountDownLatch(1)
      implicit val ec: ExecutionContext = ExecutionContext.global
      val job = Future(sc.parallelize(Seq(0), 1).map(PluginProbe.held).collect().sum)
      try {
        // the stage `held` waits inside its operation; the source fills the queue behind it
        val deadline = System.nanoTime() + 30.seconds.toNanos
        var value = scrape(sc)
        def ready(v: String => Double): Boolean = util.Try(
          v("stage_held_running") == 1 && v("stage_heldsource_queueOccupancy") > 0.5).getOrElse(false)
        while (!ready(value) && System.nanoTime() < deadline) {
          Thread.sleep(200)
          value = scrape(sc)
        }
        assert(value("stage_held_running") == 1, "the held pipeline runs")
        // the source has nothing to do but wait for room: its queue is full most of the time
        assert(value("stage_heldsource_queueOccupancy") > 0.5)
        assert(value("stage_heldsource_queueOccupancy") <= 1.0)
        // the held stage has an item in flight all the while: busy, not blocked
        assert(value("stage_held_busyFraction") > 0.5)
        assert(value("stage_held_busyFraction") <= 1.0)
        assert(value("stage_heldsource_busyFraction") < 0.5)
      } finally PluginProbe.gate.countDown()
      assert(Await.result(job, 60.seconds) == 200)
      val after = scrape(sc)
      assert(after("stage_held_running") == 0)
      assert(after("stage_held_busyFraction") == 0, "0 when no pipeline runs the stage")
      assert(after("stage_held_items") >= 200)
    }
  }

  test("the command line appends the plugin to spark.plugins once, unless turned off") {
    val conf = new SparkConf(false)
    SpindlePlugin.enable(conf)
    assert(conf.get("spark.plugins") == SpindlePlugin.CLASS_NAME)
    SpindlePlugin.enable(conf)
    assert(conf.get("spark.plugins") == SpindlePlugin.CLASS_NAME, "listed once")
    val user = new SparkConf(false).set("spark.plugins", "com.example.Other")
    SpindlePlugin.enable(user)
    assert(user.get("spark.plugins") == "com.example.Other," + SpindlePlugin.CLASS_NAME)
    val off = new SparkConf(false).set("spark.spindle.metrics.plugin", "false")
    SpindlePlugin.enable(off)
    assert(!off.contains("spark.plugins"))
    val bad = new SparkConf(false).set("spark.spindle.metrics.plugin", "maybe")
    val e = intercept[IllegalArgumentException](SpindlePlugin.enable(bad))
    assert(e.getMessage.contains("spark.spindle.metrics.plugin") && e.getMessage.contains("maybe"))
  }
}
