package dev.spindle.gpu.bridge

import java.nio.file.{Files, NoSuchFileException}
import java.nio.file.attribute.PosixFilePermissions
import java.util.concurrent.atomic.AtomicBoolean

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite

/**
 * The run token file, as a script (or the soak) that polls for it and starts trainers reads it: a
 * reader sees it whole or not at all. It used to be created empty and then filled, so a trainer
 * started in between presented an empty token and was refused (the CI soak timed out on it).
 */
class TokenFileSuite extends AnyFunSuite {
  test("a reader polling the token file never sees it empty or cut, however often it is rewritten") {
    val dir = Files.createTempDirectory("spindle-token-")
    val socket = dir.resolve("bridge.sock")
    val file = SocketPaths.tokenFile(socket)
    val stop = new AtomicBoolean()
    val seen = ArrayBuffer[String]()
    val reader = new Thread(() => {
      while (!stop.get()) {
        try seen += Files.readString(file)
        catch { case _: NoSuchFileException => }
      }
    })
    reader.start()
    try {
      val written = (1 to 2000).map { _ =>
        val t = RunToken.random(); SocketPaths.writeToken(socket, t); t.value() + "\n"
      }.toSet
      stop.set(true)
      reader.join()
      assert(seen.nonEmpty, "the reader never found the file")
      val bad = seen.filterNot(written)
      assert(bad.size == 0, s"of ${seen.size} reads, ${bad.size} saw a partial token: ${bad.take(3)}")
      assert(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)) == "rw-------")
      SocketPaths.removeToken(socket)
      assert(Files.list(dir).count() == 0, "a temporary token file was left behind")
    } finally {
      stop.set(true)
      reader.join()
      Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.deleteIfExists(p))
    }
  }
}
