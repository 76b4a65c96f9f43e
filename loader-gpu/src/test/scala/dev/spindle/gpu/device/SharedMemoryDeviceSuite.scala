package dev.spindle.gpu.device

import java.io.{BufferedReader, InputStreamReader}
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.nio.file.attribute.PosixFilePermissions
import java.util.Comparator
import java.util.concurrent.TimeUnit

import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/**
 * Where the shared slabs live and that nothing of them outlives their JVM: each is unlinked as
 * soon as it is mapped and reached through /proc/<pid>/fd/<n>, so a JVM killed with SIGKILL
 * leaves nothing in the directory; a slab left by a dead JVM is removed at the next start.
 */
class SharedMemoryDeviceSuite extends AnyFunSuite {
  private val Python = sys.env.getOrElse("SPINDLE_PYTHON", "/usr/bin/python3")

  private def withDir[T](f: Path => T): T = {
    val dir = Files.createTempDirectory(Path.of("/dev/shm"), "spindle-shm-test")
    try f(dir)
    finally {
      val all = Files.walk(dir)
      try all.sorted(Comparator.reverseOrder[Path]()).forEach(p => Files.delete(p))
      finally all.close()
    }
  }

  private def names(dir: Path): Set[String] = {
    val s = Files.list(dir)
    try s.iterator().asScala.map(_.getFileName.toString).toSet finally s.close()
  }

