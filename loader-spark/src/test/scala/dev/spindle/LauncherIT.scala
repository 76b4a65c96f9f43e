package dev.spindle

import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.{S3Server, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * After `package` (failsafe, `mvn verify`): `bin/spindle`'s JVM defaults (bin/lib/build.sh). Its
 * class data sharing archive is made for the build, then used (the classes come from it), and an
 * archive the JVM cannot use changes nothing a user sees: stdout and stderr are what they are
 * without one. A collector chosen in SPINDLE_JAVA_OPTS replaces the launcher's. Jars named in
 * SPINDLE_EXTRA_CLASSPATH join its classpath: S3A's reach an S3 server.
 */
class LauncherIT extends AnyFunSuite {
  private val root = Paths.get("..").toAbsolutePath.normalize
  private val cds = root.resolve("loader-spark/target/cds")

  /** (exit code, stdout, stderr) of `bin/spindle args` with `env` added. */
  private def spindle(dir: Path, env: Map[String, String], args: String*): (Int, String, String) = {
    val out = dir.resolve("out.txt")
    val err = dir.resolve("err.txt")
    val pb = new ProcessBuilder((Seq(root.resolve("bin/spindle").toString) ++ args).asJava)
      .directory(root.toFile).redirectOutput(out.toFile).redirectError(err.toFile)
    env.foreach { case (k, v) => pb.environment().put(k, v) }
    val p = pb.start()
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly()
      fail(s"bin/spindle ${args.mkString(" ")} did not end within 120 s")
    }
    (p.exitValue(), Files.readString(out), Files.readString(err))
  }

  private def archives(): Seq[Path] =
    if (!Files.isDirectory(cds)) Seq.empty
    else Files.list(cds).iterator().asScala.filter(_.getFileName.toString.matches("spindle-\\d+\\.jsa"))
      .toSeq

  test("the class data sharing archive is made once per build, used, and an unusable one goes unseen") {
    TestFiles.withTempDir("launcher-it") { dir =>
      val plain = spindle(dir, Map("SPINDLE_CDS" -> "0"), "--version")
      assert(plain._1 == 0 && plain._2.trim.startsWith("Spindle"), plain)
      val made = spindle(dir, Map("SPINDLE_CDS" -> "make"), "--version")
      assert(made == plain, "making the archive prints nothing")
      val archive = archives() match {
        case Seq(a) => a
        case other => fail(s"one archive for the build: $other")
      }
      val log = dir.resolve("classes.log")
      val used = spindle(dir, Map("SPINDLE_JAVA_OPTS" -> s"-Xlog:class+load=info:file=$log"),
        "--version")
      assert(used == plain, used)
      val loaded = Files.readAllLines(log).asScala
      val main = loaded.find(_.contains(" dev.spindle.spark.cli.SpindleMain ")).getOrElse(fail("no SpindleMain"))
      assert(main.contains("source: shared objects file"), main)

      val saved = dir.resolve("saved.jsa")
      Files.copy(archive, saved)
      try {
        archive.toFile.setWritable(true)
        Files.write(archive, Array.fill[Byte](4096)(7)) // not an archive: the JVM goes without
        val ignored = spindle(dir, Map.empty, "--version")
        assert(ignored == plain, ignored)
      } finally {
        Files.copy(saved, archive, java.nio.file.StandardCopyOption.REPLACE_EXISTING)
      }
    }
  }

  test("a collector in SPINDLE_JAVA_OPTS replaces the launcher's parallel collector") {
    TestFiles.withTempDir("launcher-gc") { dir =>
      val log = dir.resolve("gc.log")
      val g1 = spindle(dir, Map("SPINDLE_JAVA_OPTS" -> s"-XX:+UseG1GC -Xlog:gc=info:file=$log"),
        "--version")
      assert(g1._1 == 0 && g1._2.trim.startsWith("Spindle"), g1)
      assert(Files.readString(log).contains("Using G1"), Files.readString(log))
      val own = dir.resolve("own.log")
      val parallel = spindle(dir, Map("SPINDLE_JAVA_OPTS" -> s"-Xlog:gc=info:file=$own"), "--version")
      assert(parallel._1 == 0, parallel)
      assert(Files.readString(own).contains("Using Parallel"), Files.readString(own))
    }
  }

  test("SPINDLE_EXTRA_CLASSPATH puts S3A on bin/spindle's classpath: feed reads s3a://, credentials from the environment") {
    // S3A and the AWS SDK modules it loads, as Maven resolved them for these tests: the jars a user
    // would name (bin/spindle's own classpath holds no S3 connector)
    val own = Files.readString(root.resolve("loader-spark/target/runtime-classpath.txt")).trim
      .split(java.io.File.pathSeparator).toSet
    val connector = sys.props("java.class.path").split(java.io.File.pathSeparator).toSeq
      .filter(p => !own.contains(p) && Seq("/org/apache/hadoop/hadoop-aws/", "/software/amazon/",
        "/org/reactivestreams/", "/org/wildfly/", "/org/apache/httpcomponents/", "/commons-logging/")
        .exists(p.contains))
    assert(connector.exists(_.contains("hadoop-aws")), connector)
    val s3 = new S3Server().start()
    try TestFiles.withTempDir("launcher-s3") { dir =>
      val in = s3.upload(FeedData.tars(dir.resolve("in"), Seq(6, 6)), "launcher/in")
      val args = Seq("feed", "--input", in, "--size", "8", "--world-size", "2", "--batch-size", "3") ++
        s3.forkedJvmSettings.toSeq.flatMap { case (k, v) => Seq("--conf", s"$k=$v") }
      val env = s3.credentialsEnvironment + ("SPINDLE_CDS" -> "0")
      val without = spindle(dir, env, args: _*)
      assert(without._1 != 0 && without._3.contains("s3a"), without)
      val (code, out, err) =
        spindle(dir, env + ("SPINDLE_EXTRA_CLASSPATH" -> connector.mkString(java.io.File.pathSeparator)),
          args: _*)
      assert(code == 0, err)
      assert(out.contains("feed: 12 images (0 quarantined)"), out)
      assert(!out.contains(S3Server.SecretKey) && !err.contains(S3Server.SecretKey))
    } finally s3.close()
  }
}
