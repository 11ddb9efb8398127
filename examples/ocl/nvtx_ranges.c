/* nvtx_ranges: an NVTX-annotated OpenCL program (the NVTX v3 headers of the CUDA toolkit, nothing linked):
 * push/pop, start/end (one ended by another thread), marks, A, W and Ex variants, a named domain with a
 * registered string, nested, on T threads. Prints one checksum line, the same with and without hubprof.
 * usage: nvtx_ranges [T [N]] */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "ocl_common.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <string.h>

static const char *src = "__kernel void nv_inc(__global int *a) { a[get_global_id(0)] += 2; }\n";
#define LEN 64
static ex_cl cl;
static int steps;
static nvtxDomainHandle_t dom;
static nvtxStringHandle_t reg;
static nvtxRangeId_t cross; /* started by main, ended by thread 0 */

static nvtxEventAttributes_t attr(const char *msg) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = msg;
  return a;
}

static void *worker(void *arg) {
  long id = (long)arg;
  cl_int err;
  nvtxRangePushA("worker");
  if (id == 0) nvtxRangeEnd(cross);
  cl_command_queue q = clCreateCommandQueue(cl.ctx, cl.dev, 0, &err);
  CHECK(err);
  cl_kernel k = ex_kernel(&cl, "nv_inc");
  int host[LEN] = {0};
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = LEN;
  for (int i = 0; i < steps; i++) {
    nvtxEventAttributes_t a = attr("step");
    nvtxDomainRangePushEx(dom, &a); /* domain "solver" */
    nvtxRangeId_t r = nvtxRangeStartA("launch");
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    nvtxRangeEnd(r);
    nvtxRangePushW(L"finish \u00e9");
    CHECK(clFinish(q));
    nvtxRangePop();
    nvtxDomainRangePop(dom);
  }
  nvtxEventAttributes_t mk = attr("");
  mk.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  mk.message.registered = reg;
  nvtxDomainMarkEx(dom, &mk);
  nvtxMarkA("worker done");
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseCommandQueue(q);
  nvtxRangePop();
  long bad = 0;
  for (int i = 0; i < LEN; i++)
    bad += host[i] != 2 * steps;
  return (void *)bad;
}

int main(int argc, char **argv) {
  ex_name = "nvtx_ranges";
  int nthreads = argc > 1 ? atoi(argv[1]) : 4;
  steps = argc > 2 ? atoi(argv[2]) : 10;
  if (nthreads < 1 || nthreads > 256 || steps < 0) {
    fprintf(stderr, "usage: nvtx_ranges [T [N]]\n");
    return 2;
  }
  dom = nvtxDomainCreateA("solver");
  reg = nvtxDomainRegisterStringA(dom, "registered mark");
  nvtxEventAttributes_t a = attr("setup");
  nvtxRangePushEx(&a);
  ex_setup(&cl, src);
  nvtxRangePop();
  cross = nvtxRangeStartA("cross-thread");
  long bad = ex_run_threads(nthreads, worker);
  if (bad < 0) return 1;
  ex_teardown(&cl);
  nvtxRangePop(); /* one pop too many: an unbalanced end */
  printf("nvtx_ranges: %d threads x %d steps, %ld wrong\n", nthreads, steps, bad);
  return bad != 0;
}
