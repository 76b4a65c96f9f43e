/**
 * CUDA through the JCuda driver API: the only package that imports {@code jcuda.*}.
 *
 * <pre>
 *   CudaDeviceProvider.probe()  (catches UnsatisfiedLinkError: no driver → 0 devices)
 *   CudaDevice(ordinal) ── primary context ──► PinnedBuffer   (cuMemHostAlloc, &lt; 2 GiB)
 *                                          ├─► CudaDeviceBuffer (cuMemAlloc)
 *                                          └─► CudaStream (non-blocking stream, event per slot,
 *                                               cuMemcpyHtoDAsync, NormalizeKernels from PTX)
 * </pre>
 *
 * <p>Enters: an ordinal from {@code DeviceDiscovery}. Leaves: a {@code Device} with its buffers and
 * streams. Threads: the feeder's copy thread opens and drives the stream and owns it; allocation
 * and frees may come from any thread, each call making the primary context current. The kernels
 * ship as PTX ({@code normalize.ptx}, built from {@code normalize.cu} with {@code nvcc -ptx
 * -arch=compute_80}) and as an sm_90 cubin assembled from it ({@code normalize.sm_90.cubin}, loaded
 * on compute capability 9.0 so Hopper needs no JIT); {@code KernelBuildSuite} rebuilds both with
 * nvcc/ptxas where they are installed and fails on drift. None of this has run on a GPU in CI: GPU
 * suites cancel themselves visibly when no device is found.
 */
package dev.spindle.gpu.cuda;
