/* crash_matrix: one cell of the collector's crash matrix. T threads launch D small dispatches each on one
 * shared in-order queue and exit, the program syncs as asked, prints how many dispatches had completed
 * (event status), waits DELAY ms and dies as asked. With death "exit" the threads instead stay and keep
 * launching while another thread calls exit(7). Each successful launch appends one byte to COUNTFILE, so a
 * test knows how many launches returned before the process died.
 * usage: crash_matrix kill|segv|abort|exit finish_main|finish_other|read|event|none T D DELAY_MS COUNTFILE
 * prints: "crash_matrix: completed=N of M"; never returns normally (exit status 7 with death "exit"). */
/* SPDX-License-Identifier: MIT */
#include "ocl_common.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *src = "__kernel void cm_inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

#define MAXT 64
#define PHASE2 400 /* launches per thread while another thread exits (death "exit") */

static cl_command_queue g_q;
static cl_kernel g_k;
static cl_event *g_ev; /* T*D events of phase 1 */
static int g_t, g_d, g_fd, g_exit_death;
static pthread_barrier_t g_go;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* One launch; on success one byte to the count file (after the launch returned). */
static cl_int launch(cl_event *ev) {
  size_t g = 64;
  cl_int rc = clEnqueueNDRangeKernel(g_q, g_k, 1, NULL, &g, NULL, 0, NULL, ev);
  if (rc == CL_SUCCESS && write(g_fd, "x", 1) != 1) abort();
  return rc;
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  for (int i = 0; i < g_d; i++)
    CHECK(launch(&g_ev[id * g_d + i]));
  if (!g_exit_death) return NULL; /* exits with its dispatches possibly still pending */
  pthread_barrier_wait(&g_go);    /* phase 1 done */
  pthread_barrier_wait(&g_go);    /* main printed its count: launch while the process exits */
  for (int i = 0; i < PHASE2; i++)
    if (launch(NULL) != CL_SUCCESS) break;
  for (;;)
    pause();
  return NULL;
}

static void *finisher(void *arg) {
  (void)arg;
  CHECK(clFinish(g_q));
  return NULL;
}

static void *exiter(void *arg) {
  (void)arg;
  sleep_ms(1);
  exit(7);
}

int main(int argc, char **argv) {
  ex_name = "crash_matrix";
  if (argc != 7) {
    fprintf(stderr, "usage: crash_matrix kill|segv|abort|exit finish_main|finish_other|read|event|none T D "
                    "DELAY_MS COUNTFILE\n");
    return 2;
  }
  const char *death = argv[1], *sync = argv[2];
  g_t = atoi(argv[3]);
  g_d = atoi(argv[4]);
  long delay = atol(argv[5]);
  int known_death =
      !strcmp(death, "kill") || !strcmp(death, "segv") || !strcmp(death, "abort") || !strcmp(death, "exit");
  int known_sync = !strcmp(sync, "finish_main") || !strcmp(sync, "finish_other") || !strcmp(sync, "read") ||
                   !strcmp(sync, "event") || !strcmp(sync, "none");
  if (!known_death || !known_sync || g_t < 1 || g_t > MAXT || g_d < 1 || delay < 0) {
    fprintf(stderr, "crash_matrix: bad arguments\n");
    return 2;
  }
  g_fd = open(argv[6], O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
  if (g_fd < 0) {
    perror(argv[6]);
    return 2;
  }
  g_exit_death = !strcmp(death, "exit");
  ex_cl cl;
  ex_setup(&cl, src);
  g_q = cl.q;
  g_k = ex_kernel(&cl, "cm_inc");
  cl_int err;
  int host[64] = {0};
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  CHECK(err);
  CHECK(clSetKernelArg(g_k, 0, sizeof m, &m));
  g_ev = calloc((size_t)g_t * (size_t)g_d, sizeof *g_ev);
  if (!g_ev) return 2;
  pthread_barrier_init(&g_go, NULL, (unsigned)g_t + 1);
  pthread_t th[MAXT];
  for (int i = 0; i < g_t; i++)
    pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
  if (g_exit_death)
    pthread_barrier_wait(&g_go);
  else
    for (int i = 0; i < g_t; i++)
      pthread_join(th[i], NULL);

  size_t n = (size_t)g_t * (size_t)g_d;
  if (!strcmp(sync, "finish_main")) {
    CHECK(clFinish(g_q));
  } else if (!strcmp(sync, "finish_other")) {
    pthread_t f;
    pthread_create(&f, NULL, finisher, NULL);
    pthread_join(f, NULL);
  } else if (!strcmp(sync, "read")) { /* in order: every kernel before it is complete when it returns */
    CHECK(clEnqueueReadBuffer(g_q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  } else if (!strcmp(sync, "event")) {
    CHECK(clWaitForEvents((cl_uint)n, g_ev));
  } else { /* none: no OpenCL sync call; submit, then poll the last event's status (up to 10 s) */
    CHECK(clFlush(g_q));
    for (int i = 0; i < 10000; i++) {
      cl_int st = CL_QUEUED;
      CHECK(clGetEventInfo(g_ev[n - 1], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
      if (st == CL_COMPLETE) break;
      sleep_ms(1);
    }
  }
  size_t done = 0;
  for (size_t i = 0; i < n; i++) {
    cl_int st = CL_QUEUED;
    CHECK(clGetEventInfo(g_ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    done += st == CL_COMPLETE;
  }
  printf("crash_matrix: completed=%zu of %zu\n", done, n);
  fflush(stdout);
  sleep_ms(delay);

  if (g_exit_death) {
    pthread_t x;
    pthread_create(&x, NULL, exiter, NULL);
    pthread_barrier_wait(&g_go);
    pthread_join(x, NULL);
    for (;;)
      pause();
  }
  for (int i = 0; i < 3; i++) /* in flight when the process dies */
    CHECK(launch(NULL));
  if (!strcmp(death, "segv")) {
    signal(SIGSEGV, SIG_DFL);
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
  } else if (!strcmp(death, "abort")) {
    abort();
  }
  kill(getpid(), SIGKILL);
  for (;;)
    pause();
}
