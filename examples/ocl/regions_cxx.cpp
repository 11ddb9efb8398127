// regions_cxx: include/hubprof/api.h from C++ (a scope guard opens and closes each region), nested regions
// around OpenCL dispatches on T threads. Prints one checksum line, the same with and without hubprof.
// usage: regions_cxx [T [N]]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <hubprof/api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct region {
  explicit region(const std::string &name) { hubprof_region_begin(name.c_str()); }
  ~region() { hubprof_region_end(); }
  region(const region &) = delete;
  region &operator=(const region &) = delete;
};

void check(cl_int e, const char *what) {
  if (e != CL_SUCCESS) {
    std::fprintf(stderr, "regions_cxx: %s failed: %d\n", what, e);
    std::exit(1);
  }
}

const char *src = "__kernel void cx_inc(__global int *a) { a[get_global_id(0)] += 3; }\n";
constexpr size_t len = 64;

long work(cl_context ctx, cl_device_id dev, cl_program prog, int steps) {
  region r("cxx worker");
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  check(err, "clCreateCommandQueue");
  cl_kernel k = clCreateKernel(prog, "cx_inc", &err);
  check(err, "clCreateKernel");
  std::vector<int> host(len, 0);
  cl_mem m =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, len * sizeof(int), host.data(), &err);
  check(err, "clCreateBuffer");
  check(clSetKernelArg(k, 0, sizeof m, &m), "clSetKernelArg");
  size_t g = len;
  for (int i = 0; i < steps; i++) {
    region step("cxx step " + std::to_string(i % 2));
    region inner("cxx enqueue");
    check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(q), "clFinish");
  }
  check(clEnqueueReadBuffer(q, m, CL_TRUE, 0, len * sizeof(int), host.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseCommandQueue(q);
  long bad = 0;
  for (int v : host)
    bad += v != 3 * steps;
  return bad;
}

} // namespace

int main(int argc, char **argv) {
  int nthreads = argc > 1 ? std::atoi(argv[1]) : 4;
  int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  if (nthreads < 1 || nthreads > 256 || steps < 0) {
    std::fprintf(stderr, "usage: regions_cxx [T [N]]\n");
    return 2;
  }
  cl_platform_id plat;
  cl_device_id dev;
  cl_int err;
  check(clGetPlatformIDs(1, &plat, nullptr), "clGetPlatformIDs");
  check(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr), "clGetDeviceIDs");
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr), "clBuildProgram");
  std::vector<long> bad(static_cast<size_t>(nthreads), 0);
  {
    std::vector<std::thread> th;
    for (int i = 0; i < nthreads; i++)
      th.emplace_back([&, i] { bad[static_cast<size_t>(i)] = work(ctx, dev, prog, steps); });
    for (auto &t : th)
      t.join();
  }
  long total = 0;
  for (long b : bad)
    total += b;
  clReleaseProgram(prog);
  clReleaseContext(ctx);
  std::printf("regions_cxx: %d threads x %d steps, %ld wrong\n", nthreads, steps, total);
  return total != 0;
}
