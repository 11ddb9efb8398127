/* Scans shared out to threads: hp_cursor_open_part over Parquet (row groups of several part files, one
 * process without rows), rocpd (id ranges) and a log (part 0 alone), each part read on its own thread, gives
 * every row once and in order; ha_run by kernel and the rank views on 1, 2, 3 and 7 threads give the
 * one-thread result cell for cell. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/analysis.h"
#include "hubprof/hub.h"
#include "parquet_fmt.h"

#include "check.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPROC 5 /* process 4 has no dispatch */
#define NDISP 2000

static char dir[512];

static void rm_tree(const char *p) {
  DIR *d = opendir(p);
  if (!d) {
    unlink(p);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char q[1024];
    snprintf(q, sizeof q, "%s/%s", p, e->d_name);
    rm_tree(q);
  }
  closedir(d);
  rmdir(p);
}

/* A store of NPROC processes on two agents: kernels 1-5, ids 99 (absent) and 0 (none), untimed dispatches,
 * dispatches ending before they start, incomplete ones; kernels 1 and 2 tie. */
static int make_store(const char *path, const char *format, uint64_t ndisp) {
  hp_store *s = NULL;
  if (hp_store_open(path, format, HP_CREATE, &s) != HP_OK) return -1;
  if (!strcmp(format, "parquet") && hp_parquet_set_partition(s, HP_PARTITION_PROCESS) != HP_OK) return -1;
  hp_node node = {.size = sizeof node, .id = 1, .hostname = "h", .machine_id = "m", .system_name = "Linux"};
  int bad = hp_write_node(s, &node) != HP_OK;
  for (uint64_t a = 1; a <= 2; a++) {
    hp_agent ag = {
        .size = sizeof ag, .id = a, .node_id = 1, .type = HP_AGENT_GPU, .name = a == 1 ? "g1" : "g2"};
    bad |= hp_write_agent(s, &ag) != HP_OK;
  }
  for (uint64_t p = 1; p <= NPROC; p++) {
    hp_process pr = {
        .size = sizeof pr,
        .id = p,
        .node_id = 1,
        .pid = 100 + (int64_t)p,
        .rank = p == NPROC ? -1 : (int64_t)(p % 3), /* ranks 1, 2, 0, 1 (process 4: no dispatch), none */
        .start_ns = 1};
    hp_thread th = {.size = sizeof th, .id = p, .process_id = p, .tid = 100 + (int64_t)p, .name = "t"};
    hp_queue q = {.size = sizeof q, .id = p, .process_id = p, .agent_id = 1, .name = "q"};
    bad |= hp_write_process(s, &pr) != HP_OK || hp_write_thread(s, &th) != HP_OK ||
           hp_write_queue(s, &q) != HP_OK;
  }
  hp_code_object co = {.size = sizeof co, .id = 1, .process_id = 1, .agent_id = 1, .uri = "memory://x"};
  bad |= hp_write_code_object(s, &co) != HP_OK;
  static const char *const names[] = {"k_a", "k_b", "k_c", "k_d", "k_e"};
  for (uint64_t k = 1; k <= 5; k++) {
    hp_kernel_symbol ks = {
        .size = sizeof ks, .id = k, .code_object_id = 1, .name = names[k - 1], .display_name = names[k - 1]};
    bad |= hp_write_kernel_symbol(s, &ks) != HP_OK;
  }
  uint64_t x = 88172645463325252ull, id = 0;
  for (uint64_t p = 1; p <= NPROC && !bad; p++)
    for (uint64_t i = 0; p != 4 && i < ndisp; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      static const uint64_t kid[] = {1, 2, 1, 2, 3, 4, 5, 99, 0};
      uint64_t k = kid[(x >> 20) % 9];
      int64_t t0 = 1000 + 1000 * (int64_t)i;
      hp_dispatch d = {.size = sizeof d,
                       .id = ++id,
                       .dispatch_id = i + 1,
                       .process_id = p,
                       .thread_id = p,
                       .agent_id = 1 + (i & 1),
                       .queue_id = p,
                       .kernel_id = k,
                       .start_ns = t0,
                       .end_ns = t0 + (k <= 2 ? 250 : 100 + (int64_t)(x >> 50)),
                       .passes = 1};
      if (k == 3 && i % 5 == 0) d.start_ns = 0;
      if (k == 3 && i % 7 == 0) d.end_ns = t0 - 5;
      if (k == 4 && i % 11 == 0) d.start_ns = d.end_ns = 0, d.passes = 0;
      bad |= hp_write_dispatch(s, &d) != HP_OK;
    }
  if (bad) {
    fprintf(stderr, "test_scan_par: %s\n", hp_store_error(s));
    hp_store_abort(s);
    return -1;
  }
  return hp_store_close(s) == HP_OK ? 0 : -1;
}

