/* `hubprof roofline`'s micro-benchmarks on OpenCL: FLOP/s per precision (chains of independent multiply-adds
 * on vector types, widths 4, 8 and 16, the best kept, as clpeak does), int32 op/s, global-memory bandwidth
 * (streaming reads and a copy over a buffer much larger than the last-level cache, bytes read plus written)
 * and each cache level's read bandwidth (a working set inside the level read again and again), timed with
 * profiling events, the best of several repetitions after a warm-up. libOpenCL.so.1 is
 * loaded with dlopen, never linked: hubprof runs where no OpenCL loader is installed, as it does for CUPTI.
 */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "roofline.h"

#include "hubprof/hub.h"

#include <CL/cl.h>

#include <dlfcn.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_FNS(X)                                                                                            \
  X(clGetPlatformIDs)                                                                                        \
  X(clGetPlatformInfo)                                                                                       \
  X(clGetDeviceIDs)                                                                                          \
  X(clGetDeviceInfo)                                                                                         \
  X(clCreateContext)                                                                                         \
  X(clCreateCommandQueue)                                                                                    \
  X(clCreateProgramWithSource)                                                                               \
  X(clBuildProgram)                                                                                          \
  X(clGetProgramBuildInfo)                                                                                   \
  X(clCreateKernel)                                                                                          \
  X(clSetKernelArg)                                                                                          \
  X(clCreateBuffer)                                                                                          \
  X(clEnqueueFillBuffer)                                                                                     \
  X(clEnqueueNDRangeKernel)                                                                                  \
  X(clWaitForEvents)                                                                                         \
  X(clGetEventProfilingInfo)                                                                                 \
  X(clFinish)                                                                                                \
  X(clReleaseEvent)                                                                                          \
  X(clReleaseKernel)                                                                                         \
  X(clReleaseProgram)                                                                                        \
  X(clReleaseMemObject)                                                                                      \
  X(clReleaseCommandQueue)                                                                                   \
  X(clReleaseContext)

typedef struct cl_api {
#define X(f) __typeof__(f) *f;
  CL_FNS(X)
#undef X
} cl_api;

static int cl_load(cl_api *cl, char *err, size_t len) {
  void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(err, len,
             "roofline: cannot load libOpenCL.so.1 (install an OpenCL loader and driver, e.g. "
             "ocl-icd-libopencl1 and pocl-opencl-icd): %s",
             dlerror());
    return -1;
  }
