package dev.spindle.spark.cli

import java.nio.file.{Files, Path, Paths}

import org.scalatest.funsuite.AnyFunSuite

/**
 * The unit tests of `bin/lib`'s scripts that `bin/gpu-bundle` builds a GPU machine's bundle with
 * (`bin/lib/tests`: which classes `min_runtime.py` keeps of a run's class list). A bundle is made
 * here and used once there, within a short lease: what it leaves out fails only there.
 */
class GpuBundleScriptsSuite extends AnyFunSuite {
  private val Tests: Path = Paths.get("..", "bin", "lib", "tests").toAbsolutePath.normalize

  test("bin/lib's script tests pass") {
    assert(Files.isDirectory(Tests), s"$Tests is missing")
    val python = sys.env.getOrElse("SPINDLE_PYTHON", "/usr/bin/python3")
    val pb = new ProcessBuilder(python, "-m", "unittest", "discover", "-s", Tests.toString, "-v")
      .redirectErrorStream(true)
    pb.environment().put("PYTHONDONTWRITEBYTECODE", "1")
    val p = pb.start()
    val out = new String(p.getInputStream.readAllBytes(), "UTF-8")
    assert(p.waitFor() == 0, out)
    assert(out.contains("OK") && !out.contains("Ran 0 tests"), out)
  }
}
