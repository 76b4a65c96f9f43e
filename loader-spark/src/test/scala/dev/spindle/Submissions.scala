package dev.spindle

import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest
import java.util.HexFormat
import java.util.concurrent.TimeUnit
import java.util.jar.{JarEntry, JarOutputStream}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.{ArrowFiles, FaultyFileSystem, SlowFeedPlugin, StandaloneCluster}

/**
 * Spindle's shaded jar submitted to a [[StandaloneCluster]] the way users submit it:
 * bin/spark-submit-local (Spark's SparkSubmit on Spark's jars alone) with `--master spark://…`
 * and the jar's main class, each submission a driver JVM of its own. One test thread.
 */
final class Submissions(root: Path, cluster: StandaloneCluster, dir: Path) {
  private val target = root.resolve("loader-spark/target")
  private var count = 0

  lazy val shadedJar: Path = {
    val jars = Files.list(target).iterator().asScala.filter(_.toString.endsWith("-all.jar")).toSeq
    assert(jars.size == 1, s"the shaded jar under $target (run after package): $jars")
    jars.head
  }

  lazy val sparkClasspath: String = Files.readString(target.resolve("spark-classpath.txt")).trim

  /** A jar of the test double [[FaultyFileSystem]] alone, for `--jars`. */
  lazy val faultyJar: Path = testkitJar("faulty-fs.jar", "FaultyFileSystem")

  /** A jar of [[SlowFeedPlugin]] alone, for `--jars`. */
  lazy val slowFeedJar: Path = testkitJar("slow-feed.jar", "SlowFeed")

  /** A jar of the test kit's classes whose names start with `prefix`. */
  private def testkitJar(name: String, prefix: String): Path = {
    val jar = dir.resolve(name)
    val classes = target.resolve("test-classes")
    val out = new JarOutputStream(Files.newOutputStream(jar))
    try Files.list(classes.resolve("dev/spindle/spark/testkit")).iterator().asScala
      .filter(_.getFileName.toString.startsWith(prefix)).foreach { c =>
        out.putNextEntry(new JarEntry(classes.relativize(c).toString))
        out.write(Files.readAllBytes(c))
        out.closeEntry()
      } finally out.close()
    jar
  }

  /** The `spark-submit` flags that put the faulty file system (`faulty:`) on every JVM. */
  def faulty(settings: (String, String)*): Seq[String] =
    Seq("--jars", faultyJar.toString, "--conf",
      s"spark.hadoop.fs.faulty.impl=${classOf[FaultyFileSystem].getName}") ++
      settings.flatMap { case (k, v) => Seq("--conf", s"spark.hadoop.fs.faulty.$k=$v") }

  /** The `spark-submit` flags that make every feed task sleep `ms` after each batch. */
  def slowFeed(ms: Long): Seq[String] =
    Seq("--jars", slowFeedJar.toString, "--conf", s"spark.plugins=${SlowFeedPlugin.ClassName}",
      "--conf", s"${SlowFeedPlugin.DelayConf}=$ms")

  /** The `spark-submit` flags that make the driver log each task attempt it starts. */
  def schedulerLog: Seq[String] = {
    val conf = dir.resolve("log4j2-scheduler.properties")
    Files.writeString(conf, Files.readString(root.resolve("conf/log4j2.properties")) +
      "logger.tasks.name = org.apache.spark.scheduler.TaskSetManager\nlogger.tasks.level = info\n")
    Seq("--driver-java-options", s"-Dlog4j2.configurationFile=$conf")
  }

  /** Starts `spindle COMMAND ARGS` (spindle's own arguments) under SparkSubmit on the cluster. */
  def start(submitArgs: Seq[String], command: String, args: String*): Submission = {
    count += 1
    val log = dir.resolve(f"submit-$count%02d-$command")
    val cmd = Seq("bin/spark-submit-local", "--master", cluster.url, "--conf",
      "spark.driver.host=127.0.0.1", "--conf", "spark.ui.enabled=false", "--conf",
      "spark.executor.memory=1g") ++ submitArgs ++ Seq("--class",
      "dev.spindle.spark.cli.SpindleMain", shadedJar.toString, command) ++ args
    val pb = new ProcessBuilder(cmd: _*).directory(root.toFile)
      .redirectOutput(Paths.get(log + ".out").toFile).redirectError(Paths.get(log + ".err").toFile)
    Seq("SPARK_TESTING", "SPARK_SCALA_VERSION", "SPARK_HOME").foreach(pb.environment().remove)
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1")
    new Submission(pb.start(), log)
  }

  /** Runs `spindle COMMAND ARGS` to its end. */
  def run(submitArgs: Seq[String], command: String, args: String*): Submission = {
    val s = start(submitArgs, command, args: _*)
    s.await()
    s
  }
}

/** One driver JVM: its process, exit status and output. */
final class Submission(val process: Process, log: Path) {
  def await(timeoutS: Int = 240): Int = {
    if (!process.waitFor(timeoutS, TimeUnit.SECONDS)) {
      process.destroyForcibly()
      throw new AssertionError(s"the driver did not end within $timeoutS s:\n$err")
    }
    process.exitValue()
  }

  def code: Int = process.exitValue()
  def out: String = Files.readString(Paths.get(log + ".out"))
  def err: String = Files.readString(Paths.get(log + ".err"))
  def logs: String = s"stdout:\n$out\nstderr (end):\n${err.takeRight(6000)}"
}

object Submissions {
  /** Per partition (`part-00003`), the SHA-256 of the file the output's manifest lists. */
  def fileDigests(out: Path): Map[String, String] = ArrowFiles.partFiles(out).map { f =>
    f.getFileName.toString.take("part-00000".length) ->
      HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f)))
  }.toMap

}
