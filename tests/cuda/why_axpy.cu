// why_axpy: y = a*x + y over 64 Mi floats, three times: a memory-bound fp32 kernel for the roofline placement
// of tests/device/cuda_why.sh (one FMA per 12 bytes moved).
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cuda_runtime.h>
__global__ void axpy(float a, const float *x, float *y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main()
{
  const int n = 1 << 26;
  float *x, *y;
  cudaMalloc(&x, n * sizeof *x);
  cudaMalloc(&y, n * sizeof *y);
  cudaMemset(x, 0, n * sizeof *x);
  cudaMemset(y, 0, n * sizeof *y);
  for (int r = 0; r < 3; r++) axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
