package dev.spindle.gpu.bridge;

import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.device.IpcExport;
import dev.spindle.gpu.device.SharedMemoryDevice;
import dev.spindle.gpu.device.SharedMemoryDevice.SharedSegment;
import dev.spindle.gpu.feed.GpuFeeder;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a rank's device slab reaches its trainers: the WELCOME memory block (kind 1, a shared-memory
 * file; kind 2, a CUDA IPC handle), the devices a trainer may ask for, and the offsets BATCH
 * carries. Made once per rank when the bridge starts; immutable, any thread.
 */
sealed interface ServedMemory {
  /** Every device a HELLO may name: {@code cpu}, or {@code cuda:N} with N in 0..999. */
  Pattern DEVICE = Pattern.compile("cpu|cuda:(0|[1-9][0-9]{0,2})");

  Pattern CUDA_DEVICE = Pattern.compile("cuda:(0|[1-9][0-9]{0,2})");

  /** The memory kind byte of WELCOME. */
  byte kind();

  /** Size of the memory block in WELCOME. */
  int blockBytes();

  /** Writes the memory block of WELCOME. */
  void putBlock(ByteBuffer b);

  /** Offset of {@code bytes} at {@code pointer} (into the feeder's slab) from the block's base. */
  long offsetOf(long pointer, long bytes);

  /**
   * Checks the HELLO's device against where the slab lives.
   *
   * @throws ProtocolException {@code UNSUPPORTED_DEVICE} naming the device to connect with
   */
  void accept(String device, int rank);

  /**
   * Refuses a HELLO device that is neither {@code cpu} nor {@code cuda:N} (N in 0..999), before any
   * feeder looks at it.
   *
   * @throws ProtocolException {@code UNSUPPORTED_DEVICE} naming the (abbreviated) device
   */
  static void checkDevice(String device) {
    if (!DEVICE.matcher(device).matches()) {
      throw new ProtocolException(
          BridgeError.UNSUPPORTED_DEVICE,
          "Invalid device: "
              + PeerText.quote(device)
              + " (must be 'cpu' or 'cuda:N' with N in 0..999)");
    }
  }

  /**
   * What {@code feeder}'s slab is served as: its shared file, or its CUDA IPC export.
   *
   * @throws IllegalArgumentException for a feeder whose memory another process cannot map
   */
  static ServedMemory of(int rank, GpuFeeder feeder) {
    requireMappable(rank, feeder);
    if (feeder.device() instanceof SharedMemoryDevice shm) {
      List<SharedSegment> s = shm.segments();
      if (s.size() != 1) {
        throw new IllegalStateException(
            "Feeder on " + shm.description() + " has " + s.size() + " shared slabs (expected 1)");
      }
      return new Shared(s.get(0));
    }
    return new CudaIpc(
        feeder
            .exportDeviceMemory()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "Invalid feeder for rank "
                            + rank
                            + ": "
                            + feeder.device().description()
                            + " did not export its slab for CUDA IPC")));
  }

  /**
   * Refuses a feeder whose memory another process cannot map: only a shared-memory or a CUDA
   * device's can be served.
   *
   * @throws IllegalArgumentException naming the rank and the feeder's device
   */
  static void requireMappable(int rank, GpuFeeder feeder) {
    if (!(feeder.device() instanceof SharedMemoryDevice)
        && feeder.device().kind() != DeviceKind.CUDA) {
      throw new IllegalArgumentException(
          "Invalid feeder for rank "
              + rank
              + ": it runs on "
              + feeder.device().description()
              + ", whose memory another process cannot map "
              + "(open it on a SharedMemoryDevice or a CUDA device)");
    }
  }

  /** Memory kind 1: the slab's /proc/pid/fd/n link, which the trainer opens and maps once. */
  record Shared(SharedSegment segment) implements ServedMemory {
    @Override
    public byte kind() {
      return 1;
    }

    @Override
    public int blockBytes() {
      return Wire.stringBytes(segment.path().toString()) + 8;
    }

    @Override
    public void putBlock(ByteBuffer b) {
      Wire.putString(b, segment.path().toString());
      b.putLong(segment.size());
    }

    @Override
    public long offsetOf(long pointer, long bytes) {
      return pointer - segment.address();
    }

    @Override
    public void accept(String device, int rank) {
      if (!device.equals("cpu")) {
        throw new ProtocolException(
            BridgeError.UNSUPPORTED_DEVICE,
            "Invalid device: "
                + PeerText.quote(device)
                + ": rank "
                + rank
                + "'s feeder runs on host shared memory; connect with device 'cpu'");
      }
    }
  }

  /** Memory kind 2: the device slab's CUDA IPC handle, opened once by the trainer. */
  record CudaIpc(IpcExport export) implements ServedMemory {
    @Override
    public byte kind() {
      return 2;
    }

    @Override
    public int blockBytes() {
      return 4 + IpcExport.HANDLE_BYTES + 8;
    }

    @Override
    public void putBlock(ByteBuffer b) {
      b.putInt(export.ordinal()).put(export.handle()).putLong(export.size());
    }

    @Override
    public long offsetOf(long pointer, long bytes) {
      return export.offsetOf(pointer, bytes);
    }

    @Override
    public void accept(String device, int rank) {
      Matcher m = CUDA_DEVICE.matcher(device);
      if (!m.matches() || Integer.parseInt(m.group(1)) != export.ordinal()) {
        throw new ProtocolException(
            BridgeError.UNSUPPORTED_DEVICE,
            "Invalid device: "
                + PeerText.quote(device)
                + ": rank "
                + rank
                + "'s feeder runs on cuda:"
                + export.ordinal()
                + " and serves its memory by CUDA IPC; connect with device 'cuda:"
                + export.ordinal()
                + "' (numbered as the feeder sees it: same CUDA_VISIBLE_DEVICES)");
      }
    }
  }
}
