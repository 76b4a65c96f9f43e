package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

class PropertiesFileSuite extends AnyFunSuite {
  test("--properties-file reads the spark.* settings of a file; other keys are left out") {
    TestFiles.withTempDir("props") { dir =>
      val file = dir.resolve("job.conf")
      Files.writeString(file, "# comment\nspark.spindle.batchSize  42\nother.key 1\n")
      assert(PropertiesFile.read(file).asScala == Map("spark.spindle.batchSize" -> "42"))
      assert(System.getProperty("spark.spindle.batchSize") == null, "no system property is set")
      val e = intercept[IllegalArgumentException](PropertiesFile.read(dir.resolve("nope")))
      assert(e.getMessage.contains("no such file"))
    }
  }

  test("a bad value in the file is refused before Spark starts, naming its key; flags win over it") {
    TestFiles.withTempDir("props-bad") { dir =>
      val file = dir.resolve("job.conf")
      Files.writeString(file, "spark.spindle.maxFailures lots\n")
      val err = new ByteArrayOutputStream()
      val code = SpindleMain.run(Array("preprocess", "--input", dir.toString, "--output",
        dir.resolve("out").toString, "--properties-file", file.toString),
        new PrintStream(new ByteArrayOutputStream()), new PrintStream(err))
      assert(code == 2, err.toString)
      assert(err.toString.contains("Invalid value for spark.spindle.maxFailures: 'lots' (must be a count"))
      Files.writeString(file, "spark.spindle.batchSize 0\n")
      val cl = SpindleMain.commandLine()
      cl.parseArgs("preprocess", "--input", "x", "--output", "y", "--properties-file", file.toString,
        "--batch-size", "8")
      val p = cl.getSubcommands.get("preprocess").getCommand[PreprocessCommand]
      val conf = JobConf.of(p.spark, cl)
      p.image.putInto(conf)
      assert(conf.checked(cl).get("spark.spindle.batchSize") == "8")
      assert(!Files.exists(dir.resolve("out")))
    }
  }
}
