package dev.spindle.spark.pipeline

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import dev.spindle.spark.pipeline.Fixtures._
import org.apache.spark.{SparkConf, SparkContext}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** State the Spark tasks (same JVM in local mode) share with the driver side of the test. */
object SparkProbe {
  val started = new AtomicInteger
  val pools = new ConcurrentLinkedQueue[ExecutorPools]()
  @volatile var bothRunning = new CountDownLatch(2)

  /** A task that consumes an endless pipeline until it is killed. */
  def endlessTask(partition: Int): Long = {
    val it = Pipeline.source("read", endless())
      .pipe("slow", op[Integer, Integer] { i => Thread.sleep(1); i }, 2, Order.INPUT)
      .pipeIo("io", op[Integer, Integer](i => i), 2, Order.COMPLETION)
      .named(s"task-$partition")
      .build().start()
    started.incrementAndGet()
    var n = 0L
    while (it.hasNext) { it.next(); n += 1 }
    n
  }

  /** The same, but consuming slower than the pipeline produces: an item is always ready. */
  def slowConsumerTask(partition: Int): Long = {
    val it = Pipeline.source("read", endless())
      .pipe("fast", op[Integer, Integer](i => i), 2, Order.INPUT)
      .named(s"slow-consumer-$partition")
      .build().start()
    started.incrementAndGet()
    var n = 0L
    while (it.hasNext) { it.next(); n += 1; Thread.sleep(20) }
    n
  }

  /** A task that records the pools it ran on, once both tasks run at the same time. */
  def poolTask(partition: Int): Int = {
    bothRunning.countDown()
    bothRunning.await(30, TimeUnit.SECONDS)
    val it = Pipeline.source("read", ints(1000)).pipe("w", op[Integer, Integer](i => i), 4,
      Order.INPUT).build().start()
    pools.add(ExecutorPools.shared())
    drain(it).size
  }
}

class PipelineSparkSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _
  private implicit val ec: ExecutionContext = ExecutionContext.global

  override def beforeAll(): Unit = {
    sc = new SparkContext(new SparkConf().setMaster("local[2]").setAppName("pipeline-suite")
      .set("spark.driver.host", "127.0.0.1").set("spark.ui.enabled", "false"))
  }

  override def afterAll(): Unit = if (sc != null) sc.stop()

  test("a killed Spark task stops its pipeline within the bound and releases every thread") {
    SparkProbe.started.set(0)
    val job = Future {
      sc.setJobGroup("kill-me", "pipeline kill test", interruptOnCancel = true)
      sc.parallelize(0 until 2, 2).map(SparkProbe.endlessTask).collect()
    }
    assert(eventually(60000)(SparkProbe.started.get == 2 && RunningPipeline.live() == 2))
    Thread.sleep(300) // let items flow
    val t0 = System.nanoTime()
    sc.cancelJobGroup("kill-me")
    assert(eventually(10000)(RunningPipeline.live() == 0), "every pipeline closed")
    val stopMs = (System.nanoTime() - t0) / 1e6
    val e = intercept[Exception](Await.result(job, 60.seconds))
    assert(e.getMessage.contains("cancel"), e.getMessage)
    val pools = ExecutorPools.shared()
    assert(eventually(5000)(pools.cpuActive() == 0 && pools.ioActive() == 0),
      s"pool threads still busy: cpu ${pools.cpuActive()}, io ${pools.ioActive()}")
    println(f"[PipelineSparkSuite] both pipelines closed $stopMs%.0f ms after cancelJobGroup")
  }

  test("a killed Spark task stops its pipeline also when its consumer never waits for an item") {
    // as feed's consumer, slower than decoding, or a job cancelled by Ctrl-C: no thread interrupt
    SparkProbe.started.set(0)
    val job = Future {
      sc.setJobGroup("kill-slow", "pipeline kill test, slow consumer", interruptOnCancel = false)
      sc.parallelize(0 until 2, 2).map(SparkProbe.slowConsumerTask).collect()
    }
    assert(eventually(60000)(SparkProbe.started.get == 2 && RunningPipeline.live() == 2))
    Thread.sleep(300) // let the queues fill
    sc.cancelJobGroup("kill-slow")
    assert(eventually(10000)(RunningPipeline.live() == 0), "a killed task's pipeline ran on")
    val e = intercept[Exception](Await.result(job, 60.seconds))
    assert(e.getMessage.contains("cancel"), e.getMessage)
  }

  test("two Spark tasks running at once share one executor-wide CPU pool") {
    SparkProbe.pools.clear()
    SparkProbe.bothRunning = new CountDownLatch(2)
    val sizes = sc.parallelize(0 until 2, 2).map(SparkProbe.poolTask).collect()
    assert(sizes.toSeq == Seq(1000, 1000))
    val seen = SparkProbe.pools.asScala.toSeq
    assert(seen.size == 2 && (seen.head eq seen(1)))
    val cpuThreads =
      Thread.getAllStackTraces.keySet.asScala.count(_.getName.startsWith("spindle-cpu-"))
    assert(cpuThreads == seen.head.cpuThreads())
  }
}
