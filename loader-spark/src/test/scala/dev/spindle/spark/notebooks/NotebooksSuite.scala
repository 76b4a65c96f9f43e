package dev.spindle.spark.notebooks

import java.io.{ByteArrayInputStream, File}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.Base64
import java.util.concurrent.TimeUnit
import javax.imageio.ImageIO

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Executes every notebook under notebooks/ headless through `bin/notebooks execute` (the same
 * command users and CI run: Java kernel, start-up timeout and bounded retry) and checks what each
 * left behind. The kernel gets this test run's classpath, so nothing is built or installed outside
 * target/. Without Jupyter the suite cancels, or fails under CI=true.
 */
class NotebooksSuite extends AnyFunSuite {
  private val repo = Path.of("..").toAbsolutePath.normalize
  private val target = Path.of("target").toAbsolutePath
  private val outDir = target.resolve("notebooks-executed")
  private val json = new ObjectMapper()
  private val processTimeoutMinutes = 20L

  private def requireJupyter(): Unit = {
    val ok =
      try {
        val p = new ProcessBuilder("jupyter", "nbconvert", "--version").redirectErrorStream(true).start()
        p.getInputStream.readAllBytes()
        p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0
      } catch { case _: java.io.IOException => false }
    if (!ok) {
      val msg = "Jupyter (jupyter-nbconvert) is not installed; run bin/setup-test-deps"
      if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
    }
  }

  /** Runs `bin/notebooks execute --output-dir outDir nb`; returns (exit code, combined output). */
  private def execute(notebook: Path): (Int, String) = {
    requireJupyter()
    val classpath =
      sys.props.get("surefire.test.class.path").getOrElse(sys.props("java.class.path"))
    val log = Files.createTempFile(target, "notebooks-", ".log")
    val pb = new ProcessBuilder(
      repo.resolve("bin/notebooks").toString, "execute", "--output-dir", outDir.toString,
      notebook.toString)
    pb.environment().put("SPINDLE_CLASSPATH", classpath)
    pb.environment().put("SPINDLE_JUPYTER_DIR", target.resolve("jupyter-test").toString)
    pb.redirectErrorStream(true).redirectOutput(log.toFile)
    val p = pb.start()
    if (!p.waitFor(processTimeoutMinutes, TimeUnit.MINUTES)) {
      p.descendants().forEach(d => d.destroyForcibly())
      p.destroyForcibly()
      fail(s"bin/notebooks execute $notebook did not finish in $processTimeoutMinutes minutes:\n" +
        tail(Files.readString(log)))
    }
    val output = Files.readString(log)
    Files.delete(log)
    (p.exitValue(), output)
  }

  private def tail(s: String): String = s.takeRight(6000)

  /** Executes a committed notebook, requires success, returns the executed copy. */
  private def run(name: String): JsonNode = {
    val (rc, output) = execute(repo.resolve("notebooks").resolve(name))
    assert(rc == 0, s"$name failed:\n${tail(output)}")
    val nb = json.readTree(outDir.resolve(name).toFile)
    val code = cells(nb).filter(_.get("cell_type").asText == "code")
    assert(code.nonEmpty)
    code.foreach { c =>
      assert(!c.get("execution_count").isNull, s"$name: a cell did not run:\n${source(c)}")
      assert(!outputs(c).exists(_.get("output_type").asText == "error"), s"$name: error in\n${source(c)}")
    }
    val cleanup = outputs(code.last).flatMap(o => Option(o.get("text"))).map(_.toString).mkString
    assert(cleanup.matches("(?s).*removed \\S+: true.*"),
      s"$name: the last cell should remove the notebook's working folder, printed: $cleanup")
    nb
  }

  private def cells(nb: JsonNode): Seq[JsonNode] = nb.get("cells").elements().asScala.toSeq
  private def outputs(cell: JsonNode): Seq[JsonNode] =
    Option(cell.get("outputs")).map(_.elements().asScala.toSeq).getOrElse(Seq.empty)
  private def source(cell: JsonNode): String = cell.get("source").elements().asScala.map(_.asText).mkString