#define X(f)                                                                                                 \
  if (!(cl->f = (__typeof__(f) *)dlsym(h, #f))) {                                                            \
    snprintf(err, len, "roofline: libOpenCL.so.1 has no %s", #f);                                            \
    return -1;                                                                                               \
  }
  CL_FNS(X)
#undef X
  return 0; /* the library stays loaded until exit: PoCL's threads may outlive the last release */
}

/* One program per precision: the FLOP kernels flops4/8/16 for scalar type S (MAD is mad() for floating
 * point, a multiply and an add for int), and with BW the bandwidth kernels. Eight independent chains per
 * work-item keep the FMA pipes busy; y and a are kernel arguments, so nothing folds. */
static const char kernel_src[] =
    "#ifdef FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
    "#ifdef FP16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n"
    "#ifdef INT\n#define MAD(x, y, z) ((x) * (y) + (z))\n#else\n#define MAD(x, y, z) mad(x, y, z)\n#endif\n"
    "#define CAT_(a, b) a##b\n#define CAT(a, b) CAT_(a, b)\n"
    "#define FLOPS(W) __kernel void flops##W(__global CAT(S, W) *out, float fa, float fb, int n) { \\\n"
    "  CAT(S, W) a = (CAT(S, W))((S)fa), y = (CAT(S, W))((S)fb); \\\n"
    "  CAT(S, W) x0 = a + (S)get_local_id(0), x1 = x0 + a, x2 = x1 + a, x3 = x2 + a; \\\n"
    "  CAT(S, W) x4 = x3 + a, x5 = x4 + a, x6 = x5 + a, x7 = x6 + a; \\\n"
    "  for (int i = 0; i < n; i++) { \\\n"
    "    x0 = MAD(x0, y, a); x1 = MAD(x1, y, a); x2 = MAD(x2, y, a); x3 = MAD(x3, y, a); \\\n"
    "    x4 = MAD(x4, y, a); x5 = MAD(x5, y, a); x6 = MAD(x6, y, a); x7 = MAD(x7, y, a); \\\n"
    "  } \\\n"
    "  out[get_global_id(0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7; \\\n"
    "}\n"
    "FLOPS(4)\nFLOPS(8)\nFLOPS(16)\n"
    "#ifdef BW\n"
    "float sum_float4(float4 v) { return v.x + v.y + v.z + v.w; }\n"
    "float sum_float16(float16 v) { return sum_float4(v.lo.lo + v.lo.hi + v.hi.lo + v.hi.hi); }\n"
    "#define READ(T) __kernel void read_##T(__global const T *in, __global float *out) { \\\n"
    "  size_t ls = get_local_size(0), i = get_group_id(0) * ls * 16 + get_local_id(0); \\\n"
    "  T s = 0; \\\n"
    "  for (int k = 0; k < 16; k++) s += in[i + k * ls]; \\\n"
    "  out[get_global_id(0)] = sum_##T(s); \\\n"
    "}\n"
    "READ(float4)\nREAD(float16)\n"
    "__kernel void copy_float4(__global const float4 *in, __global float4 *out) {\n"
    "  out[get_global_id(0)] = in[get_global_id(0)];\n"
    "}\n"
    /* a cache level: every work-group reads the working set in[0, n) reps times, its work-items interleaved
     * (coalesced on a GPU; on a CPU one work-item per work-group reads it start to end), 8 sums in flight */
    "__kernel void cache_read(__global const float16 *in, __global float *out, int n, int reps) {\n"
    "  size_t ls = get_local_size(0);\n"
    "  float16 s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;\n"
    "  for (int r = 0; r < reps; r++)\n"
    "    for (size_t i = get_local_id(0); i < (size_t)n; i += 8 * ls) {\n"
    "      s0 += in[i]; s1 += in[i + ls]; s2 += in[i + 2 * ls]; s3 += in[i + 3 * ls];\n"
    "      s4 += in[i + 4 * ls]; s5 += in[i + 5 * ls]; s6 += in[i + 6 * ls]; s7 += in[i + 7 * ls];\n"
    "    }\n"
    "  out[get_global_id(0)] = sum_float16(s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7);\n"
    "}\n"
    "#endif\n";

typedef struct dev {
  cl_api *cl;
  cl_device_id id;
  cl_context ctx;
  cl_command_queue q;
  cl_uint cus;
  size_t wg; /* work-group size used */
  cl_ulong max_alloc;
  int quick, quiet;
  const char *name;
  int cpu;                        /* a CPU device: the host's caches (sysfs), one work-item per work-group */
  rl_level levels[RL_MAX_LEVELS]; /* the cache levels measured, innermost first */
  size_t nlevels;
} dev;

/* Build the program for one precision; NULL with the reason in c->note. */
static cl_program build(dev *d, const char *opts, rl_ceiling *c) {
  const char *src = kernel_src;
  cl_int e;
  cl_program p = d->cl->clCreateProgramWithSource(d->ctx, 1, &src, NULL, &e);
  if (e != CL_SUCCESS) {
    rl_note(c, "clCreateProgramWithSource failed (%d)", e);
    return NULL;
  }
  e = d->cl->clBuildProgram(p, 1, &d->id, opts, NULL, NULL);
  if (e != CL_SUCCESS) {
    char log[160] = "";
    d->cl->clGetProgramBuildInfo(p, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    log[sizeof log - 1] = 0;
    for (char *s = log; *s; s++)
      if (*s == '\n') *s = ' ';
    rl_note(c, "the kernels did not build (%d): %s", e, log);
    d->cl->clReleaseProgram(p);
    return NULL;
  }
  return p;
}

/* Run kernel k over global work-items in work-groups of local, once to warm up and then reps times; the
 * shortest time in seconds, or a negative value with the reason in c->note. */
static double best_time_local(dev *d, cl_kernel k, size_t global, size_t local, int reps, rl_ceiling *c) {
  double best = -1;
  for (int r = 0; r <= reps; r++) {
    cl_event ev;
    cl_int e = d->cl->clEnqueueNDRangeKernel(d->q, k, 1, NULL, &global, &local, 0, NULL, &ev);
    if (e == CL_SUCCESS) e = d->cl->clWaitForEvents(1, &ev);
    if (e != CL_SUCCESS) {
      rl_note(c, "clEnqueueNDRangeKernel failed (%d)", e);
      return -1;
    }
    cl_ulong t0 = 0, t1 = 0;
    d->cl->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    e = d->cl->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    d->cl->clReleaseEvent(ev);
    if (e != CL_SUCCESS || t1 <= t0) {
      rl_note(c, "no profiling times (%d)", e);
      return -1;
    }
    double s = (double)(t1 - t0) * 1e-9;
    if (r > 0 && (best < 0 || s < best)) best = s; /* r == 0: the warm-up */
  }
  return best;
}

static double best_time(dev *d, cl_kernel k, size_t global, int reps, rl_ceiling *c) {
  return best_time_local(d, k, global, d->wg, reps, c);
}

/* Compute ceiling: the best of the vector widths 4, 8, 16 (2 operations per multiply-add). */
static void measure_flops(dev *d, cl_program p, size_t elem, float fa, float fb, rl_ceiling *c) {
  static const int widths[] = {4, 8, 16};
  size_t global = (size_t)d->cus * (d->quick ? 256 : 1024);
  global = (global + d->wg - 1) / d->wg * d->wg;
  int per_wi = 4096; /* operations per work-item at first */
  cl_int e;
  cl_mem out = d->cl->clCreateBuffer(d->ctx, CL_MEM_WRITE_ONLY, global * 16 * elem, NULL, &e);
  if (e != CL_SUCCESS) {
    rl_note(c, "clCreateBuffer failed (%d)", e);
    return;
  }
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
    int w = widths[i], n = per_wi / (16 * w); /* 8 chains x 2 operations x w lanes per iteration */
    char name[16];
    snprintf(name, sizeof name, "flops%d", w);
    cl_kernel k = d->cl->clCreateKernel(p, name, &e);
    if (e != CL_SUCCESS) {
      rl_note(c, "clCreateKernel %s failed (%d)", name, e);
      break;
    }
    d->cl->clSetKernelArg(k, 0, sizeof out, &out);
    d->cl->clSetKernelArg(k, 1, sizeof fa, &fa);
    d->cl->clSetKernelArg(k, 2, sizeof fb, &fb);
    /* long enough to time well: grow the chains until one run takes the target time (the launch costs
     * little beside it) */
    double target = d->quick ? 0.002 : 0.03, s = 0;
    for (int tries = 0; tries < 6; tries++) {
      d->cl->clSetKernelArg(k, 3, sizeof n, &n);
      s = best_time(d, k, global, 1, c);
      if (s < 0 || s >= target / 2 || n >= (1 << 22)) break;
      double grow = s > 0 ? target / s : 64;
      n = (int)(n * (grow < 64 ? grow : 64));
    }
    if (s >= 0) s = best_time(d, k, global, d->quick ? 2 : 4, c);
    d->cl->clReleaseKernel(k);
    if (s < 0) break;
    double v = (double)global * n * 16 * w / s * 1e-9;
    if (v > c->value) {
      c->value = v;
      rl_note(c, "vector width %d, %zu work-items, mad chains", w, global);
    }
  }
  d->cl->clReleaseMemObject(out);
}

/* Memory ceiling: the best of streaming reads (float4, float16) and a float4 copy, bytes read plus
 * written, over a buffer of 256 MiB (32 MiB quick) or the largest allocation the device allows. */
static void measure_dram(dev *d, cl_program p, rl_ceiling *c) {
  size_t bytes = (size_t)(d->quick ? 32 : 256) << 20;
  if (d->max_alloc && bytes > d->max_alloc) bytes = (size_t)d->max_alloc;
  bytes &= ~(((size_t)64 * 16 * d->wg) - 1); /* whole work-groups of 16 float16 reads each */
  if (!bytes) {
    rl_note(c, "the largest allocation (%llu bytes) is too small", (unsigned long long)d->max_alloc);
    return;
  }
  cl_int e, e2;
  cl_mem in = d->cl->clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, bytes, NULL, &e);
  cl_mem out = d->cl->clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e2);
  float one = 1.0f;
  if (e == CL_SUCCESS && e2 == CL_SUCCESS) /* touch every page: untouched memory reads as the zero page */
    e = d->cl->clEnqueueFillBuffer(d->q, in, &one, sizeof one, 0, bytes, 0, NULL, NULL);
  if (e == CL_SUCCESS) e = d->cl->clEnqueueFillBuffer(d->q, out, &one, sizeof one, 0, bytes, 0, NULL, NULL);
  if (e == CL_SUCCESS) e = d->cl->clFinish(d->q);
  if (e != CL_SUCCESS || e2 != CL_SUCCESS) {
    rl_note(c, "a buffer of %zu MiB could not be made (%d)", bytes >> 20, e != CL_SUCCESS ? e : e2);
  } else {
    static const struct {
      const char *name;
      size_t vec;  /* bytes one read moves */
      int fetches; /* reads per work-item */
      int copy;    /* writes as much as it reads */
    } ks[] = {{"read_float4", 16, 16, 0}, {"read_float16", 64, 16, 0}, {"copy_float4", 16, 1, 1}};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
      cl_kernel k = d->cl->clCreateKernel(p, ks[i].name, &e);
      if (e != CL_SUCCESS) {
        rl_note(c, "clCreateKernel %s failed (%d)", ks[i].name, e);
        break;
      }
      d->cl->clSetKernelArg(k, 0, sizeof in, &in);
      d->cl->clSetKernelArg(k, 1, sizeof out, &out);
      size_t global = bytes / ks[i].vec / (size_t)ks[i].fetches;
      double s = best_time(d, k, global, d->quick ? 2 : 5, c);
      d->cl->clReleaseKernel(k);
      if (s < 0) break;
      double moved = ks[i].copy ? 2.0 * (double)bytes : (double)bytes + (double)global * sizeof(float);
      double v = moved / s * 1e-9;
      if (v > c->value) {
        c->value = v;
        rl_note(c, "%s over %zu MiB, bytes read + written", ks[i].name, bytes >> 20);
      }
    }
  }
  if (in) d->cl->clReleaseMemObject(in);
  if (out) d->cl->clReleaseMemObject(out);
}

