// Spindle device-side normalisation: uint8 HWC images -> normalised CHW float32 / float16.
//
//   out[n][c][p] = fma(in[n][p][c], scale[c], bias[c])      p = y * W + x
//
// scale[c] = 1 / (255 * std[c]) and bias[c] = -mean[c] / std[c] are computed once on the host
// (NormalizeSpec.table()) and copied to the device, so this kernel and the CPU path
// (HostNormalizer, Math.fma + round-to-nearest-even) produce bit-identical results.
//
// Built into normalize.ptx and normalize.sm_90.cubin next to this file, both committed
// (KernelBuildSuite fails when they drift from this source; see loader-gpu/README.md):
//   nvcc -ptx -arch=compute_80 -o normalize.ptx normalize.cu
//   ptxas -arch=sm_90 normalize.ptx -o normalize.sm_90.cubin
// compute_80 PTX is JIT-compiled by the driver for Ampere and newer GPUs; on compute capability
// 9.0 (H100/H200) NormalizeKernels loads the sm_90 cubin instead, so no JIT is needed there.
#include <cuda_fp16.h>

extern "C" __global__ void spindle_normalize_f32(const unsigned char* __restrict__ src,
                                                 float* __restrict__ dst,
                                                 const float* __restrict__ table,
                                                 int rows, int pixels, int channels) {
  long long total = (long long)rows * pixels;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long n = i / pixels;
    long long p = i - n * pixels;
    const unsigned char* in = src + i * channels;
    float* out = dst + n * pixels * channels + p;
    for (int c = 0; c < channels; c++) {
      out[(long long)c * pixels] = __fmaf_rn((float)in[c], table[c], table[channels + c]);
    }
  }
}

extern "C" __global__ void spindle_normalize_f16(const unsigned char* __restrict__ src,
                                                 __half* __restrict__ dst,
                                                 const float* __restrict__ table,
                                                 int rows, int pixels, int channels) {
  long long total = (long long)rows * pixels;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long n = i / pixels;
    long long p = i - n * pixels;
    const unsigned char* in = src + i * channels;
    __half* out = dst + n * pixels * channels + p;
    for (int c = 0; c < channels; c++) {
      float v = __fmaf_rn((float)in[c], table[c], table[channels + c]);
      out[(long long)c * pixels] = __float2half_rn(v);
    }
  }
}
