package dev.spindle.gpu.cuda

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The committed kernels match their source, checked with CUDA's compilers (no GPU needed):
 * `normalize.ptx` is what `nvcc -ptx -arch=compute_80` makes of `normalize.cu` (comment lines,
 * which name the compiler build, aside), `ptxas` assembles it for sm_80 and sm_90, and
 * `normalize.sm_90.cubin` is byte for byte what `ptxas -arch=sm_90` makes of it. Cancelled with
 * one visible message where `nvcc`/`ptxas` are missing ($CUDA_HOME/bin, /usr/local/cuda-13.0/bin,
 * /usr/local/cuda/bin, then the PATH). Regenerate as loader-gpu/README.md says.
 */
class KernelBuildSuite extends AnyFunSuite {
  private val Sources = Paths.get("src/main/resources/dev/spindle/gpu/cuda").toAbsolutePath
  private val Regenerate = s"regenerate in $Sources as loader-gpu/README.md (The kernels) says"

  private lazy val cudaBin: Option[Path] =
    (sys.env.get("CUDA_HOME").toSeq ++ Seq("/usr/local/cuda-13.0", "/usr/local/cuda"))
      .map(h => Paths.get(h, "bin")).find(b => Files.isExecutable(b.resolve("nvcc")))
      .orElse(sys.env.getOrElse("PATH", "").split(':').filter(_.nonEmpty).map(Paths.get(_))
        .find(b => Files.isExecutable(b.resolve("nvcc"))))

  private def tool(name: String): String = cudaBin match {
    case Some(b) if Files.isExecutable(b.resolve(name)) => b.resolve(name).toString
    case _ =>
      val msg = s"KernelBuildSuite: $name not found (CUDA_HOME, /usr/local/cuda-13.0, /usr/local/cuda," +
        " PATH): the PTX drift and cubin checks are skipped"
      if (KernelBuildSuite.warned.compareAndSet(false, true)) System.err.println(msg)
      cancel(msg)
  }

  private def run(dir: Path, command: String*): String = {
    val p = new ProcessBuilder(command.asJava).directory(dir.toFile).redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes(), StandardCharsets.UTF_8)
    assert(p.waitFor(120, TimeUnit.SECONDS), s"${command.mkString(" ")} did not finish")
    assert(p.exitValue() == 0, s"${command.mkString(" ")} exited ${p.exitValue()}: $out")
    out
  }

  private def withTemp(f: Path => Unit): Unit = {
    val dir = Files.createTempDirectory("spindle-kernels-")
    try f(dir)
    finally Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.delete(p))
  }

  private def code(ptx: Path): Seq[String] =
    Files.readAllLines(ptx).asScala.toSeq.filterNot(_.trim.startsWith("//"))

  test("normalize.ptx is what nvcc makes of normalize.cu (no drift)") {
    val nvcc = tool("nvcc")
    withTemp { dir =>
      val fresh = dir.resolve("normalize.ptx")
      run(Sources, nvcc, "-ptx", "-arch=compute_80", "-o", fresh.toString, "normalize.cu")
      val committed = code(Sources.resolve("normalize.ptx"))
      val made = code(fresh)
      val firstDiff = committed.zipAll(made, "<end>", "<end>").indexWhere { case (a, b) => a != b }
      if (firstDiff >= 0) fail(s"normalize.ptx differs from nvcc's output (${run(Sources, nvcc, "--version")
        .linesIterator.toSeq.last}) at code line ${firstDiff + 1}: committed " +
        s"'${committed.lift(firstDiff).getOrElse("<end>")}', nvcc '${made.lift(firstDiff).getOrElse("<end>")}'; $Regenerate")
    }
  }

  test("ptxas assembles normalize.ptx for sm_80 and sm_90") {
    val ptxas = tool("ptxas")
    withTemp { dir =>
      for (arch <- Seq("sm_80", "sm_90")) {
        val out = dir.resolve(s"normalize.$arch.cubin")
        run(Sources, ptxas, s"-arch=$arch", "-Werror", "normalize.ptx", "-o", out.toString)
        assert(Files.size(out) > 0, arch)
      }
    }
  }

  test("normalize.sm_90.cubin is what ptxas makes of normalize.ptx for sm_90") {
    val ptxas = tool("ptxas")
    withTemp { dir =>
      val out = dir.resolve("normalize.sm_90.cubin")
      run(Sources, ptxas, "-arch=sm_90", "normalize.ptx", "-o", out.toString)
      val committed = Files.readAllBytes(Sources.resolve(NormalizeKernels.CUBIN_SM90_RESOURCE))
      if (!java.util.Arrays.equals(committed, Files.readAllBytes(out))) fail(
        s"normalize.sm_90.cubin (${committed.length} bytes) differs from ptxas's output " +
          s"(${Files.size(out)} bytes, ${run(Sources, ptxas, "--version").linesIterator.toSeq.last}); $Regenerate")
    }
  }

  test("the sm_90 cubin is loaded on compute capability 9.0 only; PTX elsewhere (no GPU needed)") {
    assert(NormalizeKernels.resourceFor(9, 0) == "normalize.sm_90.cubin")
    Seq((8, 0), (8, 6), (8, 9), (9, 1), (10, 0), (12, 0)).foreach { case (major, minor) =>
      assert(NormalizeKernels.resourceFor(major, minor) == "normalize.ptx", s"$major.$minor")
    }
    val cubin = NormalizeKernels.image(NormalizeKernels.CUBIN_SM90_RESOURCE)
    assert(cubin.take(4).sameElements(Array[Byte](0x7f, 'E', 'L', 'F')), "a cubin is an ELF image")
    assert(NormalizeKernels.image(NormalizeKernels.PTX_RESOURCE).last == 0, "PTX NUL-terminated")
  }
}

object KernelBuildSuite {
  private val warned = new java.util.concurrent.atomic.AtomicBoolean()
}