/* The cache ceilings, rows innermost first: cache_read over each level's working set (rl_working_set) by
 * compute units x 8 work-groups (x 4 quick) that all read the same data, its repetitions grown until one run
 * takes the target time; then rounds of one run of every level in turn (a burst of load slows a round, not
 * one level), the best run of each level kept; then a level that cannot be told apart from the one outside it
 * (or dram) is dropped (rl_order_levels), after up to two more sets of rounds. */
static void measure_caches(dev *d, cl_program p, double dram, rl_ceiling *rows) {
  size_t nl = d->nlevels, local = d->cpu ? 1 : d->wg;
  size_t groups = (size_t)d->cus * (d->quick ? 4 : 8), global = groups * local;
  int64_t unit = (int64_t)(64 * 8 * local), ws[RL_MAX_LEVELS], maxw = 0; /* one pass: 8 float16 per item */
  int reps[RL_MAX_LEVELS];
  double best[RL_MAX_LEVELS];
  for (size_t i = 0; i < nl; i++) {
    char why[sizeof rows[i].note] = "", sz[32];
    best[i] = -1;
    reps[i] = 1;
    ws[i] = rl_working_set(d->levels, i, why, sizeof why);
    ws[i] -= ws[i] % unit;
    if (ws[i] > (int64_t)d->max_alloc) ws[i] = 0;
    if (why[0]) {
      rl_note(&rows[i], "%s", why);
    } else if (ws[i] <= 0) {
      rl_size_text(d->levels[i].size, sz, sizeof sz);
      rl_note(&rows[i], "no working set for a cache of %s (reads of %lld bytes, allocations up to %llu)", sz,
              (long long)unit, (unsigned long long)d->max_alloc);
    }
    if (ws[i] > maxw) maxw = ws[i];
  }
  if (!maxw) return;
  cl_int e, e2;
  cl_mem in = d->cl->clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, (size_t)maxw, NULL, &e);
  cl_mem out = d->cl->clCreateBuffer(d->ctx, CL_MEM_WRITE_ONLY, global * sizeof(float), NULL, &e2);
  float one = 1.0f;
  if (e == CL_SUCCESS && e2 == CL_SUCCESS)
    e = d->cl->clEnqueueFillBuffer(d->q, in, &one, sizeof one, 0, (size_t)maxw, 0, NULL, NULL);
  if (e == CL_SUCCESS) e = d->cl->clFinish(d->q);
  cl_kernel k = NULL;
  if (e == CL_SUCCESS && e2 == CL_SUCCESS) k = d->cl->clCreateKernel(p, "cache_read", &e);
  if (e != CL_SUCCESS || e2 != CL_SUCCESS || !k) {
    for (size_t i = 0; i < nl; i++)
      if (ws[i]) rl_note(&rows[i], "no buffer or kernel for the cache levels (%d)", e != CL_SUCCESS ? e : e2);
  } else {
    d->cl->clSetKernelArg(k, 0, sizeof in, &in);
    d->cl->clSetKernelArg(k, 1, sizeof out, &out);
    double target = d->quick ? 0.003 : 0.02;
    for (size_t i = 0; i < nl; i++) { /* the repetitions that make a run long enough to time */
      int n = (int)(ws[i] / 64);
      for (int tries = 0; ws[i] && tries < 8; tries++) {
        d->cl->clSetKernelArg(k, 2, sizeof n, &n);
        d->cl->clSetKernelArg(k, 3, sizeof reps[i], &reps[i]);
        double s = best_time_local(d, k, global, local, 1, &rows[i]);
        if (s < 0) {
          ws[i] = 0;
          break;
        }
        if (s >= target / 2 || reps[i] >= (1 << 20)) break;
        double grow = s > 0 ? target / s : 64;
        reps[i] = (int)(reps[i] * (grow < 64 ? grow : 64)) + 1;
      }
    }
    /* rounds; where a level would then not be told apart from the one outside it (its runs slowed in every
     * round), up to two more sets of rounds of the two before it is given up */
    int again[RL_MAX_LEVELS];
    for (size_t i = 0; i < nl; i++)
      again[i] = 1;
    for (int set = 0; set < 3; set++) {
      for (int round = 0; round < (d->quick ? 3 : 5); round++)
        for (size_t i = 0; i < nl; i++) {
          if (!ws[i] || !again[i]) continue;
          int n = (int)(ws[i] / 64);
          d->cl->clSetKernelArg(k, 2, sizeof n, &n);
          d->cl->clSetKernelArg(k, 3, sizeof reps[i], &reps[i]);
          double s = best_time_local(d, k, global, local, 1, &rows[i]); /* a warm-up refills it, one run */
          if (s < 0) {                                                  /* the note says why */
            ws[i] = 0;
            best[i] = rows[i].value = -1;
          } else if (best[i] < 0 || s < best[i]) {
            best[i] = s;
          }
        }
      for (size_t i = 0; i < nl; i++) {
        if (!ws[i] || best[i] <= 0) continue;
        char w[32], sz[32];
        rl_size_text(ws[i], w, sizeof w);
        rl_size_text(d->levels[i].size, sz, sizeof sz);
        rows[i].value = (double)groups * reps[i] * (double)ws[i] / best[i] * 1e-9;
        rl_note(&rows[i], "cache_read: %s read %d times by %zu work-groups of %zu (%s of %s)", w, reps[i],
                groups, local, rows[i].ceiling, sz);
      }
      rl_ceiling tried[RL_MAX_LEVELS];
      memcpy(tried, rows, nl * sizeof *rows);
      rl_order_levels(tried, nl, dram);
      size_t dropped = 0;
      for (size_t i = 0; i < nl; i++)
        again[i] = 0;
      for (size_t i = 0; i < nl; i++) {
        if (!(rows[i].value >= 0 && tried[i].value < 0)) continue;
        dropped++;
        size_t j = i + 1; /* the level it was compared with (none: dram, not measured again) */
        while (j < nl && tried[j].value < 0)
          j++;
        again[i] = 1;
        if (j < nl) again[j] = 1;
      }
      if (!dropped || set == 2) {
        memcpy(rows, tried, nl * sizeof *rows);
        break;
      }
    }
  }
  if (k) d->cl->clReleaseKernel(k);
  if (in) d->cl->clReleaseMemObject(in);
  if (out) d->cl->clReleaseMemObject(out);
}

