/* regions: T threads each run N steps of nested hubprof regions around OpenCL dispatches, through
 * include/hubprof/api.h (nothing to link). Prints one checksum line, the same with and without hubprof.
 * usage: regions [T [N]]     regions edge   (unbalanced calls and odd names: never crashes, exits 0)
 *        regions paused       (3 dispatches, hubprof_start(), 4 dispatches, hubprof_stop(), 5 dispatches)
 *        regions fork         (a region open across fork(): each process ends its own copy)
 *        regions race         (3 threads begin and end regions without pause while main calls exit()) */
/* SPDX-License-Identifier: MIT */
#define CL_TARGET_OPENCL_VERSION 120
#include "hubprof/api.h"
#include "ocl_common.h"

#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *src = "__kernel void rg_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";
#define LEN 64
static ex_cl cl;
static int steps;

static void *worker(void *arg) {
  long id = (long)arg;
  cl_int err;
  hubprof_region_begin("worker");
  cl_command_queue q = clCreateCommandQueue(cl.ctx, cl.dev, 0, &err);
  CHECK(err);
  cl_kernel k = ex_kernel(&cl, "rg_inc");
  int host[LEN] = {0};
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = LEN;
  for (int i = 0; i < steps; i++) {
    hubprof_region_begin("step");
    hubprof_region_begin("enqueue");
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    hubprof_region_end();
    CHECK(clFinish(q));
    hubprof_region_end();
  }
  hubprof_mark("worker done");
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseCommandQueue(q);
  hubprof_region_end();
  long bad = 0;
  for (int i = 0; i < LEN; i++)
    bad += host[i] != steps;
  (void)id;
  return (void *)bad;
}

static void *exits_inside(void *arg) {
  (void)arg;
  hubprof_region_begin("open at thread exit");
  return NULL;
}

/* Every misuse the API promises to survive, then exit with two regions still open. */
static int edge(void) {
  hubprof_region_end(); /* end without begin */
  hubprof_region_begin(NULL);
  hubprof_region_end();
  hubprof_region_begin("");
  hubprof_region_end();
  size_t big = 1u << 20;
  char *huge = malloc(big + 1);
  if (!huge) return 1;
  memset(huge, 'a', big);
  huge[big] = 0;
  hubprof_region_begin(huge);
  free(huge); /* the name was copied */
  hubprof_region_end();
  char edge_names[3][1300];
  memset(edge_names[0], 'b', 1023); /* fits exactly */
  edge_names[0][1023] = 0;
  memset(edge_names[1], 'c', 1024); /* one byte too many */
  edge_names[1][1024] = 0;
  for (int i = 0; i < 600; i++) /* 1200 bytes of two-byte characters: cut between characters */
    memcpy(edge_names[2] + 2 * i, "\xc3\xa9", 2);
  edge_names[2][1200] = 0;
  for (int i = 0; i < 3; i++)
    hubprof_mark(edge_names[i]);
  hubprof_region_begin("bad \xff\xfe utf-8 \xc3(");
  hubprof_region_end();
  hubprof_mark("caf\xc3\xa9");
  pthread_t t;
  if (pthread_create(&t, NULL, exits_inside, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
  hubprof_stop();
  hubprof_stop();
  hubprof_start();
  hubprof_region_begin("open at process exit");
  hubprof_region_begin("inner open at process exit");
  printf("regions edge: ok\n");
  return 0;
}

/* Dispatches before, between and after start/stop: under --start-paused only the middle 4 are recorded. */
static int paused(void) {
  ex_setup(&cl, src);
  cl_int err;
  cl_kernel k = ex_kernel(&cl, "rg_inc");
  int host[LEN] = {0};
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof m, &m));
  size_t g = LEN;
  int counts[3] = {3, 4, 5};
  for (int phase = 0; phase < 3; phase++) {
    if (phase == 1) hubprof_start();
    if (phase == 2) hubprof_stop();
    for (int i = 0; i < counts[phase]; i++)
      CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CHECK(clFinish(cl.q));
  }
  CHECK(clEnqueueReadBuffer(cl.q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  long bad = 0;
  for (int i = 0; i < LEN; i++)
    bad += host[i] != 12;
  clReleaseMemObject(m);
  clReleaseKernel(k);
  ex_teardown(&cl);
  printf("regions paused: 12 dispatches, %ld wrong\n", bad);
  return bad != 0;
}

/* The child inherits the open region "across fork" and ends it in its own log, next to its own region. */
static int forked(void) {
  hubprof_region_begin("across fork");
  fflush(stdout);
  pid_t p = fork();
  if (p < 0) return 1;
  if (p == 0) {
    hubprof_region_begin("child");
    hubprof_region_end();
    hubprof_region_end();
    _exit(0);
  }
  int status = 0;
  if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  hubprof_region_end();
  printf("regions fork: ok\n");
  return 0;
}

/* Threads inside region calls when the process exits: the exit handler must wait for them or see them
 * leave, never write their stacks under them. */
static void *hammer(void *arg) {
  (void)arg;
  for (;;) {
    hubprof_region_begin("race outer");
    hubprof_region_begin("race inner");
    hubprof_region_end();
    hubprof_region_end();
  }
  return NULL;
}

static int race(void) {
  pthread_t t;
  for (int i = 0; i < 3; i++)
    if (pthread_create(&t, NULL, hammer, NULL) != 0) return 1;
  struct timespec ts = {0, 50000000};
  nanosleep(&ts, NULL);
  printf("regions race: exit\n");
  fflush(stdout);
  exit(0);
}

int main(int argc, char **argv) {
  ex_name = "regions";
  if (argc > 1 && strcmp(argv[1], "race") == 0) return race();
  if (argc > 1 && strcmp(argv[1], "fork") == 0) return forked();
  if (argc > 1 && strcmp(argv[1], "edge") == 0) return edge();
  if (argc > 1 && strcmp(argv[1], "paused") == 0) return paused();
  int nthreads = argc > 1 ? atoi(argv[1]) : 4;
  steps = argc > 2 ? atoi(argv[2]) : 10;
  if (nthreads < 1 || nthreads > 256 || steps < 0) {
    fprintf(stderr, "usage: regions [T [N]] | regions edge\n");
    return 2;
  }
  hubprof_region_begin("setup");
  ex_setup(&cl, src);
  hubprof_region_end();
  long bad = ex_run_threads(nthreads, worker);
  if (bad < 0) return 1;
  ex_teardown(&cl);
  printf("regions: %d threads x %d steps, %ld wrong\n", nthreads, steps, bad);
  return bad != 0;
}
