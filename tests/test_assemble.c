/* Assembly pipeline tests (hubprof/assemble.h) without OpenCL: the damage policy (a damaged log taken with a
 * warning or refused with strict, a log with nothing complete skipped, a foreign file an error naming it),
 * progress reported up to the total, multiplex imputation (means per kernel, incomplete keys left out),
 * application replay (processes paired by command line whatever their start order, a counter only later runs
 * measured), a sampled run's "dispatch begun" rows (dropped, or kept for a dispatch that never ended), and
 * bad calls refused. Stores are written through the hub as the collector writes them. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void path_of(char *p, size_t n, const char *name) { snprintf(p, n, "%s/%s", dir, name); }

/* One process: `ndisp` dispatches of kernel `kernel` (grid 64), each with counter `counter` in pass `pass`
 * (pass 0: every other dispatch measures counter "a" in pass 1, the others "b" in pass 2, as multiplexing).
 */
static void write_proc(const char *name, int64_t pid, int64_t start, const char *command, const char *kernel,
                       int ndisp, const char *counter, uint32_t pass, double value) {
  char p[512];
  path_of(p, sizeof p, name);
  hp_store *s = NULL;
  hp_status st = hp_store_open(p, "log", HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  hp_write_metadata(s, "pass_plan", pass ? counter : "a;b");
  if (!pass) {
    hp_write_metadata(s, "replay", "multiplex");
    hp_write_metadata(s, "multiplex_policy", "kernel");
  }
  hp_node node = {.size = sizeof node, .id = 1, .hostname = "host"};
  hp_write_node(s, &node);
  hp_process pr = {
      .size = sizeof pr, .id = 1, .node_id = 1, .pid = pid, .start_ns = start, .command = command};
  hp_write_process(s, &pr);
  hp_kernel_symbol k = {.size = sizeof k, .id = 1, .name = kernel};
  hp_write_kernel_symbol(s, &k);
  hp_counter_info ci = {.size = sizeof ci, .id = 1, .name = pass ? counter : "a"};
  hp_write_counter_info(s, &ci);
  if (!pass) {
    ci.id = 2;
    ci.name = "b";
    hp_write_counter_info(s, &ci);
  }
  for (int i = 1; i <= ndisp; i++) {
    hp_dispatch d = {
        .size = sizeof d, .id = (uint64_t)i, .dispatch_id = (uint64_t)i, .process_id = 1, .kernel_id = 1};
    d.grid[0] = 64;
    hp_write_dispatch(s, &d);
    hp_counter_value v = {
        .size = sizeof v, .dispatch_id = (uint64_t)i, .counter_id = 1, .pass = pass, .value = value};
    if (!pass) { /* multiplexing: odd dispatches measure a (values 10, 30 …), even ones b (100, 300 …) */
      v.counter_id = i % 2 ? 1 : 2;
      v.pass = i % 2 ? 1 : 2;
      v.value = (i % 2 ? 10.0 : 100.0) * (double)(2 * ((i - 1) / 2) + 1);
    }
    hp_write_counter_value(s, &v);
  }
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
}

static char warned[4096];
static void on_warn(void *ctx, const char *line) {
  (void)ctx;
  size_t n = strlen(warned);
  snprintf(warned + n, sizeof warned - n, "%s\n", line);
}

static uint64_t last_done, last_total, calls;
static void on_progress(void *ctx, uint64_t done, uint64_t total) {
  (void)ctx;
  CHECK(done >= last_done);
  last_done = done;
  last_total = total;
  calls++;
}

/* Assemble `n` inputs (run numbers in runs, or NULL) into OUT; returns the status, stats filled. */
static hp_status assemble(const char *out_name, const char *const *names, const uint32_t *runs, size_t n,
                          hp_assemble_opts *o, hp_assemble_stats *stats) {
  warned[0] = '\0';
  hp_assembly *a = NULL;
  o->size = sizeof *o;
  o->warn = on_warn;
  hp_status st = hp_assembly_new(o, &a);
  CHECK_OK(st, (hp_store *)NULL);
  for (size_t i = 0; st == HP_OK && i < n; i++) {
    char p[512];
    path_of(p, sizeof p, names[i]);
    st = hp_assembly_add(a, p, runs ? runs[i] : 0);
  }
  if (st == HP_OK) {
    char p[512];
    path_of(p, sizeof p, out_name);
    hp_store *out = NULL;
    st = hp_store_open(p, "rocpd", HP_CREATE, &out);
    stats->size = sizeof *stats;
    if (st == HP_OK) st = hp_assembly_write(a, out, stats);
    if (st == HP_OK) st = hp_store_commit(out);
    if (st == HP_OK) CHECK(hp_assembly_write(a, out, stats) == HP_ERR_INVALID); /* once per assembly */
    hp_store_abort(out);
  }
  if (st != HP_OK)
    snprintf(warned + strlen(warned), sizeof warned - strlen(warned), "error: %s\n", hp_assembly_error(a));
  hp_assembly_free(a);
  return st;
}

static uint64_t count(const char *name, hp_table t) {
  char p[512];
  path_of(p, sizeof p, name);
  hp_store *s = NULL;
  uint64_t n = 0;
  if (hp_store_open(p, NULL, HP_READ, &s) == HP_OK) hp_store_count(s, t, &n);
  hp_store_close(s);
  return n;
}

static void test_damage_policy(void) {
  write_proc("one.log", 1, 10, "app", "k", 100, "c", 1, 1.0);
  write_proc("two.log", 2, 20, "app", "k", 100, "c", 1, 1.0);
  char p[512], q[512];
  path_of(p, sizeof p, "two.log");
  path_of(q, sizeof q, "cut.log");
  struct stat sb;
  CHECK(stat(p, &sb) == 0);
  CHECK(truncate(p, sb.st_size - 7) == 0); /* the last block cut: damaged, readable up to it */
  char head[200];                          /* a log cut inside its first block: nothing complete in it */
  path_of(p, sizeof p, "one.log");
  int fd = open(p, O_RDONLY);
  CHECK(fd >= 0 && read(fd, head, sizeof head) == (ssize_t)sizeof head);
  close(fd);
  fd = open(q, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, head, sizeof head) == (ssize_t)sizeof head);
  close(fd);
  hp_assemble_opts o = {.progress = on_progress};
  hp_assemble_stats st = {0};
  const char *in[] = {"one.log", "two.log", "cut.log"};
  hp_status s = assemble("lenient.db", in, NULL, 3, &o, &st);
  CHECK_MSG(s == HP_OK, "%s", warned);
  CHECK_MSG(strstr(warned, "two.log") && strstr(warned, "(taking what is complete)"), "%s", warned);
  CHECK_EQ_U64(st.merge.damaged_inputs, 1);
  CHECK_EQ_U64(st.skipped_inputs, 1);
  CHECK_MSG(strstr(warned, "cut.log") && strstr(warned, "(skipped: nothing complete in it)"), "%s", warned);
  CHECK(count("lenient.db", HP_TABLE_DISPATCH) >= 100);
  CHECK(calls >= 1 && last_done == last_total &&
        last_total == st.merge.rows_in[HP_TABLE_NODE] + st.merge.rows_in[HP_TABLE_PROCESS] +
                          st.merge.rows_in[HP_TABLE_KERNEL_SYMBOL] + st.merge.rows_in[HP_TABLE_COUNTER_INFO] +
                          st.merge.rows_in[HP_TABLE_DISPATCH] + st.merge.rows_in[HP_TABLE_COUNTER_VALUE] +
                          st.merge.rows_in[HP_TABLE_METADATA]);
  hp_assemble_opts strict = {.strict = 1};
  s = assemble("strict.db", in, NULL, 2, &strict, &st);
  CHECK(s == HP_ERR_TRUNCATED || s == HP_ERR_CORRUPT);
  CHECK_MSG(strstr(warned, "error: ") && strstr(warned, "two.log"), "%s", warned);
  CHECK(count("strict.db", HP_TABLE_DISPATCH) == 0);
  path_of(p, sizeof p, "foreign.txt");
  FILE *f = fopen(p, "w");
  if (f) {
    fputs("not a profile at all\n", f);
    fclose(f);
  }
  const char *bad[] = {"one.log", "foreign.txt"};
  hp_assemble_opts lenient = {0};
  s = assemble("foreign.db", bad, NULL, 2, &lenient, &st);
  CHECK(s == HP_ERR_FORMAT);
  CHECK_MSG(strstr(warned, "foreign.txt"), "%s", warned);
}