typedef struct part_read {
  hp_store *s;
  unsigned part, nparts;
  uint64_t *ids;
  size_t n;
  hp_status st;
} part_read;

static void *read_part(void *arg) {
  part_read *p = arg;
  hp_cursor *c;
  p->st = hp_cursor_open_part(p->s, HP_TABLE_DISPATCH, p->part, p->nparts, &c);
  if (p->st != HP_OK) return NULL;
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  void *cols[64] = {0};
  uint64_t buf[512];
  for (size_t i = 0; i < d->ncolumns; i++)
    if (!strcmp(d->columns[i].name, "id")) cols[i] = buf;
  size_t n;
  while ((p->st = hp_cursor_next_batch(c, cols, 512, &n)) == HP_OK) {
    uint64_t *m = realloc(p->ids, (p->n + n) * sizeof *m);
    if (!m) break;
    p->ids = m;
    memcpy(p->ids + p->n, buf, n * sizeof *buf);
    p->n += n;
  }
  hp_cursor_close(c);
  return NULL;
}

/* Every part read at once on its own thread: the parts, one after the other, are the whole table. Returns how
 * many parts had rows. */
static unsigned check_parts(hp_store *s, unsigned nparts, const uint64_t *all, size_t nall) {
  part_read p[64];
  pthread_t th[64];
  for (unsigned i = 0; i < nparts; i++) {
    p[i] = (part_read){.s = s, .part = i, .nparts = nparts};
    CHECK(pthread_create(&th[i], NULL, read_part, &p[i]) == 0);
  }
  size_t at = 0, same = 1;
  unsigned nonempty = 0;
  for (unsigned i = 0; i < nparts; i++) {
    pthread_join(th[i], NULL);
    CHECK_MSG(p[i].st == HP_END, "%s: part %u of %u: status %d", hp_store_format(s), i, nparts, (int)p[i].st);
    for (size_t j = 0; j < p[i].n; j++, at++)
      same &= at < nall && p[i].ids[j] == all[at];
    nonempty += p[i].n > 0;
    free(p[i].ids);
  }
  CHECK_MSG(same && at == nall, "%s: %u parts give %zu rows, not the table's %zu in order",
            hp_store_format(s), nparts, at, nall);
  return nonempty;
}

/* hp_cursor_filter: groups whose dispatch ids all lie below 1000 passed over */
static int col_dispatch_id = -1, col_id = -1;
static int from_1000(void *ctx, const hp_col_range *cols) {
  ++*(int *)ctx;
  const hp_col_range *d = &cols[col_dispatch_id];
  return !d->known || d->max >= 1000;
}

static void check_filter(hp_store *s) {
  const hp_table_desc *d = hp_table_describe(HP_TABLE_DISPATCH);
  for (size_t i = 0; i < d->ncolumns; i++) {
    if (!strcmp(d->columns[i].name, "dispatch_id")) col_dispatch_id = (int)i;
    if (!strcmp(d->columns[i].name, "id")) col_id = (int)i;
  }
  size_t n[2][2] = {{0}}; /* [filtered][dispatch id >= 1000] */
  int calls = 0;
  hp_status fst = HP_OK;
  for (int f = 0; f < 2; f++) {
    hp_cursor *c = NULL;
    CHECK(hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK);
    if (f) fst = hp_cursor_filter(c, from_1000, &calls);
    hp_dispatch row = {.size = sizeof row};
    while (c && hp_cursor_next(c, &row) == HP_OK)
      n[f][row.dispatch_id >= 1000]++;
    hp_cursor_close(c);
  }
  CHECK_EQ_U64(n[0][1], n[1][1]); /* every row a kept group holds */
  if (!strcmp(hp_store_format(s), "parquet")) {
    /* 7 row groups of 300 rows per process: ids 1-300, 301-600, 601-900 passed over, 901-1200 read */
    CHECK_MSG(fst == HP_OK && calls == 28 && n[1][0] == 4 * 99 && n[0][0] == 4 * 999,
              "filter %d: %d calls, %zu of %zu rows", (int)fst, calls, n[1][0], n[0][0]);
  } else {
    CHECK(fst == HP_ERR_UNSUPPORTED && n[1][0] == n[0][0]);
  }
}

