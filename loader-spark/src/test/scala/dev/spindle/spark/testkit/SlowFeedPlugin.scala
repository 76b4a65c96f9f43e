package dev.spindle.spark.testkit

import java.util.{Map => JMap}

import dev.spindle.gpu.feed.SlotWriter
import dev.spindle.spark.serve.{BatchConsumer, ConsumerHook, FeedBatch}
import org.apache.spark.TaskContext
import org.apache.spark.api.plugin.{DriverPlugin, ExecutorPlugin, PluginContext, SparkPlugin}

/**
 * A Spark plugin (`spark.plugins`, from the test class path or a `--jars` jar) that slows feed
 * tasks down in every executor JVM, so that a fault test's kill lands while tasks still run: it
 * installs a [[ConsumerHook]] whose consumer sleeps after each batch it passes on. How long: the
 * job's local property [[SlowFeedPlugin.DelayProperty]] when set (one job of a shared session),
 * else the executor's `spark.spindletest.feedDelayMs` ([[SlowFeedPlugin.DelayConf]]), else not at
 * all. Neither is a `spark.spindle.*` key: the product knows nothing of them.
 */
final class SlowFeedPlugin extends SparkPlugin {
  override def driverPlugin(): DriverPlugin = null

  override def executorPlugin(): ExecutorPlugin = new ExecutorPlugin {
    override def init(ctx: PluginContext, extraConf: JMap[String, String]): Unit = {
      val configured = ctx.conf().getLong(SlowFeedPlugin.DelayConf, 0L)
      ConsumerHook.install(consumer => new SlowFeedConsumer(consumer, configured))
    }

    override def shutdown(): Unit = ConsumerHook.uninstall()
  }
}

object SlowFeedPlugin {
  /** The job's local property (`SparkContext.setLocalProperty`): milliseconds after each batch. */
  val DelayProperty = "spindle.test.feedDelayMs"

  /** The executors' Spark setting: milliseconds after each batch, for every job of the app. */
  val DelayConf = "spark.spindletest.feedDelayMs"

  /** The `spark.plugins` value that loads it. */
  val ClassName: String = classOf[SlowFeedPlugin].getName
}

/** Passes each batch to `inner`, then sleeps (task thread). */
final class SlowFeedConsumer(inner: BatchConsumer, configuredMs: Long) extends BatchConsumer {
  override def accept(batch: FeedBatch): Unit = {
    inner.accept(batch)
    val ms = Option(TaskContext.get()).flatMap(c => Option(c.getLocalProperty(SlowFeedPlugin.DelayProperty)))
      .map(_.toLong).getOrElse(configuredMs)
    if (ms > 0) Thread.sleep(ms)
  }

  override def stageName(): String = inner.stageName()

  /** The inner consumer's ring slots, so that a slowed feed still decodes into the ring. */
  override def claimSlot(rank: Int): SlotWriter = inner.claimSlot(rank)
}
