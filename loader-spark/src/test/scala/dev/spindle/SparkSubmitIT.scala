package dev.spindle

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit
import java.util.jar.{JarEntry, JarFile, JarOutputStream}
import javax.tools.ToolProvider

import scala.jdk.CollectionConverters._

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.testkit.{ArrowFiles, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * After `package` (failsafe, `mvn verify`): the Java program of docs/guide/java-api.md, compiled
 * against the shaded jar and Spark's jars alone, run by SparkSubmit (the page's
 * bin/spark-submit-local) on local[2] and on local-cluster; that it carries no benchmark (loader-bench stays out); and
 * bin/spindle as a user runs it.
 */
class SparkSubmitIT extends AnyFunSuite {
  private val root = Paths.get("..").toAbsolutePath.normalize
  private val target = root.resolve("loader-spark/target")
  private lazy val shadedJar: Path = {
    val jars = Files.list(target).iterator().asScala.filter(_.toString.endsWith("-all.jar")).toSeq
    assert(jars.size == 1, s"the shaded jar under $target (run after package): $jars")
    jars.head
  }
  private lazy val version =
    shadedJar.getFileName.toString.stripPrefix("loader-spark-").stripSuffix("-all.jar")
  private lazy val sparkClasspath = Files.readString(target.resolve("spark-classpath.txt")).trim

