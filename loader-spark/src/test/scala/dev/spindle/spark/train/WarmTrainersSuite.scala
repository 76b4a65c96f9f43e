package dev.spindle.spark.train

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/**
 * Warm trainer interpreters: started before a rank is known with torch imported, handed their
 * environment and script when the rank's trainer starts; none left, a trainer starts cold.
 */
class WarmTrainersSuite extends AnyFunSuite {
  import TrainRuns._

  /** A trainer that says whether torch was imported before it ran, its argv and its RANK. */
  private def trainer(dir: Path, rank: Int, env: Map[String, String]): TrainerProcess = {
    val script = dir.resolve("t.py")
    Files.writeString(script, "import os, sys\nprint('warm' if 'torch' in sys.modules else 'cold',"
      + " sys.argv[1:], os.environ['RANK'], os.environ['PYTHONPATH'].split(':')[0] == sys.path[1])\n")
    val path = PythonClient.dir().toString + sys.env.get("PYTHONPATH").filter(_.nonEmpty).map(":" + _).getOrElse("")
    TrainerProcess.start(rank, Python, script.toString, List("--lr", "0.1").asJava,
      (Map("RANK" -> rank.toString, "PYTHONPATH" -> path) ++ env).asJava, false)
  }

  private def said(t: TrainerProcess): String = {
    assert(t.awaitExit(java.time.Duration.ofSeconds(60)) && t.exitCode == 0, t.tail)
    t.tail
  }

  test("a warm interpreter runs the first trainer with its environment and script, the next starts cold") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("warm-trainers") { dir =>
      WarmTrainers.start(Python, 1).await() // the check's verdict: it imported torch
      try {
        assert(said(trainer(dir, 3, Map())) == "warm ['--lr', '0.1'] 3 True")
        assert(said(trainer(dir, 4, Map())) == "cold ['--lr', '0.1'] 4 True", "none left: cold")
        WarmTrainers.start(Python, 1).await()
        // another PYTHONPATH than the warm one started with: that one is not used
        assert(said(trainer(dir, 5, Map("PYTHONPATH" -> (PythonClient.dir().toString + ":" + dir))))
          .startsWith("cold"))
      } finally WarmTrainers.stopAll()
    }
  }

  test("a Python that cannot import torch fails the check as the cold check does") {
    val e = intercept[IllegalArgumentException](WarmTrainers.start("/bin/false", 2).await())
    assert(e.getMessage.contains("'/bin/false' cannot import torch") && e.getMessage.contains("--python"),
      e.getMessage)
    val missing = intercept[IllegalArgumentException](WarmTrainers.start("/no/such/python", 1).await())
    assert(missing.getMessage.contains("Cannot run the trainers' Python '/no/such/python'"), missing.getMessage)
  }
}
