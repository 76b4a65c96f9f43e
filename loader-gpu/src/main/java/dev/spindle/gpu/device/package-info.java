/**
 * Devices: where ring slots live and how bytes reach the accelerator.
 *
 * <pre>
 *   DeviceDiscovery.open(choice, ordinal) ──► Device ──► HostBuffer (pinned on CUDA)
 *        │ ServiceLoader&lt;DeviceProvider&gt;           ├──► DeviceBuffer
 *        ▼ (CUDA provider in ..gpu.cuda)              └──► CopyStream (copy, normalise, events)
 *   GpuAssignment: Spark GPU addresses ──► CUDA ordinals
 * </pre>
 *
 * <p>Enters: a device choice and an ordinal (or Spark's GPU addresses). Leaves: a {@link
 * dev.spindle.gpu.device.Device} the caller owns. {@link dev.spindle.gpu.device.HostDevice} is the
 * host fallback with the same semantics, used when no GPU is present or by configuration; {@link
 * dev.spindle.gpu.device.HostNormalizer} is the CPU twin of the CUDA kernel. Nothing here imports
 * JCuda. Threads: allocation from any thread; a {@code CopyStream} stays on the thread that opened
 * it (the feeder's copy thread).
 */
package dev.spindle.gpu.device;
