// `hubprof roofline`'s micro-benchmarks on CUDA devices (roofline_cuda.c loads them with the driver API):
// chains of independent fused multiply-adds per precision (fp64, fp32, fp16 as half2, int32 as IMAD), and
// streaming reads and a copy over device memory, and reads that cycle through a working set held in L2, in
// each SM's L1 or in its shared memory. Compiled by nvcc into a fatbin at build time.
// SPDX-License-Identifier: MIT
#include <cuda_fp16.h>

// 8 independent chains per thread, the loop unrolled so that its own instructions cost little beside them;
// a and b are arguments, so nothing folds. FLOPs (or int32 ops) per thread: 2 x 8 x n x lanes.
template <typename T> __device__ __forceinline__ T mad(T x, T y, T z) { return x * y + z; }
template <> __device__ __forceinline__ float mad(float x, float y, float z) { return fmaf(x, y, z); }
template <> __device__ __forceinline__ double mad(double x, double y, double z) { return fma(x, y, z); }
template <> __device__ __forceinline__ __half2 mad(__half2 x, __half2 y, __half2 z) { return __hfma2(x, y, z); }

template <typename T> __device__ void chains(T *out, T a, T b, int n) {
  T x0 = a, x1 = mad(a, b, a), x2 = mad(x1, b, a), x3 = mad(x2, b, a);
  T x4 = mad(x3, b, a), x5 = mad(x4, b, a), x6 = mad(x5, b, a), x7 = mad(x6, b, a);
#pragma unroll 8
  for (int i = 0; i < n; i++) {
    x0 = mad(x0, b, a), x1 = mad(x1, b, a), x2 = mad(x2, b, a), x3 = mad(x3, b, a);
    x4 = mad(x4, b, a), x5 = mad(x5, b, a), x6 = mad(x6, b, a), x7 = mad(x7, b, a);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

extern "C" __global__ void hp_fp64(double *out, double a, double b, int n) { chains(out, a, b, n); }
extern "C" __global__ void hp_fp32(float *out, float a, float b, int n) { chains(out, a, b, n); }
extern "C" __global__ void hp_fp16(__half2 *out, float a, float b, int n) {
  chains(out, __float2half2_rn(a), __float2half2_rn(b), n);
}
extern "C" __global__ void hp_int32(int *out, int a, int b, int n) { chains(out, a + (int)threadIdx.x, b, n); }

// Streaming reads: every thread reads float4s a grid apart, the sum written once per thread (so the loads stay).
extern "C" __global__ void hp_read(const float4 *__restrict__ in, float *out, size_t n4) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
  float4 s = make_float4(0, 0, 0, 0);
#pragma unroll 4
  for (; i < n4; i += step) {
    float4 v = __ldcs(in + i); // streaming: no reuse expected
    s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s.x + s.y + s.z + s.w;
}

extern "C" __global__ void hp_copy(const float4 *__restrict__ in, float4 *out, size_t n4) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
#pragma unroll 4
  for (; i < n4; i += step) __stcs(out + i, __ldcs(in + i));
}

// The cache levels: every thread makes n float4 reads, the grid's threads side by side (coalesced), stepping
// through a working set of mask + 1 float4s (a power of two) that stays in the level measured: bytes read =
// threads x n x 16. The index is an argument's function, so no read is hoisted out of the loop.
// L2: __ldcg caches in L2 only, the working set a quarter of L2 at most, so every read is an L2 hit.
extern "C" __global__ void hp_l2(const float4 *__restrict__ in, float *out, unsigned mask, int n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
  float4 s = make_float4(0, 0, 0, 0), t = s;
#pragma unroll 8
  for (int k = 0; k < n; k += 2) {
    float4 v = __ldcg(in + (i & mask)), w = __ldcg(in + ((i + step) & mask));
    i += 2 * step;
    s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    t.x += w.x, t.y += w.y, t.z += w.z, t.w += w.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s.x + s.y + s.z + s.w + t.x + t.y + t.z + t.w;
}

// L1: every block reads the same small working set (16 KiB) with __ldca, cached in each SM's L1.
extern "C" __global__ void hp_l1(const float4 *__restrict__ in, float *out, unsigned mask, int n) {
  unsigned i = threadIdx.x;
  float4 s = make_float4(0, 0, 0, 0), t = s;
#pragma unroll 8
  for (int k = 0; k < n; k += 2) {
    float4 v = __ldca(in + (i & mask)), w = __ldca(in + ((i + 32) & mask));
    i += 64;
    s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    t.x += w.x, t.y += w.y, t.z += w.z, t.w += w.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s.x + s.y + s.z + s.w + t.x + t.y + t.z + t.w;
}

// Shared memory (the same SRAM as L1): each block fills 16 KiB of it, then reads it as hp_l1 reads L1.
extern "C" __global__ void hp_shared(const float4 *__restrict__ in, float *out, unsigned mask, int n) {
  __shared__ float4 sh[1024];
  for (unsigned j = threadIdx.x; j < 1024; j += blockDim.x)
    sh[j] = in[j];
  __syncthreads();
  unsigned i = threadIdx.x;
  mask &= 1023;
  float4 s = make_float4(0, 0, 0, 0), t = s;
#pragma unroll 8
  for (int k = 0; k < n; k += 2) {
    float4 v = sh[i & mask], w = sh[(i + 32) & mask];
    i += 64;
    s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    t.x += w.x, t.y += w.y, t.z += w.z, t.w += w.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s.x + s.y + s.z + s.w + t.x + t.y + t.z + t.w;
}
