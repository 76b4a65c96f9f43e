package dev.spindle

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The documentation a newcomer walks: README.md stays a front page, and every relative link in it,
 * under docs/ and in the module READMEs leads somewhere: to a file or folder that exists and, with
 * a `#anchor`, to a heading of that Markdown file (GitHub's anchor of the heading's text). Links in
 * code blocks and code spans are not links. Reads files only.
 */
class DocsSuite extends AnyFunSuite {
  private val repo = Paths.get("..").toAbsolutePath.normalize

  /** A link `[text](target)` or image `![alt](target)`; the text may hold code spans with brackets. */
  private val Link = """\[((?:`[^`]*`|[^\[\]`]|\[[^\]]*\])*)\]\(([^)\s]*)\)""".r
  private val Heading = """^#{1,6} +(.*?)#*\s*$""".r

  private def pages: Seq[Path] = {
    val docs = Files.walk(repo.resolve("docs")).iterator().asScala
      .filter(p => Files.isRegularFile(p) && p.toString.endsWith(".md")).toSeq
    (Seq("README.md", "loader-gpu/README.md", "loader-spark/README.md", "loader-bench/README.md",
      "notebooks/README.md", "loader-gpu/python/PROTOCOL.md").map(repo.resolve) ++ docs).sorted
  }

  /** The lines of `page` outside fenced code blocks, with their line numbers. */
  private def prose(page: Path): Seq[(String, Int)] = {
    var fenced = false
    Files.readAllLines(page).asScala.zipWithIndex.flatMap { case (line, i) =>
      if (line.trim.startsWith("```")) { fenced = !fenced; None }
      else if (fenced) None
      else Some(line -> (i + 1))
    }.toSeq
  }

  /**
   * The paragraphs of `page` outside fenced code blocks (runs of lines up to a blank line, so that
   * a code span over two lines is one), each with the line number it starts at.
   */
  private def paragraphs(page: Path): Seq[(String, Int)] = {
    val lines = prose(page)
    val breaks = lines.indices.filter(i => lines(i)._1.isBlank || i > 0 && lines(i)._2 != lines(i - 1)._2 + 1)
    (0 +: breaks :+ lines.size).sliding(2).collect {
      case Seq(from, until) if until > from => lines.slice(from, until)
    }.map(ls => ls.map(_._1).mkString("\n") -> ls.head._2).toSeq
  }

  /** GitHub's anchor of a heading: its text without markup, lower case, punctuation dropped. */
  private[spindle] def anchor(heading: String): String = {
    val text = heading.replaceAll("""\[([^\]]*)\]\([^)]*\)""", "$1").replace("`", "")
    text.toLowerCase.replaceAll("""[^\p{L}\p{M}\p{N}\p{Pc}\- ]""", "").replace(' ', '-')
  }

  /** Every anchor of `page`'s headings; a repeated heading's later ones get -1, -2, … as on GitHub. */
  private def anchors(page: Path): Set[String] = {
    val seen = scala.collection.mutable.Map[String, Int]()
    prose(page).collect { case (Heading(text), _) => text }.map { h =>
      val a = anchor(h)
      val n = seen.getOrElse(a, 0)
      seen(a) = n + 1
      if (n == 0) a else s"$a-$n"
    }.toSet
  }

  /** Why `target`, linked from `page`, leads nowhere; None when it leads somewhere. */
  private def broken(page: Path, target: String): Option[String] = {
    val (path, fragment) = target.indexOf('#') match {
      case -1 => (target, None)
      case i => (target.substring(0, i), Some(target.substring(i + 1)))
    }
    val file = if (path.isEmpty) page else page.getParent.resolve(path).normalize
    if (!Files.exists(file)) Some(s"no file ${repo.relativize(file)}")
    else fragment match {
      case Some(f) if file.toString.endsWith(".md") && !anchors(file).contains(f) =>
        Some(s"no heading #$f in ${repo.relativize(file)}")
      case _ => None
    }
  }

  test("README.md is a front page of at most 250 lines") {
    val lines = Files.readAllLines(repo.resolve("README.md")).size
    assert(lines <= 250, s"README.md has $lines lines: move what a newcomer does not need first into docs/")
  }

  test("every relative link in README.md, docs/ and the module READMEs leads to a file and heading") {
    val problems = for {
      page <- pages
      (text, first) <- paragraphs(page)
      m <- Link.findAllMatchIn(text)
      if text.substring(0, m.start).count(_ == '`') % 2 == 0 // not inside a code span
      target = m.group(2)
      if !target.matches("^[a-z]+:.*")                       // http:, https:, mailto:
      why <- broken(page, target)
    } yield s"${repo.relativize(page)}:${first + text.substring(0, m.start).count(_ == '\n')}: ($target): $why"
    assert(problems.isEmpty, problems.mkString("broken links:\n", "\n", ""))
  }

  test("the anchors are GitHub's") {
    assert(anchor("Train from Spark: `bin/spindle train`") == "train-from-spark-binspindle-train")
    assert(anchor("The kernels (PTX and the sm_90 cubin)") == "the-kernels-ptx-and-the-sm_90-cubin")
    assert(anchor("As a PyTorch `DataLoader`") == "as-a-pytorch-dataloader")
    assert(anchor("Checksums on reading a preprocess output (issue 29)") ==
      "checksums-on-reading-a-preprocess-output-issue-29")
  }
}
