// stream_copy: three kernels whose counters are known in advance, for comparing hubprof's CUDA counters with
// Nsight Compute's (tests/device/cuda.sh, item 2): a streaming copy of a buffer far larger than L2 (DRAM bytes
// read and written = its size), a scale in place, and an FMA loop (instructions executed fixed by the grid).
// usage: stream_copy [MIB] [LAUNCHES]   (default 256 MiB, each kernel launched 3 times); prints a checksum
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cudaError_t e_ = (x);                                                                                    \
    if (e_ != cudaSuccess) {                                                                                 \
      std::fprintf(stderr, "stream_copy: %s failed: %s\n", #x, cudaGetErrorString(e_));                      \
      return 1;                                                                                              \
    }                                                                                                        \
  } while (0)

__global__ void copy4(const float4 *in, float4 *out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

__global__ void scale4(float4 *y, float a, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = y[i];
    y[i] = make_float4(v.x * a, v.y * a, v.z * a, v.w * a);
  }
}

__global__ void fma_loop(float *y, int iters) {
  float x = y[blockIdx.x * blockDim.x + threadIdx.x];
  for (int k = 0; k < iters; k++)
    x = x * 0.999f + 0.5f;
  y[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  int launches = argc > 2 ? std::atoi(argv[2]) : 3;
  size_t n4 = mib * 1024 * 1024 / sizeof(float4);
  float4 *a, *b;
  CHECK(cudaMalloc(&a, n4 * sizeof(float4)));
  CHECK(cudaMalloc(&b, n4 * sizeof(float4)));
  CHECK(cudaMemset(a, 0, n4 * sizeof(float4)));
  const int fma_blocks = 1024, fma_threads = 256;
  for (int l = 0; l < launches; l++) {
    copy4<<<1024, 256>>>(a, b, n4);
    scale4<<<1024, 256>>>(b, 1.5f, n4);
    fma_loop<<<fma_blocks, fma_threads>>>((float *)a, 4096);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float h[4];
  CHECK(cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("stream_copy: %zu MiB, %d launches of 3 kernels, checksum %.6f\n", mib, launches,
              (double)(h[0] + h[1] + h[2] + h[3]));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  return 0;
}
