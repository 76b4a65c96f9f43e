package dev.spindle

import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/**
 * After `package` (failsafe, `mvn verify`): `bin/spindle`'s JVM defaults (bin/lib/build.sh). Its
 * class data sharing archive is made for the build, then used (the classes come from it), and an
 * archive the JVM cannot use changes nothing a user sees: stdout and stderr are what they are
 * without one. A collector chosen in SPINDLE_JAVA_OPTS replaces the launcher's.
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
}
