package dev.spindle.spark.fuzz

import java.nio.file.{Files, Path}
import scala.jdk.CollectionConverters._
import dev.spindle.spark.image.NativeDecodeFuzz
import org.scalatest.funsuite.AnyFunSuite

/**
 * CI's share of fuzzing: every target of [[FuzzTarget.ALL]] runs over its committed corpus in this
 * JVM (regression: seeds and every input a fuzzing run once crashed on), each input within the
 * target's time bound; then Jazzer fuzzes each target for a few seconds in its own JVM
 * (`-Dspindle.fuzz.seconds`, default 2) and must report executions and no crash. A target that
 * always crashes proves the harness reports one. Longer runs: `bin/fuzz`.
 */
class FuzzSuite extends AnyFunSuite {
  private val seconds = Integer.getInteger("spindle.fuzz.seconds", 2).intValue
  private val work = Files.createDirectories(Path.of("target", "fuzz-ci"))

  private def skipWithoutNative(t: FuzzTarget): Unit =
    if (t.name == "decode-native" && !NativeDecodeFuzz.available()) {
      cancel("the native JPEG decoder is not built here (no gcc or libjpeg62-turbo-dev)")
    }

  for (t <- FuzzTarget.ALL.asScala) {
    test(s"${t.name}: every committed corpus input passes within ${t.timeoutSeconds} s") {
      skipWithoutNative(t)
      val inputs = Files.list(t.corpus()).iterator().asScala.toSeq.sortBy(_.toString)
      assert(inputs.nonEmpty, s"no corpus in ${t.corpus()}")
      for (input <- inputs) {
        val start = System.nanoTime()
        try t.runOnce(Files.readAllBytes(input))
        catch { case e: Throwable => fail(s"${t.name} failed on $input: $e", e) }
        val took = (System.nanoTime() - start) / 1e9
        assert(took < t.timeoutSeconds, s"${t.name} took $took s on $input")
      }
    }
  }

  for (t <- FuzzTarget.ALL.asScala) {
    test(s"${t.name}: $seconds s of fuzzing find no crash") {
      skipWithoutNative(t)
      val r = fuzz(t)
      assert(r.crashes == 0 && r.exitCode == 0, s"${t.name}: $r\n${tail(r)}")
      assert(r.executions > 0 && r.coverage > 0, s"${t.name} ran nothing: $r\n${tail(r)}")
    }
  }

  test("the harness reports a crash: its count, its input and the exit code") {
    val t = new FuzzTarget("self-check", classOf[CrashingFuzz].getName, 256, 10, 64,
      "a target that always crashes", "")
    val r = fuzz(t)
    assert(r.crashes == 1 && r.exitCode != 0, s"$r\n${tail(r)}")
    assert(r.crashFiles.size == 1 && Files.readAllBytes(Path.of(r.crashFiles.get(0))).length >= 3)
  }

  private def fuzz(t: FuzzTarget): FuzzResult = {
    val dir = work.resolve(t.name)
    if (Files.exists(dir)) {
      Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.delete(p))
    }
    new JazzerRun(t, Files.createDirectories(dir), FuzzMain.classpath(), FuzzMain.jvmFlags())
      .run(seconds, 0, 0)
  }

  private def tail(r: FuzzResult): String =
    Files.readAllLines(Path.of(r.log)).asScala.takeRight(40).mkString("\n")
}