  /** Runs `cmd` from the repository root without the test JVM's Spark variables. */
  private def run(cmd: Seq[String], dir: Path, timeoutS: Int = 300): (Int, String, String) = {
    val out = dir.resolve("stdout.txt")
    val err = dir.resolve("stderr.txt")
    val pb = new ProcessBuilder(cmd: _*).directory(root.toFile)
      .redirectOutput(out.toFile).redirectError(err.toFile)
    Seq("SPARK_TESTING", "SPARK_SCALA_VERSION", "SPARK_HOME", "SPARK_LOCAL_IP")
      .foreach(pb.environment().remove)
    val p = pb.start()
    if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
      p.destroyForcibly()
      fail(s"$cmd did not end within $timeoutS s; stderr:\n${Files.readString(err)}")
    }
    (p.exitValue(), Files.readString(out), Files.readString(err))
  }

  /** The guide's example program, compiled against the shaded jar and Spark's jars, as a jar. */
  private def exampleJar(dir: Path): Path = {
    val source = Files.createDirectories(dir.resolve("src")).resolve("SpindleJob.java")
    Files.writeString(source, guideBlock("SpindleJob.java", "java"))
    val classes = Files.createDirectories(dir.resolve("classes"))
    val javac = ToolProvider.getSystemJavaCompiler
    val code = javac.run(null, null, null, "-d", classes.toString, "-cp",
      shadedJar.toString + File.pathSeparator + sparkClasspath, source.toString)
    assert(code == 0, "the guide's example (docs/guide/java-api.md) does not compile against the shaded jar")
    val jar = dir.resolve("spindle-job.jar")
    val out = new JarOutputStream(Files.newOutputStream(jar))
    try Files.list(classes).iterator().asScala.foreach { c =>
      out.putNextEntry(new JarEntry(c.getFileName.toString))
      out.write(Files.readAllBytes(c))
      out.closeEntry()
    } finally out.close()
    jar
  }

  /** Runs the example with `master`; checks what it wrote and what it fed against the plans. */
  private def submitExample(master: String, prefix: String): Unit = TestFiles.withTempDir(prefix) { dir =>
    val in = dir.resolve("shards")
    GenSample.run(new GenSample.Options(in.toString, 3, 8, 80, 60, 2L), new Configuration())
    val arrow = dir.resolve("arrow")
    val (code, out, err) = run(Seq("bin/spark-submit-local", "--master", master, "--class",
      "SpindleJob", "--jars", shadedJar.toString, exampleJar(dir).toString, in.toString,
      arrow.toString), dir)
    assert(code == 0, s"stdout:\n$out\nstderr:\n$err")
    assert(out.contains(s"preprocessed 24 images into file:$arrow"), out)
    assert(ArrowFiles.readAll(arrow).size == 24)
    val m = FeedData.manifest(in)
    for (epoch <- 0 to 1; rank <- 0 to 1) {
      val digest = FeedData.planDigests(m, FeedData.spec(7, epoch, 2, 8))(rank)
      assert(out.contains(s"epoch $epoch rank $rank: 1 batches, digest $digest"), out)
    }
    assert(!err.contains("Using incubator modules"), err)
  }

  test("the guide's program, built against the shaded jar, preprocesses and feeds under SparkSubmit on local[2]") {
    submitExample("local[2]", "submit-local")
  }

  test("the same program on local-cluster[2,1,1024]: two executor JVMs without a Spark installation") {
    submitExample("local-cluster[2,1,1024]", "submit-cluster")
  }

  /** The block of docs/guide/java-api.md that follows `<!-- example:NAME -->`, fenced as `lang`. */
  private def guideBlock(name: String, lang: String): String = {
    val page = Files.readString(root.resolve("docs/guide/java-api.md"))
    val begin = s"<!-- example:$name -->\n```$lang\n"
    assert(page.contains(begin), s"docs/guide/java-api.md's $name")
    val from = page.indexOf(begin) + begin.length
    page.substring(from, page.indexOf("```", from))
  }

  /**
   * A local Maven repository of this build's dependencies and plugins without any Spindle
   * artifact: every file of the build's repository but dev/spindle, jars as links (the originals
   * are never written: [[TestFiles.deleteRecursively]] removes links, not what they name).
   */
  private def repositoryWithoutSpindle(dir: Path): Path = {
    val real = Paths.get(sys.props.getOrElse("spindle.test.localRepository",
      sys.props("user.home") + "/.m2/repository"))
    val repo = dir.resolve("repository")
    val files = Files.walk(real)
    try files.iterator().asScala.filterNot(p => real.relativize(p).startsWith("dev/spindle"))
      .foreach { p =>
        val to = repo.resolve(real.relativize(p).toString)
        if (Files.isDirectory(p)) Files.createDirectories(to)
        else if (p.toString.endsWith(".jar")) Files.createSymbolicLink(to, p)
        else Files.copy(p, to)
      } finally files.close()
    repo
  }

  /** Installs this build's artifacts into `repo`, as `mvn install` lays them out. */
  private def installSpindle(repo: Path, dir: Path): Unit = {
    def install(args: String*): Unit = {
      val (code, out, err) = run(Seq("mvn", "-B", "-q",
        "org.apache.maven.plugins:maven-install-plugin:2.4:install-file",
        s"-Dmaven.repo.local=$repo") ++ args, dir)
      assert(code == 0, s"install-file ${args.mkString(" ")}:\n$out\n$err")
    }
    install(s"-Dfile=${root.resolve("pom.xml")}", s"-DpomFile=${root.resolve("pom.xml")}")
    for (module <- Seq("loader-gpu", "loader-spark")) {
      val m = root.resolve(module)
      install(s"-Dfile=${m.resolve(s"target/$module-$version.jar")}",
        s"-DpomFile=${m.resolve("pom.xml")}")
    }
    install(s"-Dfile=$shadedJar", "-DgroupId=dev.spindle", "-DartifactId=loader-spark",
      s"-Dversion=$version", "-Dpackaging=jar", "-Dclassifier=all", "-DgeneratePom=false")
  }

  test("the guide's pom builds the program offline against Spindle's installed artifacts; it runs with the installed shaded jar") {
    TestFiles.withTempDir("maven-user") { dir =>
      val repo = repositoryWithoutSpindle(dir)
      installSpindle(repo, dir)
      val project = dir.resolve("project")
      Files.createDirectories(project.resolve("src/main/java"))
      Files.writeString(project.resolve("pom.xml"), guideBlock("pom.xml", "xml"))
      Files.writeString(project.resolve("src/main/java/SpindleJob.java"),
        guideBlock("SpindleJob.java", "java"))
      val (built, buildOut, buildErr) = run(Seq("mvn", "-B", "-o", s"-Dmaven.repo.local=$repo",
        "-f", project.resolve("pom.xml").toString, "package"), dir)
      assert(built == 0, s"the user project did not build offline:\n$buildOut\n$buildErr")
      val jar = project.resolve("target/spindle-job-1.0.jar")
      val classes = new JarFile(jar.toFile)
      val entries = try classes.stream().iterator().asScala.map(_.getName).filter(_.endsWith(".class"))
        .toSeq finally classes.close()
      assert(entries == Seq("SpindleJob.class"), s"the user's jar bundles more than its class: $entries")
      val allJar = repo.resolve(s"dev/spindle/loader-spark/$version/loader-spark-$version-all.jar")
      assert(Files.isRegularFile(allJar), s"the installed shaded jar: $allJar")
      val in = dir.resolve("shards")
      GenSample.run(new GenSample.Options(in.toString, 3, 8, 80, 60, 2L), new Configuration())
      val arrow = dir.resolve("arrow")
      val (code, out, err) = run(Seq("bin/spark-submit-local", "--master", "local[2]", "--class",
        "SpindleJob", "--jars", allJar.toString, jar.toString, in.toString,
        arrow.toString), dir)
      assert(code == 0, s"stdout:\n$out\nstderr:\n$err")
      assert(out.contains(s"preprocessed 24 images into file:$arrow"), out)
      assert(ArrowFiles.readAll(arrow).size == 24)
    }
  }

  test("the shaded jar carries no benchmark; there, bench is an unknown command that names bin/spindle") {
    val jar = new JarFile(shadedJar.toFile)
    val bench = try jar.stream().iterator().asScala.map(_.getName)
      .filter(n => n.startsWith("dev/spindle/") && n.contains("Bench") ||
        n.startsWith("dev/spindle/spark/soak/") ||
        n == "META-INF/services/dev.spindle.spark.cli.SpindleSubcommand")
      .toSeq finally jar.close()
    assert(bench.isEmpty, s"benchmark classes in $shadedJar: ${bench.take(20)}")
    TestFiles.withTempDir("shaded-bench") { dir =>
      val java = ProcessHandle.current().info().command().get()
      val (code, _, err) = run(Seq(java, "-cp", shadedJar.toString + File.pathSeparator +
        sparkClasspath, "dev.spindle.spark.cli.SpindleMain", "bench", "images"), dir)
      assert(code == 2, err)
      assert(err.contains("spindle: Unknown command 'bench' for 'spindle'") &&
        err.contains("run them with bin/spindle bench"), err)
    }
  }

  test("bin/spindle: help exits 0 and a bad value 2, without the JVM's incubator-module line") {
    TestFiles.withTempDir("launcher") { dir =>
      val (help, helpOut, helpErr) = run(Seq("bin/spindle", "help"), dir)
      assert(help == 0 && helpOut.startsWith("Usage: spindle"), helpErr)
      assert(helpErr.isEmpty, helpErr)
      val (bad, _, badErr) = run(Seq("bin/spindle", "preprocess", "--input", "x", "--output", "y",
        "--batch-size", "abc"), dir)
      assert(bad == 2)
      assert(badErr == "spindle: Invalid value for --batch-size: 'abc' (must be an integer > 0)\n" +
        "Run 'spindle preprocess --help' for its flags.\n", badErr)
    }
  }

  test("bin/spindle --master local-cluster[...] runs two executor JVMs; plain java is told what it needs") {
    TestFiles.withTempDir("launcher-cluster") { dir =>
      val in = dir.resolve("shards")
      GenSample.run(new GenSample.Options(in.toString, 2, 5, 64, 48, 1L), new Configuration())
      val (code, out, err) = run(Seq("bin/spindle", "preprocess", "--master",
        "local-cluster[2,1,1024]", "--input", in.toString, "--output", dir.resolve("out").toString,
        "--size", "16"), dir)
      assert(code == 0, err)
      assert(out.startsWith("preprocess: 10 images (0 quarantined)"), out)
      assert(!Files.exists(root.resolve("work")), "the workers' folder was left in the working directory")
      val java = ProcessHandle.current().info().command().get()
      val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
        .filter(a => a.startsWith("--add-") || a.startsWith("-XX:+Ignore"))
      val (refused, _, why) = run(Seq(java) ++ flags ++ Seq("-cp", shadedJar.toString +
        File.pathSeparator + sparkClasspath, "dev.spindle.spark.cli.SpindleMain", "preprocess",
        "--master", "local-cluster[2,1,1024]", "--input", in.toString, "--output",
        dir.resolve("out2").toString), dir)
      assert(refused == 2, why)
      assert(why.contains("spindle: --master local-cluster[2,1,1024] starts executor JVMs the way a" +
        " Spark installation does: set SPARK_HOME to one"), why)
    }
  }
}
