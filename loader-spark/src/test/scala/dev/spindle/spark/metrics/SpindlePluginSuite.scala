package dev.spindle.spark.metrics

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}

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
}

/**
 * The plugin in a real local Spark job: Spark's own Prometheus servlet on the driver UI
 * (127.0.0.1, a free port) lists the Spindle series with the job's counts.
 */
class SpindlePluginSuite extends AnyFunSuite {
  test("Spark's Prometheus servlet exports the stages' items, failures and quarantine") {
    val conf = new SparkConf().setMaster("local[2]").setAppName("plugin-suite")
      .set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
      .set("spark.ui.enabled", "true").set("spark.ui.port", "0")
      .set("spark.plugins", SpindlePlugin.CLASS_NAME)
      .set("spark.metrics.conf.*.sink.prometheusServlet.class",
        "org.apache.spark.metrics.sink.PrometheusServlet")
      .set("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
    val sc = new SparkContext(conf)
    try {
      val rows = sc.parallelize(0 until 4, 4).map(PluginProbe.task).collect().sum
      assert(rows == 4 * 990)
      val url = sc.uiWebUrl.get + "/metrics/prometheus"
      // Jetty answers the path with a redirect to ".../prometheus/".
      val client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build()
      val resp = client.send(HttpRequest.newBuilder(URI.create(url)).build(),
        HttpResponse.BodyHandlers.ofString())
      assert(resp.statusCode() == 200, s"$url: HTTP ${resp.statusCode()}")
      val body = resp.body()
      def value(series: String): Double = {
        val line = body.linesIterator.find(l => l.contains("SpindlePlugin_" + series + "_Value"))
        assert(line.isDefined, s"no $series in $url:\n" +
          body.linesIterator.filter(_.contains("Spindle")).mkString("\n") + "\n---\n" + body.take(3000))
        line.get.split(' ').last.toDouble
      }
      // Counts are this JVM's totals: other suites' pipelines may add to them, never take away.
      assert(value("stage_ints_items") >= 4000)
      assert(value("stage_square_items") >= 4 * 990)
      assert(value("stage_square_failures") >= 40)
      assert(value("quarantined") >= 40)
      assert(value("stage_square_blockedMs") >= 0)
      assert(value("stage_square_running") == 0)
      assert(value("feeder_h2dBytes") == 0, "no feeder is installed")
    } finally {
      sc.stop()
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
