package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.{Files, Path}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import dev.spindle.spark.image.ImageTestSupport
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/** `spindle bench images` run in this JVM on a few large JPEGs: the flags reach the benchmark. */
class BenchImagesCommandSuite extends AnyFunSuite {
  /** The JSON report of `spindle bench images --input dir ... extra`. */
  private def bench(dir: Path, extra: String*): JsonNode = {
    val report = dir.resolve("report.json")
    val err = new ByteArrayOutputStream()
    val args = Seq("bench", "images", "--input", dir.resolve("images").toString, "--threads", "1",
      "--epochs", "1", "--report", report.toString) ++ extra
    val code = SpindleMain.run(args.toArray, new PrintStream(new ByteArrayOutputStream(), true),
      new PrintStream(err, true))
    assert(code == 0, err.toString)
    new ObjectMapper().readTree(report.toFile)
  }

  test("--reduced-decode decodes at a DCT-reduced scale and says so in the report") {
    TestFiles.withTempDir("bench-images") { dir =>
      Files.createDirectories(dir.resolve("images"))
      for (i <- 0 until 3) {
        // 1600 x 1200, textured: resize(256) shrinks it by more than 4, so reduced decode applies
        val jpeg = ImageTestSupport.encode("jpg", 1600, 1200) { (x, y) =>
          ((x * 7 + y * 3 + i * 40) & 0xff) << 16 | ((x ^ y) & 0xff) << 8 | (x * y >> 5) & 0xff
        }
        Files.write(dir.resolve("images").resolve(s"$i.jpg"), jpeg)
      }
      val full = bench(dir)
      val reduced = bench(dir, "--reduced-decode")
      assert(!full.get("reduced_decode").asBoolean() && reduced.get("reduced_decode").asBoolean())
      for (r <- Seq(full, reduced)) {
        assert(r.get("images").asInt() == 3 && r.get("quarantined").asLong() == 0, r)
      }
      // the same images, seed and crops: only the decode scale differs
      assert(full.get("checksum").asDouble() != reduced.get("checksum").asDouble(),
        "the checksum did not change: --reduced-decode did not reach the transform")
    }
  }
}