  /** What Python reads through `path` with os.open + mmap: size and a SHA-256 of the bytes. */
  private def pythonReads(path: String): String = {
    val code = "import os, mmap, sys, hashlib\n" +
      "fd = os.open(sys.argv[1], os.O_RDONLY)\n" +
      "m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)\n" +
      "print(len(m), hashlib.sha256(m[:]).hexdigest())"
    val p = new ProcessBuilder(Python, "-c", code, path).redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes(), StandardCharsets.UTF_8).trim
    assert(p.waitFor() == 0, out)
    out
  }

  private def expected(n: Int): String = {
    val b = Array.tabulate[Byte](n)(i => (i * 7).toByte)
    (n.toString + " " + java.util.HexFormat.of().formatHex(
      java.security.MessageDigest.getInstance("SHA-256").digest(b)))
  }

  /** A JVM running SlabHolderMain on `dir`, with this JVM's flags and classpath. */
  private def holder(dir: Path): (Process, String) = {
    val javaExe = ProcessHandle.current().info().command().get()
    val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val p = new ProcessBuilder((Seq(javaExe) ++ flags ++ Seq("-cp", cp,
      "dev.spindle.gpu.device.SlabHolderMain", dir.toString)).asJava).redirectErrorStream(true)
      .start()
    val out = new BufferedReader(new InputStreamReader(p.getInputStream))
    val line = Iterator.continually(out.readLine()).takeWhile(_ != null)
      .find(_.startsWith("SEGMENT ")).getOrElse {
        p.destroyForcibly()
        fail("the slab holder printed no SEGMENT line")
      }
    (p, line.stripPrefix("SEGMENT "))
  }

  test("a JVM killed with SIGKILL leaves no slab behind; a trainer mapped it through /proc") {
    withDir { dir =>
      val (p, path) = holder(dir)
      try {
        assert(path.matches(s"/proc/${p.pid()}/fd/\\d+"), path)
        assert(pythonReads(path) == expected(1 << 20), "Python maps the JVM's bytes")
        assert(names(dir).isEmpty, s"the slab is unlinked once mapped: ${names(dir)}")
      } finally {
        p.destroyForcibly() // SIGKILL: no shutdown hook, no close
        assert(p.waitFor(60, TimeUnit.SECONDS))
      }
      assert(names(dir).isEmpty, s"left behind by the killed JVM: ${names(dir)}")
    }
  }

  test("a start removes slabs of JVMs that are gone, and nothing else") {
    withDir { dir =>
      val dead = new ProcessBuilder("true").start()
      dead.waitFor()
      val deadPid = dead.pid()
      val me = ProcessHandle.current().pid()
      Seq(s"spindle-$deadPid-1", s"spindle-$deadPid-7", s"spindle-$me-99", "spindle-x-1", "other")
        .foreach(n => Files.writeString(dir.resolve(n), "x"))
      new SharedMemoryDevice(dir).close()
      assert(names(dir) == Set(s"spindle-$me-99", "spindle-x-1", "other"))
    }
  }

  test("the slab is unlinked at once, 0600, and reached only through this JVM's descriptor") {
    withDir { dir =>
      val device = new SharedMemoryDevice(dir)
      val slab = device.allocateDevice(4096)
      val seg = device.segments().get(0)
      val pid = ProcessHandle.current().pid()
      assert(seg.path().toString.matches(s"/proc/$pid/fd/\\d+"), seg.path())
      assert(Files.readSymbolicLink(seg.path()).toString.endsWith(" (deleted)"))
      assert(PosixFilePermissions.toString(Files.getPosixFilePermissions(seg.path())) ==
        "rw-------")
      assert(names(dir).isEmpty)
      slab.close()
      val now = scala.util.Try(Files.readSymbolicLink(seg.path()).toString).getOrElse("")
      assert(!now.startsWith(dir.toString), s"descriptor still open: $now")
      device.close()
    }
  }

  test("a directory reached through a symbolic link holds slabs like any other") {
    withDir { dir =>
      Files.createDirectory(dir.resolve("real"))
      val link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("real"))
      val slabs = Files.createDirectory(link.resolve("slabs")) // its parent is a link
      val device = new SharedMemoryDevice(slabs)
      try {
        val slab = device.allocateDevice(4096)
        val seg = device.segments().get(0)
        val target = Files.readSymbolicLink(seg.path()).toString // the kernel's canonical name
        assert(target.startsWith(dir.resolve("real/slabs/spindle-").toString), target)
        assert(Files.size(seg.path()) == 4096 && names(slabs).isEmpty)
        slab.close()
      } finally device.close()
    }
  }

  test("a slab that fails after it was mapped is unmapped, closed and deleted") {
    withDir { dir =>
      val failing: SharedMemoryDevice.SlabLinker = _ => throw new java.io.IOException("injected")
      val device = new SharedMemoryDevice(dir, failing)
      try {
        val e = intercept[java.io.UncheckedIOException](device.allocateDevice(1 << 16))
        assert(e.getCause.getMessage == "injected")
        val maps = Files.readAllLines(Path.of("/proc/self/maps")).asScala
          .filter(_.contains(dir.toString))
        assert(maps.isEmpty, s"still mapped: $maps")
        val fds = Files.list(Path.of("/proc/self/fd"))
        val open = try fds.iterator().asScala.flatMap(fd =>
          scala.util.Try(Files.readSymbolicLink(fd).toString).toOption)
          .filter(_.contains(dir.toString)).toList finally fds.close()
        assert(open.isEmpty, s"descriptor still open: $open")
        assert(names(dir).isEmpty && device.segments().isEmpty)
      } finally device.close()
    }
  }

  test("this process's uid is the owner of what it creates; another uid's directory is refused") {
    withDir { dir =>
      val mine = Files.createFile(dir.resolve("mine"))
      assert(OwnedPaths.processUid() == Files.getAttribute(mine, "unix:uid"))
      assert(intercept[IllegalArgumentException](new SharedMemoryDevice(mine)).getMessage ==
        s"Invalid shared memory directory: $mine (not a directory)")
      assume(OwnedPaths.processUid() == 0, "chown needs root")
      val theirs = Files.createDirectory(dir.resolve("theirs"))
      new ProcessBuilder("chown", "4242", theirs.toString).start().waitFor() // no passwd entry
      assert(intercept[IllegalArgumentException](new SharedMemoryDevice(theirs)).getMessage ==
        s"Invalid shared memory directory: $theirs belongs to uid 4242, not to this process (uid 0)")
    }
  }

  test("the default directory is /dev/shm/spindle-<user>, mode 0700") {
    val device = new SharedMemoryDevice()
    try {
      val dir = Path.of("/dev/shm/spindle-" + System.getProperty("user.name"))
      assert(device.description().contains(dir.toString), device.description())
      assert(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)) == "rwx------")
    } finally device.close()
  }
}
