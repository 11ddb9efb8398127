// why_chase: a kernel whose time is one source line, a chain of dependent global loads (each address the
// previous load's value), so its warps wait on memory there (long scoreboard): tests/device/cuda_why.sh.
// usage: why_chase [ITERATIONS]
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void chase(const unsigned *next, unsigned *out, int n)
{
  unsigned p = (blockIdx.x * blockDim.x + threadIdx.x) * 977u;
  p &= (1u << 24) - 1;
  for (int i = 0; i < n; i++)
    p = next[p];
  out[blockIdx.x * blockDim.x + threadIdx.x] = p;
}
int main(int argc, char **argv)
{
  const unsigned N = 1u << 24; /* 64 MiB of links: beyond L2 */
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  unsigned *h = (unsigned *)malloc(N * sizeof *h), *next, *out;
  for (unsigned i = 0; i < N; i++)
    h[i] = (unsigned)(((unsigned long long)i * 2654435761ull + 12345) % N);
  cudaMalloc(&next, N * sizeof *h);
  cudaMalloc(&out, 132 * 4 * 256 * sizeof *h);
  cudaMemcpy(next, h, N * sizeof *h, cudaMemcpyHostToDevice);
  chase<<<132 * 4, 256>>>(next, out, iters);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
