package dev.spindle.spark.pipeline

import java.util.concurrent.{CancellationException, ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.pipeline.Fixtures._
import org.scalatest.funsuite.AnyFunSuite

class PipelineLifecycleSuite extends AnyFunSuite {
  /** Shown in the ScalaTest report and on the console (the JUnit runner hides info). */
  private def note(msg: String): Unit = { info(msg); println(s"[PipelineLifecycleSuite] $msg") }

  private val MiB = 1 << 20

  private def spindleThreads(): Int =
    Thread.getAllStackTraces.keySet.asScala.count(_.getName.startsWith("spindle-"))

  test("a stalled consumer blocks the producers and memory stays under the byte bound") {
    val produced = new AtomicInteger
    val source = Iterator.continually { produced.incrementAndGet(); new Array[Byte](MiB) }.asJava
    val it = Pipeline.source("read", source)
      .pipe("a", op[Array[Byte], Array[Byte]](b => b), 2, Order.INPUT)
      .pipe("b", op[Array[Byte], Array[Byte]](b => b), 2, Order.COMPLETION)
      .queueItems(1000).queueBytes(4L * MiB)
      .build().start()
    try {
      assert(it.hasNext); it.next()
      // Stall: wait until the producer side stops making progress.
      var last = -1
      while (produced.get != last) { last = produced.get; Thread.sleep(300) }
      val outstanding = produced.get - 1
      // 3 queues of at most 4 items of 1 MiB, 2 items held by each pipe, 1 waiting in the source.
      val bound = 3 * 4 + 2 * 2 + 1
      note(s"items outstanding with a stalled consumer: $outstanding"
        + s" (bound $bound; the item bound alone would allow 3000)")
      assert(outstanding <= bound)
      val stats = it.stats()
      assert(stats.stages.asScala.forall(_.queuePeakBytes <= 4L * MiB))
      assert(stats.stage("read").blockedPutMs > 0)
      // Reading again resumes the flow.
      (0 until 50).foreach { _ => assert(it.hasNext); it.next() }
    } finally it.close()
  }

  test("closing early stops every stage within the bound, releases items, leaves no thread") {
    val pools = ExecutorPools.shared()
    val open = new AtomicInteger
    def startOne(): PipelineIterator[java.util.List[Tracked]] = {
      val ids = new AtomicInteger
      val source = Iterator.continually(new Tracked(ids.getAndIncrement(), open)).asJava
      Pipeline.source("read", source)
        .pipe("slow", op[Tracked, Tracked] { t => Thread.sleep(5); t }, 3, Order.INPUT)
        .pipeIo("io", op[Tracked, Tracked](t => t), 2, Order.COMPLETION)
        .aggregate("batch", 4, LastBatch.KEEP)
        .build().start()
    }
    val warmUp = startOne()
    warmUp.next().asScala.foreach(_.close())
    warmUp.close()
    val threadsBefore = spindleThreads()
    val closeMs = (0 until 20).map { round =>
      val it = startOne()
      val taken = (0 until 3).map(_ => it.next())
      val t0 = System.nanoTime()
      it.close()
      it.close() // idempotent
      val ms = (System.nanoTime() - t0) / 1e6
      taken.foreach(_.asScala.foreach(_.close()))
      assert(!it.hasNext)
      assert(it.asInstanceOf[RunningPipeline[_]].active() == 0, s"round $round")
      ms
    }
    note(f"close() took at most ${closeMs.max}%.1f ms (median ${closeMs.sorted.apply(10)}%.1f ms);"
      + s" spindle threads: $threadsBefore before 20 pipelines, ${spindleThreads()} after")
    assert(closeMs.max < 5000)
    assert(open.get == 0, "every item created was closed by its owner")
    assert(RunningPipeline.live() == 0)
    assert(eventually(5000)(pools.cpuActive() == 0 && pools.ioActive() == 0))
    // Pools are shared: 20 pipelines started no thread of their own. The elastic I/O pool may
    // add a thread or two when a task arrives while an idle one is not yet polling.
    assert(spindleThreads() <= threadsBefore + 3,
      s"spindle threads: $threadsBefore before, ${spindleThreads()} after")
  }

  test("an op stuck past the stop timeout does not hold up close") {
    val entered = new CountDownLatch(1)
    val leave = new CountDownLatch(1)
    val it = Pipeline.source("read", ints(10))
      .pipe("stuck", op[Integer, Integer] { i => entered.countDown(); leave.await(); i }, 1,
        Order.INPUT)
      .stopTimeout(java.time.Duration.ofMillis(200))
      .build().start()
    assert(entered.await(10, TimeUnit.SECONDS))
    val t0 = System.nanoTime()
    it.close()
    val ms = (System.nanoTime() - t0) / 1e6
    note(f"close() with a stuck op returned after $ms%.0f ms (timeout 200 ms)")
    assert(it.asInstanceOf[RunningPipeline[_]].active() == 1)
    leave.countDown()
    assert(eventually(5000)(it.asInstanceOf[RunningPipeline[_]].active() == 0))
  }

  test("interrupting the consumer cancels the pipeline and keeps the interrupt status") {
    val result = new ConcurrentLinkedQueue[Any]()
    val open = new AtomicInteger
    val ids = new AtomicInteger
    val consumer = new Thread(() => {
      val it = Pipeline.source("read", Iterator.continually(new Tracked(ids.getAndIncrement(),
        open)).asJava).pipe("slow", op[Tracked, Tracked] { t => Thread.sleep(20); t }, 1,
        Order.INPUT).build().start()
      try { while (it.hasNext) it.next().close() }
      catch { case e: CancellationException => result.add(e) }
      result.add(Thread.currentThread().isInterrupted)
    })
    consumer.start()
    Thread.sleep(200)
    consumer.interrupt()
    consumer.join(10000)
    assert(!consumer.isAlive)
    val r = result.asScala.toSeq
    assert(r.head.asInstanceOf[CancellationException].getMessage.contains("interrupted"))
    assert(r(1) == true)
    assert(eventually(5000)(open.get == 0))
  }

  test("statistics count every stage, name the slow one as bottleneck and serialise to JSON") {
    val reports = new ConcurrentLinkedQueue[PipelineStats]()
    val it = Pipeline.source("read", ints(300))
      .pipe("fast", op[Integer, Integer](i => i), 2, Order.INPUT)
      .pipe("slow", op[Integer, Integer] { i => Thread.sleep(3); i }, 1, Order.INPUT)
      .pipe("after", op[Integer, Integer](i => i), 2, Order.INPUT)
      .aggregate("batch", 10, LastBatch.KEEP)
      .statsListener(java.time.Duration.ofMillis(100), s => reports.add(s))
      .build().start()
    assert(drain(it).flatMap(_.asScala).size == 300)
    val s = it.stats()
    assert(s.stages.asScala.map(_.name) == Seq("read", "fast", "slow", "after", "batch", "sink"))
    assert(s.stages.asScala.map(_.items) == Seq(300, 300, 300, 300, 30, 30))
    val slow = s.stage("slow")
    assert(slow.p50Ms >= 2.5 && slow.p99Ms >= slow.p50Ms && slow.concurrency == 1)
    assert(s.stage("fast").blockedPutMs > 0 && s.stage("after").blockedGetMs > 0)
    note(s.toString)
    assert(s.bottleneck == "slow")
    assert(reports.size >= 2, "periodic reports plus the final one")
    val json = new ObjectMapper().writeValueAsString(s.toReport())
    assert(json.contains("\"stages\":[{\"name\":\"read\""))
    assert(json.contains("\"bottleneck\":\"slow\""))
    assert(json.contains("\"latency_ms\":{\"p50\":"))
  }

  test("two pipelines running at once share the one CPU pool") {
    val pools = ExecutorPools.shared()
    val cpuThreads = new ConcurrentLinkedQueue[String]()
    val work = op[Integer, Integer] { i => cpuThreads.add(Thread.currentThread().getName); i }
    val threads = (0 until 2).map { _ =>
      new Thread(() => drain(Pipeline.source("read", ints(2000)).pipe("w", work, 8, Order.INPUT)
        .build().start()))
    }
    threads.foreach(_.start())
    threads.foreach(_.join(30000))
    val names = cpuThreads.asScala.toSet
    assert(cpuThreads.size == 4000)
    assert(names.forall(_.startsWith("spindle-cpu-")))
    assert(names.size <= pools.cpuThreads(), s"$names vs ${pools.cpuThreads()} CPU threads")
    assert(ExecutorPools.shared() eq pools)
  }

  test("executor core count comes from Spark configuration when there is one") {
    val conf = new org.apache.spark.SparkConf(false)
    assert(ExecutorPools.fromConf(conf.clone().set("spark.master", "local[3]"), 9) == 3)
    assert(ExecutorPools.fromConf(conf.clone().set("spark.master", "local[*]"), 9) == 9)
    assert(ExecutorPools.fromConf(conf.clone().set("spark.executor.cores", "5"), 9) == 5)
    assert(ExecutorPools.fromConf(conf.clone().set("spark.executor.cores", "5")
      .set(ExecutorPools.CPU_THREADS_KEY, "7"), 9) == 7)
    assert(ExecutorPools.fromConf(conf.clone(), 9) == 9)
    assert(intercept[IllegalArgumentException](ExecutorPools.create("x", 0)).getMessage ==
      "Invalid CPU thread count: 0 (must be > 0)")
  }

  test("the CPU pool reads the key registry's threads key") {
    assert(ExecutorPools.CPU_THREADS_KEY == dev.spindle.spark.config.SpindleConfig.THREADS.key())
  }

  test("warmUp runs its pipelines to the end on threads of its own, once per JVM") {
    val first = Pipeline.warmUp()
    assert(first == 10 * 4001, "the first call in this JVM delivers every item of its 10 runs")
    assert(Pipeline.warmUp() == 0, "a second call runs nothing")
    // its private pools are closed: their threads end
    def left =
      Thread.getAllStackTraces.keySet.asScala.count(_.getName.startsWith("spindle-warm-up"))
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
    while (left > 0 && System.nanoTime() < deadline) Thread.sleep(20)
    assert(left == 0, "no spindle-warm-up thread is left")
    note(s"warm-up delivered $first items")
  }
}
