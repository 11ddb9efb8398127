/* check_logs: reads the per-process logs the collector wrote in a directory (through the hub, log format
 * only) and prints one summary line per log plus one line per kernel, for tests/collector/test_collector.sh.
 * It checks the invariants every log must hold and prints "bad: ..." for each violation; it never writes.
 * usage: check_logs DIR
 * output:  log FILE pid=P ppid=P rank=R dispatches=N untimed=U launched=L threads=T agents=A queues=Q
 *              kernels=K ended=0|1 lost=L damage=STATUS   (launched: rows from the launch file, end unknown)
 *          kernel FILE NAME COUNT GX,GY,GZ WX,WY,WZ      (sizes of the kernel's first dispatch)
 *          total logs=N dispatches=N bad=N */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXK 256
#define MAXID 65536

static int nbad;
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    nbad++;                                                                                                  \
    printf("bad: " __VA_ARGS__);                                                                             \
    putchar('\n');                                                                                           \
  } while (0)

typedef struct kinfo {
  uint64_t id;
  char name[128];
  uint64_t count;
  uint32_t grid[3], wg[3];
} kinfo;

static uint64_t check_one(const char *dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  if (st != HP_OK) {
    BAD("%s: cannot open: %s", file, s ? hp_store_error(s) : hp_status_str(st));
    hp_store_close(s);
    return 0;
  }
  hp_cursor *c;
  /* process */
  hp_process p = {.size = sizeof p};
  int64_t pid = 0, ppid = 0, rank = -9, end = 0;
  uint64_t lost = 0, nproc = 0;
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
    while (hp_cursor_next(c, &p) == HP_OK) {
      nproc++;
      pid = p.pid;
      ppid = p.ppid;
      rank = p.rank;
      end = p.end_ns;
      lost = p.lost_records;
      if (p.start_ns <= 0) BAD("%s: process start_ns %" PRId64, file, p.start_ns);
      if (!p.command[0]) BAD("%s: empty command line", file);
    }
    hp_cursor_close(c);
  }
  if (nproc != 1) BAD("%s: %" PRIu64 " process rows (want 1)", file, nproc);
  /* small tables: ids present */
  static uint8_t seen_thread[MAXID], seen_agent[MAXID], seen_queue[MAXID];
  memset(seen_thread, 0, sizeof seen_thread);
  memset(seen_agent, 0, sizeof seen_agent);
  memset(seen_queue, 0, sizeof seen_queue);
  uint64_t nthreads = 0, nagents = 0, nqueues = 0;
  hp_thread th = {.size = sizeof th};
  if (hp_cursor_open(s, HP_TABLE_THREAD, &c) == HP_OK) {
    while (hp_cursor_next(c, &th) == HP_OK) {
      if (th.id < MAXID && !seen_thread[th.id]++) nthreads++;
      if (th.tid <= 0) BAD("%s: thread %" PRIu64 " has tid %" PRId64, file, th.id, th.tid);
      if (th.start_ns <= 0 || (th.end_ns && th.end_ns < th.start_ns))
        BAD("%s: thread %" PRIu64 " runs from %" PRId64 " to %" PRId64, file, th.id, th.start_ns, th.end_ns);
    }
    hp_cursor_close(c);
  }
  hp_agent ag = {.size = sizeof ag};
  if (hp_cursor_open(s, HP_TABLE_AGENT, &c) == HP_OK) {
    while (hp_cursor_next(c, &ag) == HP_OK) {
      if (ag.id < MAXID && !seen_agent[ag.id]++) nagents++;
      if (!ag.name[0] || !ag.vendor[0] || ag.compute_units <= 0 || ag.global_mem_bytes <= 0 || !ag.runtime[0])
        BAD("%s: agent %" PRIu64 " lacks device info", file, ag.id);
    }
    hp_cursor_close(c);
  }
  hp_queue q = {.size = sizeof q};
  if (hp_cursor_open(s, HP_TABLE_QUEUE, &c) == HP_OK) {
    while (hp_cursor_next(c, &q) == HP_OK) {
      if (q.id < MAXID && !seen_queue[q.id]++) nqueues++;
      if (q.agent_id >= MAXID || !seen_agent[q.agent_id])
        BAD("%s: queue %" PRIu64 " has no agent", file, q.id);
    }
    hp_cursor_close(c);
  }
  static kinfo ks[MAXK];
  size_t nk = 0;
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) == HP_OK) {
    while (hp_cursor_next(c, &k) == HP_OK && nk < MAXK) {
      ks[nk] = (kinfo){.id = k.id};
      snprintf(ks[nk].name, sizeof ks[nk].name, "%s", k.name);
      nk++;
    }
    hp_cursor_close(c);
  }
  /* dispatches */
  uint64_t nd = 0, untimed = 0, launched = 0;
  static uint8_t seen_did[1u << 20];
  memset(seen_did, 0, sizeof seen_did);
  hp_dispatch d = {.size = sizeof d};
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    while ((st = hp_cursor_next(c, &d)) == HP_OK) {
      nd++;
      if (d.id != d.dispatch_id || d.id == 0)
        BAD("%s: dispatch row id %" PRIu64 " != %" PRIu64, file, d.id, d.dispatch_id);
      if (d.dispatch_id < sizeof seen_did) {
        if (seen_did[d.dispatch_id]++) BAD("%s: dispatch id %" PRIu64 " twice", file, d.dispatch_id);
      }
      kinfo *ki = NULL;
      for (size_t i = 0; i < nk; i++)
        if (ks[i].id == d.kernel_id) ki = &ks[i];
      if (!ki)
        BAD("%s: dispatch %" PRIu64 " has unknown kernel %" PRIu64, file, d.dispatch_id, d.kernel_id);
      else if (ki->count++ == 0) {
        memcpy(ki->grid, d.grid, sizeof d.grid);
        memcpy(ki->wg, d.workgroup, sizeof d.workgroup);
      }
      if (d.thread_id >= MAXID || !seen_thread[d.thread_id])
        BAD("%s: dispatch %" PRIu64 " has unknown thread", file, d.dispatch_id);
      if (d.queue_id >= MAXID || !seen_queue[d.queue_id])
        BAD("%s: dispatch %" PRIu64 " has unknown queue", file, d.dispatch_id);
      if (d.agent_id >= MAXID || !seen_agent[d.agent_id])
        BAD("%s: dispatch %" PRIu64 " has unknown agent", file, d.dispatch_id);
      if (d.process_id != 1)
        BAD("%s: dispatch %" PRIu64 " process_id %" PRIu64, file, d.dispatch_id, d.process_id);
      /* passes 0 without device times: from the launch file (launched, end unknown: the process died first)
       */
      if (d.passes == 0 && !d.start_ns && !d.end_ns)
        launched++;
      else if (d.passes != 1)
        BAD("%s: dispatch %" PRIu64 " passes %u", file, d.dispatch_id, d.passes);
      if (!d.grid[0] || !d.grid[1] || !d.grid[2])
        BAD("%s: dispatch %" PRIu64 " has a zero grid", file, d.dispatch_id);
      if (d.enqueue_ns <= 0) BAD("%s: dispatch %" PRIu64 " has no enqueue time", file, d.dispatch_id);
      if (d.start_ns == 0 && d.end_ns == 0) {
        untimed++;
      } else {
        if (!(d.start_ns < d.end_ns))
          BAD("%s: dispatch %" PRIu64 " start %" PRId64 " >= end %" PRId64, file, d.dispatch_id, d.start_ns,
              d.end_ns);
        if (!(d.enqueue_ns <= d.start_ns))
          BAD("%s: dispatch %" PRIu64 " enqueue %" PRId64 " > start %" PRId64, file, d.dispatch_id,
              d.enqueue_ns, d.start_ns);
      }
    }
    if (st != HP_END) BAD("%s: reading dispatches: %s", file, hp_status_str(st));
    hp_cursor_close(c);
  }
  const char *mode = hp_store_metadata(s, "mode");
  if (!mode || strcmp(mode, "trace") != 0) BAD("%s: metadata mode is %s", file, mode ? mode : "(none)");
  if (!hp_store_metadata(s, "tool_version")) BAD("%s: no tool_version", file);
  uint64_t off = 0;
  hp_status dmg = hp_store_damage(s, &off);
  printf("log %s pid=%" PRId64 " ppid=%" PRId64 " rank=%" PRId64 " dispatches=%" PRIu64 " untimed=%" PRIu64
         " launched=%" PRIu64 " threads=%" PRIu64 " agents=%" PRIu64 " queues=%" PRIu64
         " kernels=%zu ended=%d lost=%" PRIu64 " damage=%s\n",
         file, pid, ppid, rank, nd, untimed, launched, nthreads, nagents, nqueues, nk, end > 0, lost,
         dmg == HP_OK ? "none" : hp_status_str(dmg));
  for (size_t i = 0; i < nk; i++)
    printf("kernel %s %s %" PRIu64 " %u,%u,%u %u,%u,%u\n", file, ks[i].name, ks[i].count, ks[i].grid[0],
           ks[i].grid[1], ks[i].grid[2], ks[i].wg[0], ks[i].wg[1], ks[i].wg[2]);
  hp_store_close(s);
  return nd;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* dir holds the log whose name is the first n bytes of `name` */
static int has_log(const char *dir, const char *name, size_t n) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%.*s", dir, (int)n, name);
  return access(p, F_OK) == 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: check_logs DIR\n");
    return 2;
  }
  DIR *dp = opendir(argv[1]);
  if (!dp) {
    perror(argv[1]);
    return 2;
  }
  char *names[1024];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(dp)) && n < 1024) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    if (strncmp(e->d_name, "hubprof-", 8) == 0 && l > 4 && strcmp(e->d_name + l - 4, ".log") == 0)
      names[n++] = strdup(e->d_name);
    else if (strncmp(e->d_name, "hubprof-", 8) == 0 && l > 11 && !strcmp(e->d_name + l - 11, ".log.launch") &&
             has_log(argv[1], e->d_name, l - 7))
      continue; /* its log's launch file (read with the log) */
    else
      BAD("unexpected file %s", e->d_name);
  }
  closedir(dp);
  qsort(names, n, sizeof *names, cmp);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    total += check_one(argv[1], names[i]);
    free(names[i]);
  }
  printf("total logs=%zu dispatches=%" PRIu64 " bad=%d\n", n, total, nbad);
  return nbad ? 1 : 0;
}
