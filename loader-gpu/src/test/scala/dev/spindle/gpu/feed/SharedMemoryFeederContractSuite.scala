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

  private def ourSegments(): Set[String] = {
    val prefix = s"spindle-${ProcessHandle.current().pid()}-"
    val s = Files.list(Path.of("/dev/shm"))
    try s.iterator().asScala.map(_.getFileName.toString).filter(_.startsWith(prefix)).toSet
    finally s.close()
  }

  /** Every contract test, too, must leave no shared memory file behind. */
  override def withFixture(test: NoArgTest): Outcome = {
    val before = ourSegments()
    val outcome = super.withFixture(test)
    val left = ourSegments() -- before
    if (outcome.isSucceeded && left.nonEmpty) Failed(s"left behind in /dev/shm: $left")
    else outcome
  }

  test("the device slab is a 0600 file under /dev/shm while open and is deleted at close") {
    val device = new SharedMemoryDevice()
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(device, config(3))
      val seg = device.segments().get(0)
      assert(device.segments().size == 1)
      assert(seg.path().getParent == Path.of("/dev/shm"))
      assert(PosixFilePermissions.toString(Files.getPosixFilePermissions(seg.path())) == "rw-------")
      offer(feeder, alloc, 0)
      val b = feeder.next(Long10s)
      assert(device.segmentOf(b.imagePointer()).get == seg)
      b.close()
      feeder.close()
      assert(!Files.exists(seg.path()), s"${seg.path()} left behind")
      assert(device.segments().isEmpty)
      assert(device.outstandingHostBytes() == 0, "host slabs leaked")
    }
  }
}