static ha_result *by_group(hp_store *s, int group, unsigned threads, int variant) {
  static const char *const kern[] = {"k_[ab]"};
  ha_query q = {.size = sizeof q, .group = group, .threads = threads};
  if (variant == 1) q.sort = HA_SORT_ORDER;
  if (variant == 2) q.kernels = kern, q.nkernels = 1;
  if (variant == 3) q.dispatch_first = 300, q.dispatch_last = 1700;
  if (variant == 4) q.sort = HA_SORT_NAME, q.limit = 2;
  ha_result *r = NULL;
  hp_status st = ha_run(s, &q, &r);
  CHECK_MSG(st == HP_OK, "%s", ha_result_error(r));
  return r;
}

static int same_result(const ha_result *a, const ha_result *b) {
  if (!a || !b || ha_result_ncols(a) != ha_result_ncols(b) || ha_result_nrows(a) != ha_result_nrows(b))
    return 0;
  for (size_t i = 0; i < ha_result_nrows(a); i++)
    for (size_t j = 0; j < ha_result_ncols(a); j++) {
      if (strcmp(ha_result_col_name(a, j), ha_result_col_name(b, j)) ||
          ha_result_flags(a, i, j) != ha_result_flags(b, i, j))
        return 0;
      if (ha_result_col_kind(a, j) == HA_TEXT) {
        if (strcmp(ha_result_text(a, i, j), ha_result_text(b, i, j))) return 0;
      } else {
        double x = ha_result_num(a, i, j), y = ha_result_num(b, i, j);
        if (!(x == y || (isnan(x) && isnan(y))) || ha_result_int(a, i, j) != ha_result_int(b, i, j)) return 0;
      }
    }
  return 1;
}

static void check_store(const char *path, int splits) {
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_close(s);
    return;
  }
  /* the whole table, as one cursor reads it */
  part_read all = {.s = s, .part = 0, .nparts = 1};
  read_part(&all);
  CHECK_EQ_U64(all.n, (NPROC - 1) * NDISP);
  unsigned counts[] = {1, 2, 3, 7, 50};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    unsigned nonempty = check_parts(s, counts[i], all.ids, all.n);
    /* a format that splits puts rows in more than one part (Parquet: 4 files of 7 row groups) */
    CHECK_MSG(splits ? nonempty == (counts[i] < 28 ? counts[i] : 28) || counts[i] == 50 : nonempty == 1,
              "%s: %u parts, %u with rows", hp_store_format(s), counts[i], nonempty);
  }
  free(all.ids);
  check_filter(s);
  hp_cursor *c = NULL;
  CHECK(hp_cursor_open_part(s, HP_TABLE_DISPATCH, 3, 3, &c) == HP_ERR_INVALID && !c);
  CHECK(hp_cursor_open_part(s, HP_TABLE_DISPATCH, 0, 0, &c) == HP_ERR_INVALID && !c);
  /* a small table is not split: part 0 has every process */
  hp_process pr = {.size = sizeof pr};
  size_t n0 = 0, n1 = 0;
  if (hp_cursor_open_part(s, HP_TABLE_PROCESS, 0, 2, &c) == HP_OK)
    while (hp_cursor_next(c, &pr) == HP_OK)
      n0++;
  hp_cursor_close(c);
  if (hp_cursor_open_part(s, HP_TABLE_PROCESS, 1, 2, &c) == HP_OK)
    while (hp_cursor_next(c, &pr) == HP_OK)
      n1++;
  hp_cursor_close(c);
  CHECK_MSG(n0 + n1 == NPROC && (!strcmp(hp_store_format(s), "parquet") || n1 == 0),
            "%s: processes %zu + %zu", hp_store_format(s), n0, n1);
  /* ha_run on several threads: the one-thread result, cell for cell, in every sort and filter; by kernel, by
   * rank (4 ranks x 2 devices x 7 kernels at most) and per kernel over the ranks */
  static const int groups[] = {HA_BY_KERNEL, HA_BY_RANK, HA_BY_RANK_IMBALANCE};
  for (int gi = 0; gi < 3; gi++)
    for (int v = 0; v < 5; v++) {
      int g = groups[gi];
      ha_result *one = by_group(s, g, 1, v);
      size_t want = g == HA_BY_RANK_IMBALANCE ? (v == 2   ? 2u
                                                 : v == 4 ? 2u
                                                          : 6u)
                    : g == HA_BY_RANK         ? (v == 4 ? 8u : 16u)
                    : v == 4 || v == 2        ? 4u
                                              : 10u;
      CHECK_MSG(one && ha_result_nrows(one) >= want, "%s group %d variant %d: %zu rows", hp_store_format(s),
                g, v, one ? ha_result_nrows(one) : 0);
      for (unsigned t = 2; t <= 7; t += t == 3 ? 4 : 1) {
        ha_result *many = by_group(s, g, t, v);
        CHECK_MSG(same_result(one, many), "%s group %d variant %d: %u threads differ from one",
                  hp_store_format(s), g, v, t);
        ha_result_free(many);
      }
      ha_result_free(one);
    }
  hp_store_close(s);
}

