/* slow_start: a program whose start-up is most of its run time — it initialises for S milliseconds (a sleep
 * standing in for loading data, building state), then runs K small in-place kernels and prints a checksum.
 * The workload of the kernel-replay vs application-replay benchmark. usage: slow_start [S_MS [K [N]]] */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <time.h>

static const char *src =
    "__kernel void bump(__global int *a) { size_t i = get_global_id(0); a[i] = a[i] * 3 + 1; }\n";

int main(int argc, char **argv) {
  ex_name = "slow_start";
  long ms = argc > 1 ? atol(argv[1]) : 500;
  int k = argc > 2 ? atoi(argv[2]) : 4;
  size_t n = argc > 3 ? strtoul(argv[3], NULL, 10) : 65536;
  if (ms < 0 || k < 0 || n == 0) {
    fprintf(stderr, "usage: slow_start [S_MS [K [N]]]\n");
    return 2;
  }
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  ex_cl c;
  ex_setup(&c, src);
  cl_kernel kern = ex_kernel(&c, "bump");
  cl_int *a = malloc(n * sizeof *a), err;
  if (!a) return 1;
  for (size_t i = 0; i < n; i++)
    a[i] = (cl_int)i;
  cl_mem m = clCreateBuffer(c.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kern, 0, sizeof m, &m));
  for (int i = 0; i < k; i++)
    CHECK(clEnqueueNDRangeKernel(c.q, kern, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(c.q, m, CL_TRUE, 0, n * sizeof *a, a, 0, NULL, NULL));
  printf("slow_start: k=%d n=%zu checksum=%016llx\n", k, n, (unsigned long long)ex_fnv(0, a, n * sizeof *a));
  clReleaseMemObject(m);
  clReleaseKernel(kern);
  ex_teardown(&c);
  free(a);
  return 0;
}