static void test_imputation(void) {
  write_proc("mux.log", 7, 70, "app", "k", 4, NULL, 0, 0);
  write_proc("mux2.log", 8, 80, "app", "lonely", 1, NULL, 0, 0); /* 1 dispatch: covers pass 1 only */
  hp_assemble_opts o = {.impute = HP_IMPUTE_KERNEL};
  hp_assemble_stats st = {0};
  const char *in[] = {"mux.log", "mux2.log"};
  CHECK(assemble("mux.db", in, NULL, 2, &o, &st) == HP_OK);
  CHECK_EQ_U64(st.measured_values, 4); /* k's cold a=10 is replaced by its warm sibling's 30 */
  CHECK_EQ_U64(st.imputed_values, 5);
  CHECK_EQ_U64(st.keys, 2);
  CHECK_EQ_U64(st.incomplete_keys, 1);
  CHECK_MSG(strstr(warned, "kernel lonely (pid 8): 1 dispatch covers 1 of 2 passes"), "%s", warned);
  char p[512];
  path_of(p, sizeof p, "mux.db");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &s), s);
  hp_cursor *c = NULL;
  double sum = 0;
  int n = 0;
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
    hp_counter_value v = {.size = sizeof v};
    while (hp_cursor_next(c, &v) == HP_OK)
      if (v.imputed) {
        n++;
        sum += v.value;
        /* the pass that would have measured it; the cold dispatch 1's a keeps the pass that measured it */
        CHECK(v.pass == (v.dispatch_id % 2 ? 2u : 1u) || (v.dispatch_id == 1 && v.pass == 1));
      }
    hp_cursor_close(c);
  }
  CHECK_EQ_U64(n, 5);
  /* b: median 200 twice; a: 30 three times (10 is cold: left out, and replaced by 30 on its own dispatch) */
  CHECK_MSG(sum == 2 * 200.0 + 3 * 30.0, "sum %g", sum);
  const char *raw = hp_store_metadata(s, "multiplex_cold_raw"); /* the cold reading kept apart */
  CHECK_MSG(
      raw &&
          strstr(raw, "\"kernel\":\"k\",\"dispatch_id\":1,\"counter\":\"a\",\"raw\":10,\"estimate\":30}") &&
          !strstr(raw, "lonely"),
      "%s", raw ? raw : "(none)");
  const char *js = hp_store_metadata(s, "multiplex_incomplete");
  CHECK(js && strstr(js, "\"kernel\":\"lonely\"") && !strstr(js, "\"kernel\":\"k\""));
  CHECK(hp_store_metadata(s, "multiplex_keys") && !strcmp(hp_store_metadata(s, "multiplex_keys"), "2"));
  hp_store_close(s);
}