/* A merge of a rocpd input read ahead on 3 threads (merge_read.c) writes the rows one thread writes. */
static void check_merge(void) {
  char in[600], out[2][600];
  snprintf(in, sizeof in, "%s/big.db", dir);
  CHECK(make_store(in, "rocpd", 17500) == 0); /* 70000 dispatches: ranges of 16384 ids */
  for (int t = 0; t < 2; t++) {
    snprintf(out[t], sizeof out[t], "%s/m%d.db", dir, t);
    setenv("HUBPROF_THREADS", t ? "3" : "1", 1);
    hp_store *s = NULL, *o = NULL;
    CHECK(hp_store_open(in, NULL, HP_READ, &s) == HP_OK);
    CHECK(hp_store_open(out[t], "rocpd", HP_CREATE, &o) == HP_OK);
    hp_merge_stats ms = {.size = sizeof ms};
    hp_status st = hp_merge(o, &s, 1, &ms);
    CHECK_MSG(st == HP_OK, "%s", hp_store_error(o));
    CHECK_EQ_U64(ms.rows_out[HP_TABLE_DISPATCH], 70000);
    CHECK(hp_store_close(o) == HP_OK);
    hp_store_close(s);
  }
  unsetenv("HUBPROF_THREADS");
  hp_store *a = NULL, *b = NULL;
  hp_cursor *ca = NULL, *cb = NULL;
  size_t n = 0, same = 1;
  if (hp_store_open(out[0], NULL, HP_READ, &a) == HP_OK &&
      hp_store_open(out[1], NULL, HP_READ, &b) == HP_OK &&
      hp_cursor_open(a, HP_TABLE_DISPATCH, &ca) == HP_OK &&
      hp_cursor_open(b, HP_TABLE_DISPATCH, &cb) == HP_OK) {
    hp_dispatch x = {.size = sizeof x}, y = {.size = sizeof y};
    for (;;) {
      hp_status sa = hp_cursor_next(ca, &x), sb = hp_cursor_next(cb, &y);
      if (sa != sb) same = 0;
      if (sa != HP_OK || sb != HP_OK) break;
      same &= x.id == y.id && x.dispatch_id == y.dispatch_id && x.process_id == y.process_id &&
              x.kernel_id == y.kernel_id && x.agent_id == y.agent_id && x.start_ns == y.start_ns &&
              x.end_ns == y.end_ns && x.passes == y.passes;
      n++;
    }
  }
  CHECK_MSG(same && n == 70000, "merged on 3 threads: %zu rows, same %zu", n, same);
  hp_cursor_close(ca);
  hp_cursor_close(cb);
  hp_store_close(a);
  hp_store_close(b);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/.hubprof-scanpar-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  CHECK(mkdir(dir, 0700) == 0);
  char pq[600], db[600], lg[600];
  snprintf(pq, sizeof pq, "%s/s.parquet", dir);
  snprintf(db, sizeof db, "%s/s.db", dir);
  snprintf(lg, sizeof lg, "%s/s.log", dir);
  CHECK(hp_parquet_set_defaults(300, 0, 4, 0, 0) ==
        HP_OK); /* 2000 rows per process: 7 row groups in 1 file */
  CHECK(make_store(pq, "parquet", NDISP) == 0);
  CHECK(make_store(db, "rocpd", NDISP) == 0);
  CHECK(make_store(lg, "log", NDISP) == 0);
  check_store(pq, 1);
  check_store(db, 1);
  check_store(lg, 0);
  /* the three formats give one answer */
  hp_store *a = NULL, *b = NULL;
  if (hp_store_open(pq, NULL, HP_READ, &a) == HP_OK && hp_store_open(db, NULL, HP_READ, &b) == HP_OK) {
    ha_result *x = by_group(a, HA_BY_KERNEL, 3, 0), *y = by_group(b, HA_BY_KERNEL, 3, 0);
    CHECK(same_result(x, y));
    ha_result_free(x);
    ha_result_free(y);
  }
  hp_store_close(a);
  hp_store_close(b);
  check_merge();
  rm_tree(dir);
  return check_report("test_scan_par");
}
