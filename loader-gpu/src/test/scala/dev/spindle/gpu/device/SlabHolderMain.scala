package dev.spindle.gpu.device

import java.nio.file.Path

import org.apache.arrow.memory.util.MemoryUtil

/**
 * A JVM that holds one shared slab (SharedMemoryDeviceSuite kills it): allocates 1 MiB in the
 * directory `args(0)`, writes byte i as `i * 7`, prints the segment's path, then waits.
 */
object SlabHolderMain {
  def main(args: Array[String]): Unit = {
    val device = new SharedMemoryDevice(Path.of(args(0)))
    val slab = device.allocateDevice(1 << 20)
    for (i <- 0 until (1 << 20)) MemoryUtil.putByte(slab.address() + i, (i * 7).toByte)
    println("SEGMENT " + device.segments().get(0).path())
    System.out.flush()
    Thread.sleep(600000)
  }
}