static void test_replay(void) {
  /* run 0: A then B measure c1; run 1: B then A (swapped) measure c2; run 2: only A, and a stranger */
  write_proc("r0a.log", 100, 1000, "progA --x", "ka", 3, "c1", 1, 1.0);
  write_proc("r0b.log", 101, 2000, "progB", "kb", 2, "c1", 1, 2.0);
  write_proc("r1b.log", 200, 500, "progB", "kb", 2, "c2", 1, 20.0);
  write_proc("r1a.log", 201, 600, "progA --x", "ka", 3, "c2", 1, 10.0);
  write_proc("r2a.log", 300, 100, "progA --x", "ka", 3, "c3", 1, 100.0);
  write_proc("r2c.log", 301, 50, "progC", "kc", 5, "c3", 1, 7.0);
  const char *in[] = {"r0a.log", "r0b.log", "r1b.log", "r1a.log", "r2a.log", "r2c.log"};
  const uint32_t runs[] = {0, 0, 1, 1, 2, 2};
  hp_assemble_opts o = {.match = HP_MATCH_GRID};
  hp_assemble_stats st = {0};
  CHECK(assemble("replay.db", in, runs, 6, &o, &st) == HP_OK);
  CHECK_EQ_U64(st.runs, 3);
  CHECK_EQ_U64(st.unmatched_processes, 2); /* progC of run 2, and the first run's progB missing from run 2 */
  CHECK_EQ_U64(st.unmatched_dispatches, 5 + 2);
  CHECK_MSG(strstr(warned, "pass 3: process 301 'progC' has no process of the same program in the first run"),
            "%s", warned);
  CHECK_MSG(strstr(warned, "pass 3: the first run's process 101 'progB'"), "%s", warned);
  CHECK_EQ_U64(count("replay.db", HP_TABLE_DISPATCH), 5);
  CHECK_EQ_U64(count("replay.db", HP_TABLE_COUNTER_INFO), 3);
  CHECK_EQ_U64(count("replay.db", HP_TABLE_COUNTER_VALUE), 5 + 5 + 3);
  char p[512];
  path_of(p, sizeof p, "replay.db");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &s), s);
  CHECK(hp_store_metadata(s, "pass_plan") && !strcmp(hp_store_metadata(s, "pass_plan"), "c1;c2;c3"));
  CHECK(hp_store_metadata(s, "replay") && !strcmp(hp_store_metadata(s, "replay"), "application"));
  hp_cursor *c = NULL;
  double by_pass[4] = {0};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
    hp_counter_value v = {.size = sizeof v};
    while (hp_cursor_next(c, &v) == HP_OK)
      if (v.pass >= 1 && v.pass <= 3) by_pass[v.pass] += v.value;
    hp_cursor_close(c);
  }
  CHECK_MSG(by_pass[1] == 3 * 1.0 + 2 * 2.0 && by_pass[2] == 3 * 10.0 + 2 * 20.0 && by_pass[3] == 3 * 100.0,
            "%g %g %g", by_pass[1], by_pass[2], by_pass[3]);
  uint32_t passes[8] = {0};
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    hp_dispatch d = {.size = sizeof d};
    while (hp_cursor_next(c, &d) == HP_OK)
      if (d.passes < 8) passes[d.passes]++;
    hp_cursor_close(c);
  }
  CHECK(passes[3] == 3 && passes[2] == 2); /* A's dispatches in 3 passes, B's in 2 */
  hp_store_close(s);
  /* replay and a given imputation exclude each other */
  hp_assemble_opts bad = {.impute = HP_IMPUTE_KERNEL};
  CHECK(assemble("bad.db", in, runs, 2 + 1, &bad, &st) == HP_ERR_INVALID);
}

