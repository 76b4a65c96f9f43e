package dev.spindle.spark.testkit

import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

/** Debian's headless Chromium, run on a local page: its DOM after the scripts ran, or a screenshot. */
object Chromium {
  /** What one run printed: stdout (the DOM with --dump-dom) and the page's console lines. */
  final case class Run(stdout: String, console: Seq[String])

  lazy val binary: Option[String] =
    Seq("/usr/bin/chromium", "/usr/bin/chromium-browser").find(p => Files.isExecutable(Path.of(p)))

  def dumpDom(page: Path, profile: Path): Run = run(page, profile, Seq("--dump-dom"))

  def screenshot(page: Path, png: Path, profile: Path): Run =
    run(page, profile, Seq(s"--screenshot=$png", "--window-size=1280,2000", "--hide-scrollbars"))

  private def run(page: Path, profile: Path, extra: Seq[String]): Run = {
    val cmd = Seq(binary.getOrElse(sys.error("chromium is not installed")), "--headless",
      "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
      "--enable-logging=stderr", "--v=0", s"--user-data-dir=$profile") ++ extra :+
      page.toAbsolutePath.toUri.toString
    val out = Files.createTempFile("chromium", ".out")
    val err = Files.createTempFile("chromium", ".err")
    try {
      val p = new ProcessBuilder(cmd.asJava).redirectOutput(out.toFile).redirectError(err.toFile).start()
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly()
        sys.error(s"chromium did not finish within 120 s: ${cmd.mkString(" ")}")
      }
      val console = Files.readAllLines(err).asScala.toSeq
        .filter(l => l.contains("CONSOLE") || l.contains("Uncaught"))
      assert(p.exitValue() == 0, s"chromium exited ${p.exitValue()}: ${Files.readString(err)}")
      Run(Files.readString(out), console)
    } finally {
      Files.deleteIfExists(out)
      Files.deleteIfExists(err)
    }
  }
}