static int has_ext(const char *exts, const char *ext) {
  size_t n = strlen(ext);
  for (const char *s = strstr(exts, ext); s; s = strstr(s + 1, ext))
    if ((s == exts || s[-1] == ' ') && (s[n] == ' ' || s[n] == 0)) return 1;
  return 0;
}

/* The rows of one device: fp64, fp32, fp16, int32, dram, then its cache levels; how many. */
static size_t init_rows(const dev *d, rl_ceiling *rows) {
  static const char *const ceil[] = {"fp64", "fp32", "fp16", "int32", "dram"};
  static const char *const unit[] = {"GFLOP/s", "GFLOP/s", "GFLOP/s", "GOP/s", "GB/s"};
  size_t n = RL_FIXED + d->nlevels;
  for (size_t i = 0; i < n; i++) {
    rl_ceiling *c = &rows[i];
    snprintf(c->device, sizeof c->device, "%s", d->name);
    c->ceiling = i < RL_FIXED ? ceil[i] : rl_level_name(d->levels[i - RL_FIXED].level);
    c->unit = i < RL_FIXED ? unit[i] : "GB/s";
    c->value = -1;
    c->note[0] = 0;
  }
  return n;
}

/* The ceilings of one device (rows from init_rows). */
static void measure_device(dev *d, const char *exts, rl_ceiling *rows) {
  static const struct {
    const char *opts, *ext;
    size_t elem;
    float fa, fb;
  } precs[] = {
      /* fp64, fp32, fp16, int32: the rows' order */
      {"-DS=double -DFP64 -cl-mad-enable", "cl_khr_fp64", 8, 0.001f, 0.999f},
      {"-DS=float -DBW -cl-mad-enable", NULL, 4, 0.001f, 0.999f},
      {"-DS=half -DFP16 -cl-mad-enable", "cl_khr_fp16", 2, 0.001f, 0.999f},
      {"-DS=int -DINT", NULL, 4, 1.0f, 3.0f},
  };
  for (size_t i = 0; i < 4; i++) { /* dram and the caches after fp32, whose program they share */
    rl_ceiling *c = &rows[i];
    if (precs[i].ext && !has_ext(exts, precs[i].ext)) {
      rl_note(c, "the device has no %s", precs[i].ext);
      continue;
    }
    if (!d->quiet) fprintf(stderr, "hubprof: roofline: %s: measuring %s\n", d->name, c->ceiling);
    cl_program p = build(d, precs[i].opts, c);
    if (!p) {
      for (size_t k = 4; i == 1 && k < RL_FIXED + d->nlevels; k++)
        snprintf(rows[k].note, sizeof rows[k].note, "%s", c->note);
      continue;
    }
    measure_flops(d, p, precs[i].elem, precs[i].fa, precs[i].fb, c);
    if (i == 1) {
      if (!d->quiet) fprintf(stderr, "hubprof: roofline: %s: measuring dram\n", d->name);
      measure_dram(d, p, &rows[4]);
      if (!d->quiet && d->nlevels) fprintf(stderr, "hubprof: roofline: %s: measuring the caches\n", d->name);
      measure_caches(d, p, rows[4].value, rows + RL_FIXED);
    }
    d->cl->clReleaseProgram(p);
  }
}