static void test_bad_calls(void) {
  hp_assembly *a = NULL;
  hp_assemble_opts o = {.size = sizeof o, .impute = (hp_impute)9};
  CHECK(hp_assembly_new(&o, &a) == HP_ERR_INVALID && !a);
  o.size = 2;
  CHECK(hp_assembly_new(&o, &a) == HP_ERR_INVALID);
  CHECK(hp_assembly_new(NULL, NULL) == HP_ERR_INVALID);
  CHECK(hp_assembly_new(NULL, &a) == HP_OK && a);
  CHECK(hp_assembly_add(a, NULL, 0) == HP_ERR_INVALID);
  CHECK(hp_assembly_add(a, "/nonexistent/x.log", 0) == HP_ERR_NOT_FOUND);
  CHECK(strstr(hp_assembly_error(a), "/nonexistent/x.log") != NULL);
  CHECK(hp_assembly_write(a, NULL, NULL) == HP_ERR_INVALID);
  hp_assembly_free(a);
  hp_assembly_free(NULL);
}

/* Open file descriptors of this process. */
static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  if (!d) return -1;
  while (readdir(d))
    n++;
  closedir(d);
  return n;
}

/* A plain merge holds one input open at a time: adding inputs leaves none open, the merge opens each while
 * it reads it (and says which one it cannot open again). */
