package dev.spindle.gpu.feed

import dev.spindle.gpu.device.{Device, DeviceDiscovery}

/** The ring contract on CUDA device 0; every test cancels with the reason when there is none. */
class CudaFeederContractSuite extends FeederContract {
  override def openDevice(): Device = {
    if (!DeviceDiscovery.cudaAvailable(0)) {
      cancel("no CUDA device: " + DeviceDiscovery.probeCuda().detail())
    }
    DeviceDiscovery.open(DeviceDiscovery.Choice.CUDA, 0)
  }
}
