/* `hubprof roofline`'s micro-benchmarks on CUDA devices: the kernels of roofline_cuda.cu (a fatbin nvcc made
 * at build time, build/gen/roofline_cuda_fatbin.h) run through the driver API, libcuda.so.1 loaded with
 * dlopen (never linked): FLOP/s per precision and int32 op/s from chains of fused multiply-adds,
 * device-memory bandwidth from streaming reads and a copy over 2 GiB, L1 (shared memory) and L2 bandwidth
 * from reads of working sets held there, timed with CUDA events, the best of
 * several runs after a warm-up. Without nvcc at build time, or without the NVIDIA driver, it says so in one
 * line. */
/* SPDX-License-Identifier: MIT */
#include "roofline.h"

#include "counters.h"
#include "hubprof/hub.h"

#include <dlfcn.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HUBPROF_HAVE_CUDA_BENCH
#include "roofline_cuda_fatbin.h" /* rl_cuda_fatbin[] */

#define CUDA_ROWS (RL_FIXED + 2) /* fp64, fp32, fp16, int32, dram, l1, l2 */

typedef unsigned long long cu_ptr;
#define CU_FNS(X)                                                                                            \
  X(cuInit, int, (unsigned))                                                                                 \
  X(cuDriverGetVersion, int, (int *))                                                                        \
  X(cuDeviceGetCount, int, (int *))                                                                          \
  X(cuDeviceGet, int, (int *, int))                                                                          \
  X(cuDeviceGetName, int, (char *, int, int))                                                                \
  X(cuDeviceGetAttribute, int, (int *, int, int))                                                            \
  X(cuDeviceTotalMem_v2, int, (size_t *, int))                                                               \
  X(cuDevicePrimaryCtxRetain, int, (void **, int))                                                           \
  X(cuDevicePrimaryCtxRelease_v2, int, (int))                                                                \
  X(cuCtxSetCurrent, int, (void *))                                                                          \
  X(cuModuleLoadData, int, (void **, const void *))                                                          \
  X(cuModuleUnload, int, (void *))                                                                           \
  X(cuModuleGetFunction, int, (void **, void *, const char *))                                               \
  X(cuMemAlloc_v2, int, (cu_ptr *, size_t))                                                                  \
  X(cuMemFree_v2, int, (cu_ptr))                                                                             \
  X(cuMemsetD32_v2, int, (cu_ptr, unsigned, size_t))                                                         \
  X(cuLaunchKernel, int,                                                                                     \
    (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,          \
     void **))                                                                                               \
  X(cuEventCreate, int, (void **, unsigned))                                                                 \
  X(cuEventRecord, int, (void *, void *))                                                                    \
  X(cuEventSynchronize, int, (void *))                                                                       \
  X(cuEventDestroy_v2, int, (void *))                                                                        \
  X(cuCtxSynchronize, int, (void))                                                                           \
  X(cuGetErrorString, int, (int, const char **))

typedef struct cu_api {
#define X(f, r, a) r(*f) a;
  CU_FNS(X)
#undef X
  int (*elapsed)(float *, void *, void *); /* cuEventElapsedTime_v2, else cuEventElapsedTime */
} cu_api;

enum { A_CLOCK = 13, A_SMS = 16, A_L2 = 38, A_CC_MAJOR = 75, A_CC_MINOR = 76, A_SHARED_OPTIN = 97 };

static int cu_load(cu_api *cu, char *err, size_t len) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(err, len, "roofline: CUDA: cannot load libcuda.so.1 (no NVIDIA driver on this machine): %s",
             dlerror());
    return -1;
  }
