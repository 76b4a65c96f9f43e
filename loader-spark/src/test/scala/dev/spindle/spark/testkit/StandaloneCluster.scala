package dev.spindle.spark.testkit

import java.io.File
import java.lang.management.ManagementFactory
import java.net.{InetAddress, ServerSocket}
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._
import scala.jdk.OptionConverters._

/**
 * A Spark standalone master and its workers (one core, 1 GiB each) on 127.0.0.1, each a JVM of
 * its own started from a stand-in Spark installation: `dir/spark-home/jars` links the jars of
 * `sparkClasspath` (what a Spark installation's jars/ folder holds, nothing of Spindle's). The
 * workers start executor JVMs from it for each application. [[close]] kills every JVM it started,
 * executors included. One test thread uses it.
 */
final class StandaloneCluster private (val dir: Path, val url: String, master: Process,
    workers: IndexedSeq[Process]) extends AutoCloseable {
  private var seen = Set.empty[ProcessHandle]

  /** The workers' folder: `app-…/<executor id>/stderr` holds each executor's log. */
  def workDir(worker: Int): Path = dir.resolve(s"work-$worker")

  /** The live executor JVMs of application `appId` (any application when null). */
  def executors(appId: String = null): Seq[ProcessHandle] = {
    val all = workers.flatMap(_.descendants().iterator().asScala)
    seen ++= all
    all.filter { p =>
      val cmd = StandaloneCluster.commandLine(p)
      cmd.contains("CoarseGrainedExecutorBackend") && (appId == null || cmd.contains(appId))
    }
  }

  /** The newest application's folder under worker `i`'s (applications run one at a time). */
  def latestApp(i: Int): Option[Path] =
    Files.list(workDir(i)).iterator().asScala.filter(_.getFileName.toString.startsWith("app-"))
      .toSeq.sortBy(_.getFileName.toString).lastOption

  /** The executor JVM of the newest application whose log says it runs task `tid`, if any yet. */
  def executorRunning(tid: Long): Option[ProcessHandle] = {
    val logs = workers.indices.flatMap(latestApp).flatMap { app =>
      Files.list(app).iterator().asScala.filter(e => Files.isRegularFile(e.resolve("stderr")))
        .map(e => (app.getFileName.toString, e.getFileName.toString, e.resolve("stderr")))
    }
    logs.find { case (_, _, log) => Files.readString(log).contains(s"(TID $tid)") }
      .flatMap { case (app, id, _) =>
        executors(app).find(p => StandaloneCluster.commandLine(p).contains(s"--executor-id $id "))
      }
  }

  /** SIGKILLs worker `i` (its executors see it gone and exit, as on a real node failure). */
  def killWorker(i: Int): Unit = {
    executors()
    workers(i).destroyForcibly()
    assert(workers(i).waitFor(30, TimeUnit.SECONDS), s"worker $i did not die")
  }

  /** Kills every JVM the cluster started, the executors it saw included, and waits for them. */
  override def close(): Unit = {
    executors()
    val all = seen.toSeq ++ (workers :+ master).map(_.toHandle)
    all.foreach(_.destroyForcibly())
    all.foreach(p => p.onExit().get(30, TimeUnit.SECONDS))
  }
}

object StandaloneCluster {
  /** The flags of this JVM that any JVM running Spark needs (PLATFORM.md). */
  def sparkJvmFlags: Seq[String] = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
    .filter(a => a.startsWith("--add-") || a.startsWith("-XX:+Ignore") || a.startsWith("-Dio.netty"))
    .toSeq

  /** Starts a master and `workers` workers under `dir`; returns once every worker registered. */
  def start(dir: Path, sparkClasspath: String, workers: Int): StandaloneCluster = {
    val jars = Files.createDirectories(dir.resolve("spark-home/jars"))
    sparkClasspath.split(File.pathSeparator).filter(_.endsWith(".jar")).foreach { j =>
      Files.createSymbolicLink(jars.resolve(Paths.get(j).getFileName), Paths.get(j))
    }
    val port = freePort()
    val url = s"spark://127.0.0.1:$port"
    val masterLog = dir.resolve("master.log")
    val master = jvm(dir, masterLog, Seq("org.apache.spark.deploy.master.Master", "--host",
      "127.0.0.1", "--port", port.toString, "--webui-port", freePort().toString))
    val started = (0 until workers).map { i =>
      val work = Files.createDirectories(dir.resolve(s"work-$i"))
      jvm(dir, dir.resolve(s"worker-$i.log"), Seq("org.apache.spark.deploy.worker.Worker",
        "--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--work-dir", work.toString,
        "--webui-port", freePort().toString, url))
    }
    val cluster = new StandaloneCluster(dir, url, master, started)
    try {
      await(s"$workers workers registered; master log: $masterLog", 120) {
        Files.readString(masterLog).split("Registering worker").length - 1 >= workers
      }
      cluster
    } catch {
      case e: Throwable => cluster.close(); throw e
    }
  }

  /** Polls `cond` every 50 ms for up to `timeoutS` seconds, failing with `what`. */
  def await(what: => String, timeoutS: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for $what")
      Thread.sleep(50)
    }
  }

  /** The full command line from /proc (the JDK's may be cut short), else the JDK's. */
  def commandLine(p: ProcessHandle): String = {
    val proc = Path.of("/proc", p.pid().toString, "cmdline")
    try new String(Files.readAllBytes(proc), "UTF-8").replace('\u0000', ' ')
    catch { case _: java.io.IOException => p.info().commandLine().toScala.getOrElse("") }
  }

  private def jvm(dir: Path, log: Path, args: Seq[String]): Process = {
    val java = ProcessHandle.current().info().command().get()
    val cmd = Seq(java) ++ sparkJvmFlags ++ Seq("-Xmx512m", "-cp",
      dir.resolve("spark-home/jars").toString + "/*") ++ args
    val pb = new ProcessBuilder(cmd: _*).directory(dir.toFile).redirectErrorStream(true)
      .redirectOutput(log.toFile)
    val env = pb.environment()
    Seq("SPARK_TESTING", "SPARK_CONF_DIR").foreach(env.remove)
    env.put("SPARK_HOME", dir.resolve("spark-home").toString)
    env.put("SPARK_SCALA_VERSION", "2.13")
    env.put("SPARK_LOCAL_IP", "127.0.0.1")
    pb.start()
  }

  private def freePort(): Int = {
    val s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress)
    try s.getLocalPort finally s.close()
  }
}
