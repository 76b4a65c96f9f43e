package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.IpcExport;
import java.lang.reflect.Field;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUipcMemHandle;
import jcuda.driver.JCudaDriver;

/**
 * Exports device allocations for CUDA IPC. JCuda fills {@code CUipcMemHandle}'s private {@code
 * reserved} array in place and has no getter, so the 64 bytes are read by reflection (JCuda sits in
 * the unnamed module: {@code setAccessible} needs no JVM flag). Caller has made the context
 * current; any thread.
 */
final class CudaIpc {
  private static final Field RESERVED = reserved();

  private CudaIpc() {}

  /** {@code cuIpcGetMemHandle} plus the allocation's range ({@code cuMemGetAddressRange}). */
  static IpcExport export(int ordinal, CUdeviceptr pointer, long address) {
    CUipcMemHandle handle = new CUipcMemHandle();
    CUdeviceptr base = new CUdeviceptr();
    long[] size = {0};
    check(
        JCudaDriver.cuMemGetAddressRange(base, size, pointer),
        "cuMemGetAddressRange(0x" + Long.toHexString(address) + ")");
    long baseAddress = CudaDevice.addressOf(base);
    check(
        JCudaDriver.cuIpcGetMemHandle(handle, base),
        "cuIpcGetMemHandle(0x" + Long.toHexString(baseAddress) + ", cuda:" + ordinal + ")");
    return new IpcExport(ordinal, bytesOf(handle), baseAddress, size[0]);
  }

  static byte[] bytesOf(CUipcMemHandle handle) {
    try {
      return ((byte[]) RESERVED.get(handle)).clone();
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("Cannot read CUipcMemHandle.reserved", e);
    }
  }

  private static Field reserved() {
    try {
      Field f = CUipcMemHandle.class.getDeclaredField("reserved");
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new ExceptionInInitializerError(
          new IllegalStateException(
              "JCuda's CUipcMemHandle "
                  + "has no accessible byte[] 'reserved' field (JCuda version changed?): "
                  + e,
              e));
    }
  }
}