/* The device's agent description, as the collector writes it (prov_opencl.c), on its n rows. */
static void describe_agent(cl_api *cl, cl_device_id id, cl_platform_id plat, int index, rl_ceiling *rows,
                           size_t n) {
  rl_ceiling a = {.device_index = index};
  cl_device_type t = 0;
  cl_uint u = 0;
  cl_ulong l = 0;
  cl->clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  a.type = t & CL_DEVICE_TYPE_GPU           ? HP_AGENT_GPU
           : t & CL_DEVICE_TYPE_CPU         ? HP_AGENT_CPU
           : t & CL_DEVICE_TYPE_ACCELERATOR ? HP_AGENT_ACCEL
                                            : HP_AGENT_UNKNOWN;
  cl->clGetDeviceInfo(id, CL_DEVICE_VENDOR, sizeof a.vendor - 1, a.vendor, NULL);
  cl->clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof a.runtime - 1, a.runtime, NULL);
  if (cl->clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL) == CL_SUCCESS)
    a.compute_units = u;
  if (cl->clGetDeviceInfo(id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u, &u, NULL) == CL_SUCCESS)
    a.max_clock_mhz = u;
  if (cl->clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof l, &l, NULL) == CL_SUCCESS)
    a.global_mem_bytes = (int64_t)l;
  if (cl->clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof l, &l, NULL) == CL_SUCCESS)
    a.local_mem_bytes = (int64_t)l;
  for (size_t k = 0; k < n; k++) {
    rl_ceiling *c = &rows[k];
    c->type = a.type;
    c->device_index = a.device_index;
    memcpy(c->vendor, a.vendor, sizeof c->vendor);
    memcpy(c->runtime, a.runtime, sizeof c->runtime);
    c->compute_units = a.compute_units;
    c->max_clock_mhz = a.max_clock_mhz;
    c->global_mem_bytes = a.global_mem_bytes;
    c->local_mem_bytes = a.local_mem_bytes;
  }
}

