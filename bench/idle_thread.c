/* A preloaded library that only starts one sleeping thread: what a process pays for having a second thread
 * (glibc's single-thread fast paths end), measured without any collector (bench_trace.sh, issue 33). */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg) {
  for (;;)
    pause();
  return arg;
}

__attribute__((constructor)) static void idle_thread_start(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, idle, NULL) == 0) pthread_detach(t);
}
