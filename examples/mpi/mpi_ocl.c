/* mpi_ocl: an MPI + OpenCL program for cluster runs (docs/cluster.md): every rank runs OpenCL kernels on its
 * first device, rank r doing `scale` 10*(r+1) times and `offset` 5 times, so each rank's dispatch counts are
 * known; the ranks then check their results together (MPI_Allreduce). It must never depend on hubprof.
 * usage: mpirun -np N mpi_ocl [ELEMENTS]   rank 0 prints one line; exit 0 when every rank's result is right.
 */
/* SPDX-License-Identifier: MIT */
#include "../ocl/ocl_common.h"

#include <mpi.h>

static const char *src = "__kernel void scale(__global float *x, const float f) {\n"
                         "  x[get_global_id(0)] *= f;\n"
                         "}\n"
                         "__kernel void offset(__global float *x, const float d) {\n"
                         "  x[get_global_id(0)] += d;\n"
                         "}\n";

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4096;
  if (n == 0 || n % 64) {
    if (!rank) fprintf(stderr, "usage: mpi_ocl [ELEMENTS, a multiple of 64]\n");
    MPI_Finalize();
    return 2;
  }
  ex_name = "mpi_ocl";
  ex_cl cl;
  ex_setup(&cl, src);
  cl_kernel ks = ex_kernel(&cl, "scale"), ko = ex_kernel(&cl, "offset");
  float *x = malloc(n * sizeof *x);
  if (!x) MPI_Abort(MPI_COMM_WORLD, 1);
  for (unsigned i = 0; i < n; i++)
    x[i] = 1.0f;
  cl_int err;
  cl_mem d = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *x, x, &err);
  CHECK(err);
  float one = 1.0f, half = 0.5f;
  CHECK(clSetKernelArg(ks, 0, sizeof d, &d));
  CHECK(clSetKernelArg(ks, 1, sizeof one, &one)); /* times 1: the value stays exact however often */
  CHECK(clSetKernelArg(ko, 0, sizeof d, &d));
  CHECK(clSetKernelArg(ko, 1, sizeof half, &half));
  size_t global = n, local = 64;
  int nscale = 10 * (rank + 1), noffset = 5;
  for (int i = 0; i < nscale; i++)
    CHECK(clEnqueueNDRangeKernel(cl.q, ks, 1, NULL, &global, &local, 0, NULL, NULL));
  for (int i = 0; i < noffset; i++)
    CHECK(clEnqueueNDRangeKernel(cl.q, ko, 1, NULL, &global, &local, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(cl.q, d, CL_TRUE, 0, n * sizeof *x, x, 0, NULL, NULL));
  int bad = 0;
  for (unsigned i = 0; i < n; i++)
    bad += x[i] != 1.0f + 0.5f * (float)noffset;
  int dispatches = nscale + noffset, total = 0, allbad = 0;
  MPI_Allreduce(&dispatches, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  clReleaseMemObject(d);
  clReleaseKernel(ks);
  clReleaseKernel(ko);
  ex_teardown(&cl);
  free(x);
  if (!rank) printf("mpi_ocl: %d ranks, %d dispatches, %s\n", size, total, allbad ? "FAILED" : "ok");
  MPI_Finalize();
  return allbad ? 1 : 0;
}
