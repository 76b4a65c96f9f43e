package dev.spindle.spark.pipeline

import java.util.concurrent.atomic.AtomicInteger
import java.util.{Iterator => JIterator}

import scala.jdk.CollectionConverters._

/** Small builders shared by the pipeline suites. */
object Fixtures {
  def op[I, O](f: I => O): Op[I, O] = new Op[I, O] { def apply(in: I): O = f(in) }

  def ints(n: Int): JIterator[Integer] = (0 until n).iterator.map(Int.box).asJava

  def endless(counter: AtomicInteger = new AtomicInteger): JIterator[Integer] =
    Iterator.continually(Int.box(counter.getAndIncrement())).asJava

  def drain[T](it: PipelineIterator[T]): Seq[T] = {
    try { it.asScala.toVector }
    finally { it.close() }
  }

  /** Waits (polling, generous timeout) until `cond` holds; false when it never did. */
  def eventually(timeoutMs: Long)(cond: => Boolean): Boolean = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!cond && System.currentTimeMillis() < deadline) Thread.sleep(10)
    cond
  }

  /** An off-heap-like item: counts how many are open, close() is idempotent. */
  final class Tracked(val id: Int, open: AtomicInteger) extends AutoCloseable {
    private val closed = new java.util.concurrent.atomic.AtomicBoolean()
    open.incrementAndGet()
    override def close(): Unit = if (closed.compareAndSet(false, true)) open.decrementAndGet()
    def isClosed: Boolean = closed.get()
  }
}
