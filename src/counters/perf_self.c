/* The calling thread's own perf counters, free-running from the open and read at any moment: the host part
 * of a region's counters (regions measure begin..end on the thread that opened them, PAPI_hl style). */
/* SPDX-License-Identifier: MIT */
#include "counters_internal.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct hc_self {
  size_t n;
  int fd[HC_SELF_MAX];
  unsigned char scale[HC_SELF_MAX]; /* hardware: scaled by time enabled / running (software always runs) */
};

hc_status hc_self_open(hc_provider *p, const size_t *idx, size_t n, hc_self **out) {
  if (!p || !out || n > HC_SELF_MAX || (n && !idx)) return HC_ERR_INVALID;
  *out = NULL;
  if (p->kind != HC_KIND_PERF) return HC_ERR_UNAVAILABLE; /* device counters have no host part */
  hc_self *s = calloc(1, sizeof *s);
  if (!s) return HC_ERR_NOMEM;
  for (size_t k = 0; k < n; k++) {
    if (idx[k] >= p->n || !p->counters[idx[k]].available) {
      hc_self_close(s);
      return HC_ERR_UNAVAILABLE;
    }
    const hc_perf_event *e = &p->perf[idx[k]];
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = e->type;
    a.config = e->config;
    a.exclude_kernel = e->exclude_kernel ? 1 : 0;
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    int fd = (int)hc_perf_open_fn(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC); /* this thread, no inherit */
    if (fd < 0) {
      int err = errno;
      hc_self_close(s);
      return err == EACCES || err == EPERM ? HC_ERR_UNAVAILABLE : HC_ERR_IO;
    }
    s->scale[s->n] = e->type != PERF_TYPE_SOFTWARE;
    s->fd[s->n++] = fd;
  }
  *out = s;
  return HC_OK;
}

hc_status hc_self_read(hc_self *s, double *values) {
  if (!s || (s->n && !values)) return HC_ERR_INVALID;
  hc_status st = HC_OK;
  static const uint64_t zero[3];
  for (size_t k = 0; k < s->n; k++) {
    uint64_t v[3];
    if (read(s->fd[k], v, sizeof v) != (ssize_t)sizeof v) {
      values[k] = 0;
      st = HC_ERR_IO;
      continue;
    }
    /* a software event never waits for a register; its times can lag just after the open */
    values[k] = s->scale[k] ? hc_perf_scaled(v, zero) : (double)v[0];
  }
  return st;
}

void hc_self_close(hc_self *s) {
  if (!s) return;
  for (size_t k = 0; k < s->n; k++)
    close(s->fd[k]);
  free(s);
}