static void test_streamed_inputs(void) {
  enum { N = 8 };
  char names[N][32];
  const char *list[N];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "stream%d.log", i);
    list[i] = names[i];
    write_proc(names[i], 100 + i, 1000 + i, "app", "k", 5, "c", 1, 1.0);
  }
  hp_assembly *a = NULL;
  hp_assemble_opts o = {.size = sizeof o};
  CHECK_OK(hp_assembly_new(&o, &a), (hp_store *)NULL);
  int before = open_fds();
  for (int i = 0; i < N; i++) {
    char p[512];
    path_of(p, sizeof p, names[i]);
    CHECK_OK(hp_assembly_add(a, p, 0), (hp_store *)NULL);
  }
  CHECK_EQ_U64(open_fds(), before); /* every input added is closed again */
  hp_assembly_free(a);
  hp_assemble_stats stats;
  CHECK_OK(assemble("stream.db", list, NULL, N, &o, &stats), (hp_store *)NULL);
  CHECK_EQ_U64(stats.merge.inputs, N);
  CHECK_EQ_U64(count("stream.db", HP_TABLE_DISPATCH), 5 * N);
  CHECK_EQ_U64(count("stream.db", HP_TABLE_PROCESS), N);
  /* an input gone between add and write: the write fails naming it */
  CHECK_OK(hp_assembly_new(&o, &a), (hp_store *)NULL);
  char p[512];
  for (int i = 0; i < 2; i++) {
    path_of(p, sizeof p, names[i]);
    CHECK_OK(hp_assembly_add(a, p, 0), (hp_store *)NULL);
  }
  CHECK(unlink(p) == 0);
  char outp[512];
  path_of(outp, sizeof outp, "stream-gone.db");
  hp_store *out = NULL;
  CHECK_OK(hp_store_open(outp, "rocpd", HP_CREATE, &out), out);
  CHECK(hp_assembly_write(a, out, NULL) != HP_OK);
  CHECK(strstr(hp_assembly_error(a), names[1]) != NULL);
  hp_store_abort(out);
  hp_assembly_free(a);
  /* an input written again between add and write: the write reads the file as it is then (scanned anew),
   * not by what the add found */
  CHECK_OK(hp_assembly_new(&o, &a), (hp_store *)NULL);
  path_of(p, sizeof p, names[0]);
  CHECK_OK(hp_assembly_add(a, p, 0), (hp_store *)NULL);
  unlink(p);
  write_proc(names[0], 100, 1000, "app", "k", 9, "c", 1, 1.0);
  path_of(outp, sizeof outp, "stream-again.db");
  CHECK_OK(hp_store_open(outp, "rocpd", HP_CREATE, &out), out);
  CHECK_OK(hp_assembly_write(a, out, NULL), out);
  CHECK_OK(hp_store_commit(out), out);
  hp_store_abort(out);
  hp_assembly_free(a);
  CHECK_EQ_U64(count("stream-again.db", HP_TABLE_DISPATCH), 9);
}

/* A sampled process killed while dispatch 2 ran: dispatch 1's "dispatch begun" row is dropped (its own row
 * follows), dispatch 2's is kept as the incomplete dispatch with its samples; an input that is not a sampled
 * run keeps its untimed rows as they are, counted as incomplete too: dispatches its killed process launched
 * and was not seen to end (the rows a log's reader adds from its launch file, docs/formats/log.md). */
