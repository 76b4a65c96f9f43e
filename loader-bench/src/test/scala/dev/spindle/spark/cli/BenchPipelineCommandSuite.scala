package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/** `spindle bench pipeline` in this JVM: `--trace FILE` reaches the benchmark's runs. */
class BenchPipelineCommandSuite extends AnyFunSuite {
  test("bench pipeline --trace writes the runs' spans from its own JVM") {
    TestFiles.withTempDir("trace-bench") { dir =>
      val trace = dir.resolve("bench-trace.json")
      val err = new ByteArrayOutputStream()
      val code = SpindleMain.run(Array("bench", "pipeline", "--items", "2000", "--max-threads",
        "1", "--stages", "2", "--repeats", "1", "--trace", trace.toString),
        new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true))
      assert(code == 0, err.toString)
      val spans = new ObjectMapper().readTree(trace.toFile).get("traceEvents").asScala
        .filter(_.get("ph").asText == "X").map(_.get("name").asText).toSet
      assert(spans.size >= 3 && spans.contains("sink"), spans)
    }
  }}
