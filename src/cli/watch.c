/* The live progress line while an application runs (watch.h): the CLI polls its children and, between
 * polls, reopens the run's logs through the hub and counts their dispatches (the collector's harvester puts
 * completed dispatches in the log within ~100 ms), so the application does no extra work. */
/* SPDX-License-Identifier: MIT */
#include "watch.h"

#include "progress.h"
#include "run_app.h"

#include "hubprof/hub.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define POLL_NS 50000000LL       /* children polled every 50 ms */
#define MIN_COUNT_NS 250000000LL /* logs counted at most 4 times a second */

struct cli_watch {
  cli_progress *p;
  char *dir;
  int64_t next_count_ns; /* when to count again */
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

cli_watch *cli_watch_start(const char *dir, const char *what, int quiet) {
  cli_progress *p = cli_progress_start(what, "dispatches", 0, quiet);
  if (!p) return NULL;
  cli_watch *w = calloc(1, sizeof *w);
  if (!w || !(w->dir = strdup(dir))) {
    free(w);
    cli_progress_end(p);
    return NULL;
  }
  w->p = p;
  cli_progress_pin(p); /* the application writes on this terminal too */
  w->next_count_ns = now_ns() + MIN_COUNT_NS;
  return w;
}

/* Dispatches in the folder's logs now: a log being written reads up to its last complete block. */
static uint64_t count_dispatches(const char *dir) {
  size_t n = 0;
  char **logs = run_list_logs(dir, &n);
  uint64_t total = 0;
  for (size_t i = 0; logs && i < n; i++) {
    hp_store *s = NULL;
    uint64_t k = 0;
    if (hp_store_open(logs[i], "log", HP_READ, &s) == HP_OK &&
        hp_store_count(s, HP_TABLE_DISPATCH, &k) == HP_OK)
      total += k;
    hp_store_close(s);
  }
  run_free_list(logs, n);
  return total;
}

pid_t cli_watch_wait(cli_watch *w, int *status) {
  if (!w) return waitpid(-1, status, 0);
  for (;;) {
    pid_t r = waitpid(-1, status, WNOHANG);
    if (r != 0) return r; /* a child ended, or none is left (-1, ECHILD), or an error */
    int64_t t = now_ns();
    if (t >= w->next_count_ns) {
      uint64_t n = count_dispatches(w->dir);
      int64_t took = now_ns() - t;
      w->next_count_ns = now_ns() + (10 * took > MIN_COUNT_NS ? 10 * took : MIN_COUNT_NS);
      cli_progress_update(w->p, n);
    }
    struct timespec ts = {0, POLL_NS};
    nanosleep(&ts, NULL); /* a signal cuts it short: the next poll comes sooner */
  }
}

void cli_watch_end(cli_watch *w) {
  if (!w) return;
  cli_progress_end(w->p);
  free(w->dir);
  free(w);
}