static void test_begun_rows(void) {
  char p[512];
  path_of(p, sizeof p, "sampled.log");
  hp_store *s = NULL;
  hp_status st = hp_store_open(p, "log", HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) return;
  hp_write_metadata(s, "sample_period_ns", "1000000");
  hp_node node = {.size = sizeof node, .id = 1, .hostname = "host"};
  hp_write_node(s, &node);
  hp_process pr = {.size = sizeof pr, .id = 1, .node_id = 1, .pid = 77, .start_ns = 1, .command = "killed"};
  hp_write_process(s, &pr); /* no end: it died */
  hp_kernel_symbol k = {.size = sizeof k, .id = 1, .name = "k"};
  hp_write_kernel_symbol(s, &k);
  hp_dispatch b1 = {
      .size = sizeof b1, .id = 1, .dispatch_id = 1, .process_id = 1, .kernel_id = 1, .enqueue_ns = 3};
  hp_dispatch b2 = b1, own1 = b1;
  b2.id = b2.dispatch_id = 2;
  b2.enqueue_ns = 20;
  own1.start_ns = 5, own1.end_ns = 9, own1.passes = 1;
  hp_write_dispatch(s, &b1); /* begun rows: no device times, passes 0 */
  hp_write_dispatch(s, &b2);
  hp_write_dispatch(s, &own1);
  for (uint64_t i = 1; i <= 5; i++) {
    hp_pc_sample ps = {.size = sizeof ps,
                       .id = i,
                       .dispatch_id = i <= 3 ? 1 : 2,
                       .offset = i,
                       .timestamp_ns = 5 + (int64_t)i};
    hp_write_pc_sample(s, &ps);
  }
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  write_proc("plain.log", 78, 2, "app", "k", 2, "c", 1, 1.0); /* untimed, passes 0, not sampled: kept */
  hp_assemble_opts o = {0};
  hp_assemble_stats stats = {0};
  const char *in[] = {"sampled.log", "plain.log"};
  CHECK(assemble("begun.db", in, NULL, 2, &o, &stats) == HP_OK);
  CHECK_MSG(stats.incomplete_dispatches == 3 && stats.unfinished_dispatches == 4,
            "incomplete %llu, unfinished %llu", (unsigned long long)stats.incomplete_dispatches,
            (unsigned long long)stats.unfinished_dispatches);
  CHECK(strstr(warned, "cut short): 2 dispatches kept (1 running when it died: no end time, samples kept)"));
  CHECK_MSG(strstr(warned,
                   "cut short): 2 dispatches kept (2 launched and not seen to end before it died: no end "
                   "time), its end time unknown"),
            "%s", warned);
  CHECK(count("begun.db", HP_TABLE_DISPATCH) == 4 && count("begun.db", HP_TABLE_PC_SAMPLE) == 5);
  path_of(p, sizeof p, "begun.db");
  hp_store *r = NULL;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &r), r);
  hp_cursor *c = NULL;
  uint64_t inc_row = 0, ninc = 0, timed = 0;
  if (r && hp_cursor_open(r, HP_TABLE_DISPATCH, &c) == HP_OK) {
    hp_dispatch d = {.size = sizeof d};
    while (hp_cursor_next(c, &d) == HP_OK) {
      if (d.end_ns) timed += d.start_ns == 5 && d.end_ns == 9;
      if (!d.end_ns && d.enqueue_ns == 20) inc_row = d.id, ninc++;
    }
    hp_cursor_close(c);
  }
  CHECK(timed == 1 && ninc == 1);
  uint64_t on_inc = 0;
  if (r && hp_cursor_open(r, HP_TABLE_PC_SAMPLE, &c) == HP_OK) {
    hp_pc_sample ps = {.size = sizeof ps};
    while (hp_cursor_next(c, &ps) == HP_OK)
      on_inc += ps.dispatch_id == inc_row;
    hp_cursor_close(c);
  }
  CHECK(on_inc == 2);
  hp_store_close(r);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/hubprof-test-assemble-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_damage_policy();
  test_imputation();
  test_replay();
  test_bad_calls();
  test_streamed_inputs();
  test_begun_rows();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return check_report("test_assemble");
}
