/* Shared by the OpenCL examples: OpenCL setup on the first device, a CHECK macro, and an
 * FNV-1a checksum so two runs can be compared byte for byte through the one line each example prints. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXAMPLES_OCL_COMMON_H
#define HUBPROF_EXAMPLES_OCL_COMMON_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                             \
  do {                                                                                                       \
    cl_int e_ = (x);                                                                                         \
    if (e_ != CL_SUCCESS) {                                                                                  \
      fprintf(stderr, "%s: %s failed: %d\n", ex_name, #x, e_);                                               \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

static const char *ex_name = "example";

typedef struct ex_cl {
  cl_platform_id plat;
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
  cl_program prog;
} ex_cl;

/* Platform, device, context, in-order queue and the program built from src. */
static inline void ex_setup(ex_cl *c, const char *src) {
  cl_int err;
  CHECK(clGetPlatformIDs(1, &c->plat, NULL));
  CHECK(clGetDeviceIDs(c->plat, CL_DEVICE_TYPE_ALL, 1, &c->dev, NULL));
  c->ctx = clCreateContext(NULL, 1, &c->dev, NULL, NULL, &err);
  CHECK(err);
#if CL_TARGET_OPENCL_VERSION >= 200
  c->q = clCreateCommandQueueWithProperties(c->ctx, c->dev, NULL, &err);
#else
  c->q = clCreateCommandQueue(c->ctx, c->dev, 0, &err);
#endif
  CHECK(err);
  c->prog = clCreateProgramWithSource(c->ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(c->prog, 1, &c->dev, "", NULL, NULL));
}

static inline cl_kernel ex_kernel(ex_cl *c, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(c->prog, name, &err);
  CHECK(err);
  return k;
}

static inline void ex_teardown(ex_cl *c) {
  clReleaseProgram(c->prog);
  clReleaseCommandQueue(c->q);
  clReleaseContext(c->ctx);
}

/* FNV-1a over n bytes, continuing from h (start with 0). */
static inline uint64_t ex_fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  if (!h) h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* Run worker(i) on n threads (i = 0..n-1) and join them: the sum of what they return (their count of wrong
 * results), or -1 when a thread cannot be created (message printed). */
static inline long ex_run_threads(int n, void *(*worker)(void *)) {
  pthread_t *th = calloc((size_t)(n > 0 ? n : 1), sizeof *th);
  if (!th) return -1;
  long bad = 0;
  int made = 0;
  for (; made < n; made++)
    if (pthread_create(&th[made], NULL, worker, (void *)(long)made) != 0) {
      fprintf(stderr, "%s: cannot create thread %d\n", ex_name, made);
      bad = -1;
      break;
    }
  for (int i = 0; i < made; i++) {
    void *r;
    pthread_join(th[i], &r);
    if (bad >= 0) bad += (long)r;
  }
  free(th);
  return bad;
}

#endif
