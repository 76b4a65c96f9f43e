package dev.spindle.gpu.feed

import dev.spindle.gpu.device.{Device, HostDevice}

/** The ring contract on the host device: runs everywhere, including CI. */
class HostFeederContractSuite extends FeederContract {
  override def openDevice(): Device = new HostDevice()
}
