package dev.spindle.gpu.bridge

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The wire protocol's version, as the documentation and the Python client state it, is the one the
 * bridge speaks ([[Wire.VERSION]]): PROTOCOL.md, loader-gpu's README, the repository's README and
 * every page under docs/ (a statement is "protocol, version N", "protocol version = N" or PROTOCOL.md's
 * "header version ≠ N"; the history of earlier versions is written otherwise), and the client's
 * `VERSION` in spindle_bridge/protocol.py. Reads files only; no feeder.
 */
class ProtocolVersionDocsSuite extends AnyFunSuite {
  private val repo = Paths.get("..").toAbsolutePath.normalize
  private val Statement = """(?i)\bprotocol,? version (?:= )?\**(\d+)|header version ≠ (\d+)""".r

  /** Where the version must be stated at least once. */
  private val stating = Seq("loader-gpu/python/PROTOCOL.md", "loader-gpu/README.md", "docs/guide/pytorch.md")

  private def documents: Seq[Path] = {
    val docs = Files.walk(repo.resolve("docs")).iterator().asScala
      .filter(p => Files.isRegularFile(p) && p.toString.endsWith(".md")).toSeq
    (Seq("README.md", "loader-gpu/README.md", "loader-spark/README.md", "loader-bench/README.md",
      "notebooks/README.md", "loader-gpu/python/PROTOCOL.md", "loader-gpu/python/spindle_bridge/protocol.py")
      .map(repo.resolve) ++ docs).filter(Files.isRegularFile(_)).sorted
  }

  /** (file, line, the statement, the version it states) of every statement in `file`. */
  private def statements(file: Path): Seq[(String, Int, String, Int)] = {
    val text = Files.readString(file)
    Statement.findAllMatchIn(text).map { m =>
      val version = Option(m.group(1)).getOrElse(m.group(2)).toInt
      (repo.relativize(file).toString, text.substring(0, m.start).count(_ == '\n') + 1, m.matched, version)
    }.toSeq
  }

  test("every protocol version the documentation states is Wire.VERSION") {
    val found = documents.flatMap(statements)
    val wrong = found.filter(_._4 != Wire.VERSION)
    assert(wrong.isEmpty, wrong.map { case (f, line, s, _) => s"$f:$line says '$s'" }
      .mkString(s"the bridge speaks version ${Wire.VERSION}, but ", "; ", ""))
    for (f <- stating) assert(found.exists(_._1 == f), s"$f states no protocol version")
  }

  test("the Python client's VERSION is Wire.VERSION") {
    val protocol = repo.resolve("loader-gpu/python/spindle_bridge/protocol.py")
    val versions = Files.readAllLines(protocol).asScala.collect { case s"VERSION = $v" => v.trim.toInt }
    assert(versions == Seq(Wire.VERSION), s"$protocol: VERSION = $versions, the bridge speaks ${Wire.VERSION}")
  }
}
