package dev.spindle.spark.preprocess
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.Try

import dev.spindle.spark.testkit.SparkFixture
import org.scalatest.funsuite.AnyFunSuite

/** Tasks that keep running after their job is cancelled, as a file write in progress does. */
object SlowTasks {
  val started = new AtomicInteger()
  val ended = new AtomicInteger()

  def run(holdMs: Long)(i: Int): Int = {
    started.incrementAndGet()
    val until = System.nanoTime() + holdMs * 1000000L
    while (System.nanoTime() < until) Thread.sleep(20) // deaf to the kill, as a write is
    ended.incrementAndGet()
    i
  }
}

/**
 * A failure path waits for the failed job group's tasks to end before it aborts: a task still
 * running (Spark only asks it to stop) would write its attempt file after the abort.
 */
class JobGroupTasksSuite extends AnyFunSuite with SparkFixture {
  implicit private val ec: ExecutionContext = ExecutionContext.global

  /** Starts two tasks of `holdMs` in `group` on another thread; returns once both run. */
  private def startJob(group: String, holdMs: Long): Future[Unit] = {
    SlowTasks.started.set(0)
    SlowTasks.ended.set(0)
    val sc = spark.sparkContext
    val job = Future {
      sc.setJobGroup(group, "slow tasks", false)
      Try(sc.parallelize(0 until 2, 2).map(SlowTasks.run(holdMs)).collect())
      ()
    }
    val deadline = System.nanoTime() + 30.seconds.toNanos
    while (SlowTasks.started.get < 2 && System.nanoTime() < deadline) Thread.sleep(20)
    assert(SlowTasks.started.get == 2, "both tasks run")
    job
  }

  test("cancelAndAwait returns once every task of the group has ended, not when the job fails") {
    val job = startJob("spindle-await-test", holdMs = 1500)
    val sc = spark.sparkContext
    assert(JobGroupTasks.cancelAndAwait(sc, "spindle-await-test", true, Duration.ofSeconds(30)))
    assert(SlowTasks.ended.get == 2, "a task of the cancelled job still ran when the wait ended")
    Await.result(job, 30.seconds)
  }

  test("past its timeout it says the tasks did not end") {
    val job = startJob("spindle-await-timeout", holdMs = 3000)
    val sc = spark.sparkContext
    assert(!JobGroupTasks.cancelAndAwait(sc, "spindle-await-timeout", true, Duration.ofMillis(300)))
    assert(SlowTasks.ended.get == 0)
    Await.result(job, 30.seconds)
    assert(JobGroupTasks.cancelAndAwait(sc, "spindle-await-timeout", true, Duration.ofSeconds(10)))
  }

  test("a group without jobs: ended at once, unless a job was submitted and is not yet seen") {
    val sc = spark.sparkContext
    assert(JobGroupTasks.cancelAndAwait(sc, "spindle-no-such-group", false, Duration.ofSeconds(1)))
    assert(!JobGroupTasks.cancelAndAwait(sc, "spindle-no-such-group", true, Duration.ofMillis(200)))
  }
}