#define X(f, r, a)                                                                                           \
  if (!(*(void **)&cu->f = dlsym(h, #f))) {                                                                  \
    snprintf(err, len, "roofline: CUDA: libcuda.so.1 has no %s", #f);                                        \
    return -1;                                                                                               \
  }
  CU_FNS(X)
#undef X
  if (!(*(void **)&cu->elapsed = dlsym(h, "cuEventElapsedTime_v2")) &&
      !(*(void **)&cu->elapsed = dlsym(h, "cuEventElapsedTime"))) {
    snprintf(err, len, "roofline: CUDA: libcuda.so.1 has no cuEventElapsedTime");
    return -1;
  }
  return 0;
}

static const char *cu_err(const cu_api *cu, int rc) {
  const char *s = NULL;
  if (cu->cuGetErrorString && cu->cuGetErrorString(rc, &s) == 0 && s) return s;
  return "unknown CUDA error";
}

typedef struct dev {
  cu_api *cu;
  void *mod, *ev0, *ev1;
  int sms, quick;
} dev;

/* Launch f over blocks x threads with args, once to warm up and then reps times: the shortest time in
 * seconds, or -1 with the reason in c->note. */
static double best_time(dev *d, void *f, unsigned blocks, unsigned threads, void **args, int reps,
                        rl_ceiling *c) {
  double best = -1;
  for (int r = 0; r <= reps; r++) {
    float ms = 0;
    int rc = d->cu->cuEventRecord(d->ev0, NULL);
    if (!rc) rc = d->cu->cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, NULL, args, NULL);
    if (!rc) rc = d->cu->cuEventRecord(d->ev1, NULL);
    if (!rc) rc = d->cu->cuEventSynchronize(d->ev1);
    if (!rc) rc = d->cu->elapsed(&ms, d->ev0, d->ev1);
    if (rc) {
      rl_note(c, "the kernel failed: %s", cu_err(d->cu, rc));
      return -1;
    }
    double s = ms * 1e-3;
    if (r > 0 && s > 0 && (best < 0 || s < best)) best = s;
  }
  return best;
}

/* Runs kernel f with *n (which args points to) grown, a multiple of step, until one run takes the target
 * time (2 ms quick, 30 ms else; at most 8 tries, n below 2^24), then the best of 2 (quick) or 5 runs:
 * seconds, or a negative value with the reason in c->note. */
static double time_grown(dev *d, void *f, unsigned blocks, unsigned threads, void **args, int *n, int step,
                         rl_ceiling *c) {
  double target = d->quick ? 0.002 : 0.03, s = 0;
  for (int tries = 0; tries < 8; tries++) {
    s = best_time(d, f, blocks, threads, args, 1, c);
    if (s < 0 || s >= target / 2 || *n >= (1 << 24)) break;
    double grow = s > 0 ? target / s : 64;
    *n = (int)(*n * (grow < 64 ? grow : 64));
    *n = (*n + step - 1) / step * step;
  }
  if (s >= 0) s = best_time(d, f, blocks, threads, args, d->quick ? 2 : 5, c);
  return s;
}

/* A compute ceiling: kernel `name` over SMs x 8 blocks of 256 threads, its chains grown until one run takes
 * the target time; ops = 16 per iteration per thread times lanes (2 for half2). */
static void measure_ops(dev *d, const char *name, int kind, int lanes, cu_ptr out, rl_ceiling *c) {
  void *f = NULL;
  int rc = d->cu->cuModuleGetFunction(&f, d->mod, name);
  if (rc) {
    rl_note(c, "no kernel %s: %s", name, cu_err(d->cu, rc));
    return;
  }
  unsigned threads = 256, blocks = (unsigned)d->sms * 8;
  double da = 0.001, db = 0.999;
  float fa = 0.001f, fb = 0.999f;
  int ia = 1, ib = 3, n = 256;
  void *args[4] = {&out, NULL, NULL, &n};
  if (kind == 0)
    args[1] = &da, args[2] = &db; /* fp64 */
  else if (kind == 1)
    args[1] = &fa, args[2] = &fb; /* fp32, fp16 (converted in the kernel) */
  else
    args[1] = &ia, args[2] = &ib; /* int32 */
  double s = time_grown(d, f, blocks, threads, args, &n, 8, c);
  if (s <= 0) return;
  c->value = (double)blocks * threads * n * 16.0 * lanes / s * 1e-9;
  rl_note(c, "%s: %u blocks x %u threads, 8 chains of %d fused multiply-adds", name, blocks, threads, n);
}

/* The dram ceiling: the best of streaming float4 reads and a float4 copy over 2 GiB (64 MiB quick; a quarter
 * of the device's memory at most), bytes read plus written. */
static void measure_dram(dev *d, size_t total_mem, rl_ceiling *c) {
  size_t bytes = (size_t)(d->quick ? 64 : 2048) << 20;
  if (total_mem && bytes > total_mem / 4) bytes = total_mem / 4 & ~(size_t)0xffff;
  cu_ptr in = 0, out = 0, sums = 0;
  unsigned threads = 256, blocks = (unsigned)d->sms * 8;
  int rc = d->cu->cuMemAlloc_v2(&in, bytes);
  if (!rc) rc = d->cu->cuMemAlloc_v2(&out, bytes);
  if (!rc) rc = d->cu->cuMemAlloc_v2(&sums, (size_t)blocks * threads * sizeof(float));
  if (!rc) rc = d->cu->cuMemsetD32_v2(in, 0x3f800000u, bytes / 4); /* 1.0f: every page touched */
  if (!rc) rc = d->cu->cuMemsetD32_v2(out, 0, bytes / 4);
  if (!rc) rc = d->cu->cuCtxSynchronize();
  if (rc) {
    rl_note(c, "%zu MiB of device memory: %s", bytes >> 20, cu_err(d->cu, rc));
  } else {
    size_t n4 = bytes / 16;
    static const char *const names[] = {"hp_read", "hp_copy"};
    for (int k = 0; k < 2; k++) {
      void *f = NULL;
      if ((rc = d->cu->cuModuleGetFunction(&f, d->mod, names[k]))) {
        rl_note(c, "no kernel %s: %s", names[k], cu_err(d->cu, rc));
        break;
      }
      void *args[3] = {&in, k ? &out : &sums, &n4};
      double s = best_time(d, f, blocks, threads, args, d->quick ? 2 : 5, c);
      if (s <= 0) break;
      double v = (k ? 2.0 * (double)bytes : (double)bytes) / s * 1e-9;
      if (v > c->value) {
        c->value = v;
        rl_note(c, "%s over %zu MiB, bytes read + written", names[k], bytes >> 20);
      }
    }
  }
  if (in) d->cu->cuMemFree_v2(in);
  if (out) d->cu->cuMemFree_v2(out);
  if (sums) d->cu->cuMemFree_v2(sums);
}

/* Reads of kernel `name` (hp_l1, hp_shared, hp_l2) cycling through mask + 1 float4s of `in`, over SMs x 8
 * blocks of 256 threads, n reads per thread grown until one run takes the target time: GB/s, or -1 with the
 * reason in c->note. */
static double measure_reads(dev *d, const char *name, cu_ptr in, cu_ptr out, unsigned mask, rl_ceiling *c,
                            int *reads) {
  void *f = NULL;
  int rc = d->cu->cuModuleGetFunction(&f, d->mod, name);
  if (rc) {
    rl_note(c, "no kernel %s: %s", name, cu_err(d->cu, rc));
    return -1;
  }
  unsigned threads = 256, blocks = (unsigned)d->sms * 8;
  int n = 64;
  void *args[4] = {&in, &out, &mask, &n};
  double s = time_grown(d, f, blocks, threads, args, &n, 16, c);
  if (s <= 0) return -1;
  *reads = n;
  return (double)blocks * threads * n * 16.0 / s * 1e-9;
}

/* The cache ceilings, l1 then l2: l1 the best of shared-memory reads (hp_shared) and L1-cached global reads
 * (hp_l1) of 16 KiB; l2 reads (hp_l2, L2 only) of a working set of a quarter of L2 (a power of two, at least
 * 256 KiB); then a level that cannot be told apart from the one outside it is dropped (rl_order_levels). */
static void measure_caches(dev *d, int l2_bytes, double dram, rl_ceiling *rows) {
  size_t ws = (size_t)256 << 10;
  while (l2_bytes > 0 && ws * 2 <= (size_t)l2_bytes / 4)
    ws *= 2;
  cu_ptr in = 0, out = 0;
  int rc = d->cu->cuMemAlloc_v2(&in, ws);
  if (!rc) rc = d->cu->cuMemAlloc_v2(&out, (size_t)d->sms * 8 * 256 * sizeof(float));
  if (!rc) rc = d->cu->cuMemsetD32_v2(in, 0x3f800000u, ws / 4); /* 1.0f */
  if (!rc) rc = d->cu->cuCtxSynchronize();
  if (rc) {
    rl_note(&rows[0], "%zu KiB of device memory: %s", ws >> 10, cu_err(d->cu, rc));
    rl_note(&rows[1], "%zu KiB of device memory: %s", ws >> 10, cu_err(d->cu, rc));
  } else {
    static const char *const l1k[] = {"hp_shared", "hp_l1"};
    for (int k = 0; k < 2; k++) {
      int n = 0;
      double v = measure_reads(d, l1k[k], in, out, 1023, &rows[0], &n);
      if (v > rows[0].value) {
        rows[0].value = v;
        rl_note(&rows[0], "%s: 16 KiB per SM, %d reads of 16 bytes per thread, %u blocks x 256 threads",
                l1k[k], n, (unsigned)d->sms * 8);
      }
    }
    int n = 0;
    double v = measure_reads(d, "hp_l2", in, out, (unsigned)(ws / 16 - 1), &rows[1], &n);
    if (v > 0) {
      char w[32], l2[32];
      rl_size_text((int64_t)ws, w, sizeof w);
      rl_size_text(l2_bytes, l2, sizeof l2);
      rows[1].value = v;
      rl_note(&rows[1], "hp_l2: %s of an L2 of %s, %d reads of 16 bytes per thread, %u blocks x 256 threads",
              w, l2, n, (unsigned)d->sms * 8);
    }
    rl_order_levels(rows, 2, dram);
  }
  if (in) d->cu->cuMemFree_v2(in);
  if (out) d->cu->cuMemFree_v2(out);
}

/* The device's name as the CUDA provider writes its agent row (prov_cuda.c: CUPTI's chip name, else
 * sm_XY), so that --store finds the profile's own agent. */
static void chip_name(int ordinal, int major, int minor, char *out, size_t len) {
  snprintf(out, len, "sm_%d%d", major, minor);
  hc_cupti *lib = NULL;
  if (hc_cupti_open(&lib) == HC_OK) {
    int (*get)(void *) = NULL;
    *(void **)&get = hc_cupti_sym(lib, "cuptiDeviceGetChipName");
    const char *chip = hc_cupti_chip(get, (size_t)ordinal);
    if (chip) snprintf(out, len, "%s", chip);
  }
  hc_cupti_close(lib);
}

#endif /* HUBPROF_HAVE_CUDA_BENCH */

int rl_cuda_built(void) {
#ifdef HUBPROF_HAVE_CUDA_BENCH
  return 1;
#else
  return 0;
#endif
}

int rl_measure_cuda(const rl_opts *o, rl_ceiling **out, size_t *n, char *err, size_t len) {
  *out = NULL;
  *n = 0;
#ifndef HUBPROF_HAVE_CUDA_BENCH
  (void)o;
  snprintf(
      err, len,
      "roofline: CUDA: this hubprof was built without nvcc, so it has no CUDA micro-benchmarks (build it "
      "where the CUDA toolkit is installed)");
  return -1;
#else
  static cu_api cu;
  if (cu_load(&cu, err, len)) return -1;
  int rc = cu.cuInit(0), ndev = 0;
  if (!rc) rc = cu.cuDeviceGetCount(&ndev);
  if (rc || ndev <= 0) {
    snprintf(err, len, "roofline: CUDA: no CUDA device (%s)", rc ? cu_err(&cu, rc) : "0 devices");
    return -1;
  }
  int drv = 0;
  if (cu.cuDriverGetVersion(&drv)) drv = 0;
  rl_ceiling *rows = calloc((size_t)ndev * CUDA_ROWS, sizeof *rows);
  if (!rows) {
    snprintf(err, len, "roofline: out of memory");
    return -1;
  }
  char found[512] = "";
  size_t r = 0, fw = 0;
  for (int i = 0; i < ndev; i++) {
    int cd = -1, v[6] = {0};
    static const int which[6] = {A_CLOCK, A_SMS, A_CC_MAJOR, A_CC_MINOR, A_SHARED_OPTIN, A_L2};
    char product[256] = "", name[64];
    if (cu.cuDeviceGet(&cd, i)) continue;
    cu.cuDeviceGetName(product, sizeof product - 1, cd);
    for (int k = 0; k < 6; k++)
      if (cu.cuDeviceGetAttribute(&v[k], which[k], cd)) v[k] = 0;
    chip_name(i, v[2], v[3], name, sizeof name);
    if (fw < sizeof found)
      fw += (size_t)snprintf(found + fw, sizeof found - fw, "%s'%s' (%s)", i ? ", " : "", product, name);
    if (o->device_glob && fnmatch(o->device_glob, product, 0) && fnmatch(o->device_glob, name, 0)) continue;
    size_t mem = 0;
    if (cu.cuDeviceTotalMem_v2(&mem, cd)) mem = 0;
    static const char *const ceil[CUDA_ROWS] = {"fp64", "fp32", "fp16", "int32", "dram", "l1", "l2"};
    static const char *const unit[CUDA_ROWS] = {"GFLOP/s", "GFLOP/s", "GFLOP/s", "GOP/s",
                                                "GB/s",    "GB/s",    "GB/s"};
    for (int k = 0; k < CUDA_ROWS; k++) {
      rl_ceiling *c = &rows[r + (size_t)k];
      snprintf(c->device, sizeof c->device, "%s", name);
      c->ceiling = ceil[k];
      c->unit = unit[k];
      c->value = -1;
      c->type = HP_AGENT_GPU;
      c->device_index = i;
      snprintf(c->vendor, sizeof c->vendor, "NVIDIA");
      snprintf(c->runtime, sizeof c->runtime, "CUDA %d.%d, sm_%d%d, %.120s", drv / 1000, drv % 1000 / 10,
               v[2], v[3], product);
      c->compute_units = v[1];
      c->max_clock_mhz = v[0] / 1000;
      c->global_mem_bytes = (int64_t)mem;
      c->local_mem_bytes = v[4];
    }
    dev d = {.cu = &cu, .sms = v[1] > 0 ? v[1] : 1, .quick = o->quick};
    void *ctx = NULL;
    cu_ptr outb = 0;
    rc = cu.cuDevicePrimaryCtxRetain(&ctx, cd);
    if (!rc) rc = cu.cuCtxSetCurrent(ctx);
    if (!rc) rc = cu.cuModuleLoadData(&d.mod, rl_cuda_fatbin);
    if (!rc) rc = cu.cuEventCreate(&d.ev0, 0);
    if (!rc) rc = cu.cuEventCreate(&d.ev1, 0);
    if (!rc) rc = cu.cuMemAlloc_v2(&outb, (size_t)d.sms * 8 * 256 * 8);
    if (rc) {
      for (int k = 0; k < CUDA_ROWS; k++)
        rl_note(&rows[r + (size_t)k], "the benchmarks could not be set up on this device: %s",
                cu_err(&cu, rc));
    } else {
      static const struct {
        const char *kernel;
        int kind, lanes;
      } ks[4] = {{"hp_fp64", 0, 1}, {"hp_fp32", 1, 1}, {"hp_fp16", 1, 2}, {"hp_int32", 2, 1}};
      for (int k = 0; k < 4; k++) {
        if (!o->quiet) fprintf(stderr, "hubprof: roofline: %s: measuring %s\n", product, rows[r + k].ceiling);
        measure_ops(&d, ks[k].kernel, ks[k].kind, ks[k].lanes, outb, &rows[r + (size_t)k]);
      }
      if (!o->quiet) fprintf(stderr, "hubprof: roofline: %s: measuring dram\n", product);
      measure_dram(&d, mem, &rows[r + 4]);
      if (!o->quiet) fprintf(stderr, "hubprof: roofline: %s: measuring the caches\n", product);
      measure_caches(&d, v[5], rows[r + 4].value, &rows[r + RL_FIXED]);
    }
    if (outb) cu.cuMemFree_v2(outb);
    if (d.ev0) cu.cuEventDestroy_v2(d.ev0);
    if (d.ev1) cu.cuEventDestroy_v2(d.ev1);
    if (d.mod) cu.cuModuleUnload(d.mod);
    if (ctx) cu.cuDevicePrimaryCtxRelease_v2(cd);
    r += CUDA_ROWS;
  }
  if (!r) {
    free(rows);
    snprintf(err, len, "roofline: CUDA: no CUDA device matches '%s' (devices: %s)", o->device_glob, found);
    return -2;
  }
  *out = rows;
  *n = r;
  return 0;
#endif
}
