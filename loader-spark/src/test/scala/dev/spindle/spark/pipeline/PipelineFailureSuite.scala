package dev.spindle.spark.pipeline

import java.io.IOException
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import dev.spindle.spark.pipeline.Fixtures._
import org.scalatest.funsuite.AnyFunSuite

class PipelineFailureSuite extends AnyFunSuite {
  private val everyTenthFails = op[Integer, Integer] { i =>
    if (i % 10 == 0) throw new IOException(s"corrupt sample $i")
    i
  }

  test("failures within a count budget are dropped, counted and quarantined with their keys") {
    val it = Pipeline.source("read", ints(100))
      .keyedBy((i: Integer) => s"shard-0/$i")
      .pipe("decode", everyTenthFails, 4, Order.INPUT)
      .failureBudget(FailureBudget.count(10))
      .build().start()
    val out = drain(it)
    assert(out == (0 until 100).filter(_ % 10 != 0))
    val q = it.quarantine().asScala
    assert(q.map(_.key).toSet == (0 until 100 by 10).map(i => s"shard-0/$i").toSet)
    assert(q.forall(e => e.stage == "decode" && e.reason == "corrupt sample " + e.key.drop(8)))
    val decode = it.stats().stage("decode")
    assert(decode.items == 90 && decode.failures == 10)
  }

  test("a checked exception's message is the reason; a runtime exception's reason names its class") {
    val mixed = op[Integer, Integer] { i =>
      if (i == 1) throw new IOException("unreadable")
      if (i == 2) throw new IllegalStateException("a bug")
      i
    }
    val it = Pipeline.source("read", ints(4)).keyedBy((i: Integer) => s"k$i")
      .pipe("decode", mixed, 1, Order.INPUT).failureBudget(FailureBudget.count(5)).build().start()
    drain(it)
    assert(it.quarantine().asScala.map(e => e.key -> e.reason).toMap ==
      Map("k1" -> "unreadable", "k2" -> "java.lang.IllegalStateException: a bug"))
  }

  test("the failure after a count budget stops the pipeline with one PipelineFailure") {
    val it = Pipeline.source("read", ints(1000))
      .pipe("decode", everyTenthFails, 4, Order.INPUT)
      .failureBudget("decode", FailureBudget.count(9))
      .build().start()
    val e = intercept[PipelineFailure](drain(it))
    assert(e.stage == "decode")
    assert(e.getMessage.contains("stage 'decode' exceeded its failure budget (at most 9 failures)"))
    assert(e.getMessage.contains("corrupt sample 0"), e.getMessage)
    assert(!e.causes.isEmpty && e.causes.get(0).isInstanceOf[IOException])
    assert(e.getCause eq e.causes.get(0))
    assert(e.quarantine.size >= 10)
    assert(e.quarantine.asScala.head.key == "item 0")
    // Every later call reports the same failure instead of items.
    assert(intercept[PipelineFailure](it.hasNext) eq e)
  }

  test("a fraction budget is checked only once minItems items were processed") {
    val firstFiveFail = op[Integer, Integer] { i =>
      if (i < 5) throw new IllegalArgumentException(s"bad $i")
      i
    }
    // 5 of 500 fail (1%) under a 0.5% budget, but the budget waits for 1000 items: it passes.
    val lenient = Pipeline.source("read", ints(500)).pipe("decode", firstFiveFail, 2, Order.INPUT)
      .failureBudget(FailureBudget.fraction(0.005, 1000)).build().start()
    assert(drain(lenient).size == 495)
    assert(lenient.quarantine().size == 5)
    // 10% of items fail under a 2% budget checked after 100 items: it stops, after 100 items.
    val processed = new AtomicInteger
    val counting = op[Integer, Integer] { i => processed.incrementAndGet(); everyTenthFails(i) }
    val strict = Pipeline.source("read", ints(100000)).pipe("decode", counting, 2, Order.INPUT)
      .failureBudget(FailureBudget.fraction(0.02, 100)).build().start()
    val e = intercept[PipelineFailure](drain(strict))
    assert(e.getMessage.contains("at most 2.0% failures after 100 items"), e.getMessage)
    assert(processed.get >= 100 && processed.get < 100000)
  }

  test("an op that throws an Error stops the pipeline at once, whatever the budget") {
    val it = Pipeline.source("read", ints(1000))
      .pipe("decode", op[Integer, Integer](i => if (i == 7) throw new StackOverflowError() else i),
        2, Order.INPUT)
      .failureBudget(FailureBudget.count(Long.MaxValue))
      .build().start()
    val e = intercept[PipelineFailure](drain(it))
    assert(e.getCause.isInstanceOf[StackOverflowError])
    assert(e.getMessage.contains("stage 'decode' threw java.lang.StackOverflowError on [item 7]"))
    assert(e.getMessage.contains("never budgeted"))
  }

  test("a source that throws stops the pipeline naming the source and the position") {
    val source = (0 until 100).iterator.map { i =>
      if (i == 42) throw new IOException("disk gone") else Int.box(i)
    }.asJava
    val it = Pipeline.source("read-shard", source).pipe("decode", op[Integer, Integer](i => i), 2,
      Order.INPUT).build().start()
    val e = intercept[PipelineFailure](drain(it))
    assert(e.stage == "read-shard")
    assert(e.getMessage.contains("source 'read-shard' threw after 42 items"), e.getMessage)
    assert(e.getCause.getMessage == "disk gone")
  }

