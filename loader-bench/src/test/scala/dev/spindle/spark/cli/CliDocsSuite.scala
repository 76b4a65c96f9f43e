package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite
import picocli.CommandLine

/**
 * docs/reference/cli.md's usage section is what [[CliDocs]] renders from the command tree, and each
 * of its sections is what `bin/spindle <command> --help` prints. In loader-bench because only here
 * is the whole tree on the classpath: `bench` and its benchmarks included.
 */
class CliDocsSuite extends AnyFunSuite {
  private val page = Path.of("..").toAbsolutePath.normalize.resolve("docs/reference/cli.md")

  /** Every command of the tree as its words after `spindle`, parents before their subcommands. */
  private def commands(c: CommandLine, path: Seq[String]): Seq[Seq[String]] =
    path +: c.getSubcommands.asScala.toSeq.collect {
      case (name, sub) if name == sub.getCommandName => commands(sub, path :+ name)
    }.flatten

  private lazy val all = commands(SpindleMain.commandLine(), Nil)

  private def section(markdown: String, command: Seq[String]): String = {
    val heading = "### `" + ("spindle" +: command).mkString(" ") + "`\n\n```\n"
    val from = markdown.indexOf(heading)
    assert(from >= 0, s"no section for spindle ${command.mkString(" ")}")
    markdown.substring(from + heading.length, markdown.indexOf("```\n", from + heading.length))
  }

  test("docs/reference/cli.md holds every command's usage, as generated") {
    val text = Files.readString(page)
    val begin = text.indexOf("<!-- cli:begin")
    val end = text.indexOf("<!-- cli:end -->")
    assert(begin >= 0 && end > begin, s"$page lacks the cli:begin/cli:end markers")
    assert(text.substring(text.indexOf('\n', begin) + 1, end) == CliDocs.markdown(),
      "docs/reference/cli.md's usage section drifted from the commands: regenerate with bin/gen-docs")
  }

  test("the generated usage has a section for every command, bench and its benchmarks included") {
    assert(all.contains(Seq("bench", "images")) && all.contains(Seq("example", "fashion-mnist")), all)
    val markdown = CliDocs.markdown()
    for (c <- all) section(markdown, c)
  }

  test("each section is exactly what `spindle <command> --help` prints") {
    val markdown = CliDocs.markdown()
    for (c <- all) {
      val out = new ByteArrayOutputStream()
      val err = new ByteArrayOutputStream()
      val code = SpindleMain.run((c :+ "--help").toArray, new PrintStream(out, true), new PrintStream(err, true))
      assert(code == 0, s"$c: $err")
      assert(out.toString == section(markdown, c), s"spindle ${c.mkString(" ")} --help")
    }
  }
}
