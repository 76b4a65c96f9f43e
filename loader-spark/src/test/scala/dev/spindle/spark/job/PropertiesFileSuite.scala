package dev.spindle.spark.job

import java.nio.file.Files

import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

class PropertiesFileSuite extends AnyFunSuite {
  test("--properties-file loads spark.* settings as system properties and leaves the other flags") {
    TestFiles.withTempDir("props") { dir =>
      val file = dir.resolve("job.conf")
      Files.writeString(file, "# comment\nspark.spindle.test.fromFile  42\nother.key 1\n")
      try {
        val rest = PropertiesFile.apply(Array("--input", "x", "--properties-file", file.toString, "--size", "8"))
        assert(rest.toSeq == Seq("--input", "x", "--size", "8"))
        assert(System.getProperty("spark.spindle.test.fromFile") == "42")
        assert(System.getProperty("other.key") == null)
      } finally System.clearProperty("spark.spindle.test.fromFile")
      val e = intercept[Args.UsageException](PropertiesFile.apply(Array("--properties-file", dir.resolve("nope").toString)))
      assert(e.getMessage.contains("no such file"))
    }
  }
}
