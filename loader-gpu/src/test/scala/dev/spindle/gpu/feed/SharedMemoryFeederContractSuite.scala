package dev.spindle.gpu.feed

import java.nio.file.{Files, Path}
import java.nio.file.attribute.PosixFilePermissions

import dev.spindle.gpu.device.{Device, SharedMemoryDevice}
import dev.spindle.gpu.feed.TestBatches._
import org.scalatest.{Failed, Outcome}

import scala.jdk.CollectionConverters._

/** The ring contract on the shared-memory host device (the bridge's device), plus its files. */
class SharedMemoryFeederContractSuite extends FeederContract {
  override def openDevice(): Device = new SharedMemoryDevice()

  /** This JVM's descriptors open on slabs of the default directory (an open slab holds one). */
  private def ourSegments(): Set[String] = {
    val dir = "/dev/shm/spindle-" + System.getProperty("user.name") + "/"
    val s = Files.list(Path.of("/proc/self/fd"))
    try s.iterator().asScala.flatMap(fd => scala.util.Try(Files.readSymbolicLink(fd).toString)
      .toOption).filter(_.startsWith(dir)).toSet
    finally s.close()
  }

  /** Every contract test, too, must leave no shared slab open behind. */
  override def withFixture(test: NoArgTest): Outcome = {
    val before = ourSegments()
    val outcome = super.withFixture(test)
    val left = ourSegments() -- before
    if (outcome.isSucceeded && left.nonEmpty) Failed(s"shared slabs left open: $left")
    else outcome
  }

  test("the device slab is an unlinked 0600 file reached through /proc while open, gone at close") {
    val device = new SharedMemoryDevice()
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(device, config(3))
      val seg = device.segments().get(0)
      assert(device.segments().size == 1)
      assert(seg.path().toString.startsWith(s"/proc/${ProcessHandle.current().pid()}/fd/"))
      assert(Files.readSymbolicLink(seg.path()).toString.endsWith(" (deleted)"))
      assert(PosixFilePermissions.toString(Files.getPosixFilePermissions(seg.path())) == "rw-------")
      offer(feeder, alloc, 0)
      val b = feeder.next(Long10s)
      assert(device.segmentOf(b.imagePointer()).get == seg)
      b.close()
      feeder.close()
      assert(ourSegments().isEmpty, s"slab descriptors left open: ${ourSegments()}")
      assert(device.segments().isEmpty)
      assert(device.outstandingHostBytes() == 0, "host slabs leaked")
    }
  }
}
