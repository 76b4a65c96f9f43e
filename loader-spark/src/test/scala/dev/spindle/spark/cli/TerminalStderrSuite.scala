package dev.spindle.spark.cli

import java.io.PrintStream
import java.nio.file.Files

import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite

/** `-Dspindle.stderr.path`: stderr written straight to what the launcher names, or left alone. */
class TerminalStderrSuite extends AnyFunSuite {
  private def keepingStderr(body: => Unit): Unit = {
    val saved = System.err
    try body finally System.setErr(saved)
  }

  test("a path: System.err writes to it, appending, and flushes every line") {
    TestFiles.withTempDir("terminal-stderr") { dir =>
      val tty = dir.resolve("tty")
      Files.writeString(tty, "before\n")
      keepingStderr {
        assert(TerminalStderr.use(tty.toString))
        System.err.println("progress: erased")
        System.err.print("\r\u001b[K")
        assert(Files.readString(tty) == "before\nprogress: erased\n\r\u001b[K")
        System.err.close()
      }
    }
  }

  test("no path, or one that cannot be opened: System.err stays and says why once") {
    TestFiles.withTempDir("terminal-stderr") { dir =>
      keepingStderr {
        val bytes = new java.io.ByteArrayOutputStream()
        val mine = new PrintStream(bytes, true)
        System.setErr(mine)
        assert(!TerminalStderr.use(null))
        assert(!TerminalStderr.use(""))
        assert(System.err eq mine)
        assert(bytes.size() == 0)
        assert(!TerminalStderr.use(dir.toString)) // a directory cannot be opened for writing
        assert(System.err eq mine)
        assert(bytes.toString.contains(s"cannot write to the terminal at $dir"), bytes.toString)
      }
    }
  }
}