  test("a source that yields null is refused with its position") {
    val source = Iterator(Int.box(1), null, Int.box(3)).asJava
    val e = intercept[PipelineFailure](drain(Pipeline.source("read", source).build().start()))
    assert(e.getMessage.contains("source 'read' returned null as item 1"), e.getMessage)
  }

  test("an op that returns null is an item failure with a clear reason") {
    val it = Pipeline.source("read", ints(20))
      .pipe("filter", op[Integer, Integer](i => if (i % 2 == 0) null else i), 3, Order.COMPLETION)
      .failureBudget(FailureBudget.count(100))
      .build().start()
    assert(drain(it).sorted == (1 until 20 by 2))
    assert(it.quarantine().asScala.forall(_.reason.startsWith("op returned null")))
    assert(it.quarantine().size == 10)
    val e = intercept[PipelineFailure](drain(Pipeline.source("read", ints(20))
      .pipe("filter", op[Integer, Integer](_ => null), 3, Order.INPUT).build().start()))
    assert(e.getMessage.contains("op returned null"), e.getMessage)
  }

  test("invalid arguments are refused when given, naming the bad value") {
    def msg(f: => Any): String = intercept[IllegalArgumentException](f).getMessage
    val b = Pipeline.source("read", ints(1))
    assert(msg(b.pipe("decode", op[Integer, Integer](i => i), 0, Order.INPUT)) ==
      "Invalid concurrency for stage 'decode': 0 (must be > 0)")
    assert(msg(b.aggregate("batch", -3, LastBatch.KEEP)) ==
      "Invalid batch size for stage 'batch': -3 (must be > 0)")
    assert(msg(b.queueItems(0)) == "Invalid queue size: 0 items (must be > 0)")
    assert(msg(b.queueBytes(-1)) == "Invalid queue size: -1 bytes (must be > 0)")
    assert(msg(FailureBudget.count(-1)).contains("-1 (must be >= 0)"))
    assert(msg(FailureBudget.fraction(1.5, 10)).contains("1.5 (must be in [0, 1])"))
    assert(msg(FailureBudget.fraction(0.1, 0)).contains("minItems: 0"))
    assert(msg(b.pipe("read", op[Integer, Integer](i => i), 1, Order.INPUT)) ==
      "Duplicate stage name: 'read'")
    assert(msg(b.pipe(" ", op[Integer, Integer](i => i), 1, Order.INPUT)).contains("blank"))
    assert(msg(b.statsListener(java.time.Duration.ZERO, (_: PipelineStats) => ())).contains("PT0S"))
    assert(msg(Pipeline.source("read", ints(1)).failureBudget("nope", FailureBudget.none()).build())
      == "Failure budget for unknown stage: 'nope'")
    val p = Pipeline.source("read", ints(1)).build()
    p.start().close()
    assert(intercept[IllegalStateException](p.start()).getMessage.contains("already started"))
  }

  test("identical errors are logged once and counted, digits ignored") {
    val lines = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val log = new FailureLog("p", (m: String, _: Throwable) => lines.add(m))
    (0 until 100000).foreach { i =>
      log.itemFailed("decode", s"item $i", s"IOException: bad $i", null)
    }
    log.itemFailed("decode", "item x", "EOFException: short", null)
    assert(lines.size == 2)
    log.summarize()
    assert(lines.size == 3)
    assert(lines.asScala.last.contains("decode: IOException: bad # occurred 100000 times"))
    assert(log.count("decode", "IOException: bad 1") == 100000)
  }

  test("a consumer waiting longer than the item timeout gets a stall failure with statistics") {
    val stuck = new java.util.concurrent.CountDownLatch(1)
    val it = Pipeline.source("read", ints(10))
      .pipe("hang", op[Integer, Integer] { i => stuck.await(); i }, 1, Order.INPUT)
      .itemTimeout(java.time.Duration.ofMillis(300))
      .stopTimeout(java.time.Duration.ofMillis(100))
      .build().start()
    val e = intercept[PipelineFailure](drain(it))
    stuck.countDown()
    assert(e.stage == "sink")
    assert(e.getMessage.contains("stalled: no item for 300 ms"), e.getMessage)
    assert(e.getMessage.contains("hang"), e.getMessage)
  }

  test("a PipelineFailure survives Java serialisation with its causes and quarantine") {
    val it = Pipeline.source("read", ints(100)).pipe("decode", everyTenthFails, 2, Order.INPUT)
      .failureBudget(FailureBudget.count(2)).build().start()
    val e = intercept[PipelineFailure](drain(it))
    val bytes = new java.io.ByteArrayOutputStream()
    new java.io.ObjectOutputStream(bytes).writeObject(e)
    val back = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray))
      .readObject().asInstanceOf[PipelineFailure]
    assert(back.getMessage == e.getMessage)
    assert(back.causes.size == e.causes.size && back.quarantine == e.quarantine)
  }

  test("a key function that throws falls back to the item's position") {
    val it = Pipeline.source("read", ints(30))
      .keyedBy((_: Integer) => throw new IllegalStateException("no key"))
      .pipe("decode", everyTenthFails, 2, Order.INPUT)
      .failureBudget(FailureBudget.count(5)).build().start()
    assert(drain(it).size == 27)
    assert(it.quarantine().asScala.map(_.key) == Seq("item 0", "item 10", "item 20"))
  }
}
