// A CUDA program for hubprof's CUDA provider (tests/cuda/test_cuda.sh here, tests/device/cuda.sh on a GPU):
// several streams, a CUDA graph, NVTX ranges, copies and fills; it checks its own results and prints them.
// usage: cuda_app [ROUNDS [KILL_MS]]
// SPDX-License-Identifier: MIT
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <vector>

#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    cudaError_t e_ = (call);                                                                                 \
    if (e_ != cudaSuccess) {                                                                                 \
      std::printf("cuda_app: %s failed: %s\n", #call, cudaGetErrorString(e_));                             \
      return 2;                                                                                              \
    }                                                                                                        \
  } while (0)

namespace hub {
template <typename T> __global__ void saxpy(int n, T a, const T *x, T *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
} // namespace hub

__global__ void add_one(int n, float *y) {
  extern __shared__ float tile[]; // dynamic shared memory: the dispatch's group_size
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? y[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = tile[threadIdx.x] + 1.0f;
}

int main(int argc, char **argv) {
  const int streams = 4, n = 1 << 16, per_stream = 3, graph_kernels = 3, graph_launches = 2;
  int iters = argc > 1 ? std::atoi(argv[1]) : 1; // rounds of the stream work
  int kill_ms = argc > 2 ? std::atoi(argv[2]) : -1; // >= 0: SIGKILL itself that long after its last sync
  if (iters < 1) iters = 1;
  const size_t bytes = n * sizeof(float);
  nvtxRangePushA("setup");
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  std::vector<float> hx(n), hy(n), out(n);
  for (int i = 0; i < n; i++) {
    hx[i] = (float)(i % 97);
    hy[i] = 1.0f;
  }
  float *dx[streams], *dy[streams];
  cudaStream_t s[streams];
  for (int k = 0; k < streams; k++) {
    CHECK(cudaMalloc(&dx[k], bytes));
    CHECK(cudaMalloc(&dy[k], bytes));
    CHECK(cudaStreamCreate(&s[k]));
  }
  nvtxRangePop();

  nvtxRangePushA("streams");
  long long launched = 0, h2d = 0, d2h = 0, filled = 0;
  for (int it = 0; it < iters; it++)
    for (int k = 0; k < streams; k++) {
      CHECK(cudaMemsetAsync(dy[k], 0, bytes, s[k]));
      filled += bytes;
      CHECK(cudaMemcpyAsync(dx[k], hx.data(), bytes, cudaMemcpyHostToDevice, s[k]));
      CHECK(cudaMemcpyAsync(dy[k], hy.data(), bytes, cudaMemcpyHostToDevice, s[k]));
      h2d += 2 * bytes;
      for (int j = 0; j < per_stream; j++) {
        hub::saxpy<float><<<(n + 255) / 256, 256, 0, s[k]>>>(n, 2.0f, dx[k], dy[k]);
        launched++;
      }
    }
  for (int k = 0; k < streams; k++)
    CHECK(cudaStreamSynchronize(s[k]));
  nvtxRangePop();

  nvtxRangePushA("graph");
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
  for (int j = 0; j < graph_kernels; j++)
    add_one<<<(n + 127) / 128, 128, 128 * sizeof(float), s[0]>>>(n, dy[0]);
  CHECK(cudaStreamEndCapture(s[0], &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  for (int j = 0; j < graph_launches; j++)
    CHECK(cudaGraphLaunch(ge, s[0]));
  CHECK(cudaStreamSynchronize(s[0]));
  nvtxRangePop();

  CHECK(cudaMemcpy(out.data(), dy[0], bytes, cudaMemcpyDeviceToHost));
  d2h += bytes;
  // dy[0] = 1 + 2*x*per_stream + graph_kernels*graph_launches
  long long bad = 0;
  for (int i = 0; i < n; i++) {
    float want = 1.0f + 2.0f * hx[i] * per_stream + graph_kernels * graph_launches;
    if (out[i] != want) bad++;
  }
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += out[i];
  CHECK(cudaGraphExecDestroy(ge));
  CHECK(cudaGraphDestroy(g));
  for (int k = 0; k < streams; k++) {
    CHECK(cudaStreamDestroy(s[k]));
    CHECK(cudaFree(dx[k]));
    CHECK(cudaFree(dy[k]));
  }
  std::printf("cuda_app: devices %d, kernels %lld, graph kernels %d, h2d bytes %lld, d2h bytes %lld, memset bytes "
              "%lld, sum %.1f, %s\n",
              devices, launched, graph_kernels * graph_launches, h2d, d2h, filled, sum,
              bad ? "WRONG" : "results ok");
  std::fflush(stdout);
  if (kill_ms >= 0) { // what completed must be in hubprof's log by then (docs/cuda.md)
    timespec t = {kill_ms / 1000, (long)(kill_ms % 1000) * 1000000};
    nanosleep(&t, nullptr);
    kill(getpid(), SIGKILL);
  }
  return bad ? 1 : 0;
}
