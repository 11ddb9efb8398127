// launch_loop: a launch-bound loop (empty kernels, one stream), for the trace cost per launch on a GPU
// (tests/device/cuda.sh). usage: launch_loop [LAUNCHES]; prints the host time per launch of the loop.
// SPDX-License-Identifier: MIT
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

__global__ void empty(int *p) {
  if (p && threadIdx.x == 1024) *p = 1; // never true: the kernel does nothing
}

static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 100000;
  if (n < 1) n = 1;
  for (int i = 0; i < 100; i++) // warm-up: module load, first launch
    empty<<<1, 32>>>(nullptr);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("launch_loop: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  double t0 = now();
  for (long i = 0; i < n; i++)
    empty<<<1, 32>>>(nullptr);
  cudaError_t e = cudaDeviceSynchronize();
  double t1 = now();
  if (e != cudaSuccess) {
    std::printf("launch_loop: %s\n", cudaGetErrorString(e));
    return 2;
  }
  std::printf("launch_loop: %ld launches, %.1f ns per launch\n", n, (t1 - t0) * 1e9 / n);
  return 0;
}