/* The cache levels of a device: on a CPU device (the host's CPU) its data and unified caches from sysfs; on
 * any other, or where sysfs has none, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE as l2, the cache in front of device
 * memory on GPUs. */
static void cache_levels(cl_api *cl, cl_device_id id, dev *d) {
  cl_device_type t = 0;
  cl->clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  d->cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
  d->nlevels = d->cpu ? rl_host_caches(d->levels, RL_MAX_LEVELS) : 0;
  if (d->nlevels) return;
  cl_device_mem_cache_type ct = CL_NONE;
  cl_ulong size = 0;
  if (cl->clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, sizeof ct, &ct, NULL) == CL_SUCCESS &&
      ct != CL_NONE &&
      cl->clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof size, &size, NULL) == CL_SUCCESS &&
      size)
    d->levels[d->nlevels++] = (rl_level){2, (int64_t)size};
}

int rl_measure(const rl_opts *o, rl_ceiling **out, size_t *n, char *err, size_t len) {
  *out = NULL;
  *n = 0;
  static cl_api cl;
  if (cl_load(&cl, err, len)) return -1;
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (cl.clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
    snprintf(err, len, "roofline: no OpenCL platform found (an ICD such as pocl-opencl-icd is needed)");
    return -1;
  }
  if (np > 16) np = 16;
  cl_device_id devs[64];
  cl_uint nd = 0, plat_of[64], first[64]; /* each device's platform, and its platform's first device */
  for (cl_uint i = 0; i < np && nd < 64; i++) {
    cl_uint k = 0;
    if (cl.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 64 - nd, devs + nd, &k) == CL_SUCCESS) {
      k = k < 64 - nd ? k : 64 - nd;
      for (cl_uint j = nd; j < nd + k; j++) {
        plat_of[j] = i;
        first[j] = nd;
      }
      nd += k;
    }
  }
  char names[64][256], found[512] = "";
  size_t nmatch = 0, fw = 0;
  int match[64];
  for (cl_uint i = 0; i < nd; i++) {
    names[i][0] = 0;
    cl.clGetDeviceInfo(devs[i], CL_DEVICE_NAME, sizeof names[i] - 1, names[i], NULL);
    names[i][sizeof names[i] - 1] = 0;
    match[i] = !o->device_glob || fnmatch(o->device_glob, names[i], 0) == 0;
    char vendor[128] = "";
    cl.clGetDeviceInfo(devs[i], CL_DEVICE_VENDOR, sizeof vendor - 1, vendor, NULL);
    if (o->skip_nvidia && strstr(vendor, "NVIDIA")) match[i] = 0; /* measured through CUDA */
    nmatch += match[i] != 0;
    if (fw < sizeof found)
      fw += (size_t)snprintf(found + fw, sizeof found - fw, "%s'%s'", i ? ", " : "", names[i]);
  }
  if (nd == 0) {
    snprintf(err, len, "roofline: no OpenCL device found");
    return -1;
  }
  if (nmatch == 0) {
    snprintf(err, len, "roofline: no OpenCL device matches '%s' (devices: %s)", o->device_glob, found);
    return -1;
  }
  rl_ceiling *rows = calloc(nmatch * RL_MAX_ROWS, sizeof *rows);
  if (!rows) {
    snprintf(err, len, "roofline: out of memory");
    return -1;
  }
  size_t r = 0;
  for (cl_uint i = 0; i < nd; i++) {
    if (!match[i]) continue;
    dev d = {.cl = &cl, .id = devs[i], .quick = o->quick, .quiet = o->quiet, .name = names[i]};
    char exts[8192] = "";
    size_t maxwg = 0;
    cl.clGetDeviceInfo(devs[i], CL_DEVICE_EXTENSIONS, sizeof exts - 1, exts, NULL);
    cl.clGetDeviceInfo(devs[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d.cus, &d.cus, NULL);
    cl.clGetDeviceInfo(devs[i], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
    cl.clGetDeviceInfo(devs[i], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d.max_alloc, &d.max_alloc, NULL);
    if (!d.cus) d.cus = 1;
    d.wg = maxwg && maxwg < 256 ? maxwg : 256;
    cache_levels(&cl, devs[i], &d);
    size_t nrows = init_rows(&d, rows + r);
    cl_int e;
    d.ctx = cl.clCreateContext(NULL, 1, &devs[i], NULL, NULL, &e);
    if (e == CL_SUCCESS) d.q = cl.clCreateCommandQueue(d.ctx, devs[i], CL_QUEUE_PROFILING_ENABLE, &e);
    if (e == CL_SUCCESS) {
      measure_device(&d, exts, rows + r);
    } else {
      for (size_t k = 0; k < nrows; k++) /* the rows say why, as for a missing extension */
        rl_note(&rows[r + k], "no context or profiling queue on this device (%d)", e);
    }
    if (d.q) cl.clReleaseCommandQueue(d.q);
    if (d.ctx) cl.clReleaseContext(d.ctx);
    describe_agent(&cl, devs[i], plats[plat_of[i]], (int)(i - first[i]), rows + r, nrows);
    r += nrows;
  }
  *out = rows;
  *n = r;
  return 0;
}