  private def allOutputs(nb: JsonNode): Seq[JsonNode] = cells(nb).flatMap(outputs)

  private def text(nb: JsonNode): String =
    allOutputs(nb).flatMap { o =>
      Option(o.get("text")).toSeq ++ Option(o.get("data")).flatMap(d => Option(d.get("text/plain")))
    }.flatMap(t => if (t.isArray) t.elements().asScala.map(_.asText) else Iterator(t.asText)).mkString

  private def images(nb: JsonNode): Seq[java.awt.image.BufferedImage] =
    allOutputs(nb).flatMap(o => Option(o.get("data")).flatMap(d => Option(d.get("image/png")))).map { png =>
      val b64 = if (png.isArray) png.elements().asScala.map(_.asText).mkString else png.asText
      ImageIO.read(new ByteArrayInputStream(Base64.getMimeDecoder.decode(b64.trim)))
    }

  /** Distinct RGB values: a real picture has many, a blank or failed rendering has few. */
  private def colours(img: java.awt.image.BufferedImage): Int =
    (for (y <- 0 until img.getHeight by 2; x <- 0 until img.getWidth by 2) yield img.getRGB(x, y)).distinct.size

  test("the quick-start notebook preprocesses a dataset and renders a batch as an image grid") {
    val nb = run("01-quickstart.ipynb")
    val grids = images(nb)
    assert(grids.size == 1, "one image grid expected")
    assert(grids.head.getWidth >= 400 && grids.head.getHeight >= 200)
    assert(colours(grids.head) > 1000, "the grid should be photographs, not a flat drawing")
    assert(text(nb).contains("first batch: 32 rows"))
  }

  test("the tuning notebook plots throughput with error bars and names the bottleneck stage") {
    val nb = run("02-tuning.ipynb")
    val plots = images(nb)
    assert(plots.size == 1, "one throughput plot expected")
    assert(plots.head.getWidth >= 600 && plots.head.getHeight >= 300)
    val out = text(nb)
    assert(out.contains("images/s (mean ± sd)"), out)
    assert(out.contains("bottleneck stage: "), out)
  }

  test("the feeding notebook plans 2 ranks, resumes from saved state, matches the feed job and feeds through the host device") {
    val out = text(run("03-feeding.ipynb"))
    assert(out.contains("ranks are disjoint and have equal batch counts"), out)
    assert(out.contains("equal to the uninterrupted run's tail"), out)
    assert(out.contains("feed, resumed, rank 1"), out)
    assert(!out.contains("DIFFERS from plan"), out)
    assert(out.contains("every row matching the resumed plan"), out)
    assert(out.contains("\"batches_leased\""), out)
  }

  test("bin/notebooks execute fails when a cell fails, and names the cell") {
    val bad = target.resolve("notebooks-failing")
    Files.createDirectories(bad)
    val nb = bad.resolve("failing.ipynb")
    Files.writeString(nb,
      """{"cells": [{"cell_type": "code", "execution_count": null, "id": "a", "metadata": {}, "outputs": [],
        |  "source": ["int answer = 6 * 7;"]},
        | {"cell_type": "code", "execution_count": null, "id": "b", "metadata": {}, "outputs": [],
        |  "source": ["if (answer == 42) throw new IllegalStateException(\"cell failure on purpose\");"]}],
        | "metadata": {"kernelspec": {"display_name": "Java (Spindle + Spark)", "language": "java",
        |  "name": "spindle-java"}}, "nbformat": 4, "nbformat_minor": 5}""".stripMargin,
      StandardCharsets.UTF_8)
    val (rc, output) = execute(nb)
    assert(rc != 0, s"a failing cell must fail the run:\n${tail(output)}")
    assert(output.contains("cell failure on purpose"), tail(output))
    assert(output.contains("failing.ipynb FAILED"), tail(output))
  }
}
