/* Merge tests: 100 per-process logs (as the collector writes them) into one rocpd store with exact row
 * counts and consistent references; processes with equal pids on two hosts stay apart; passes stay apart;
 * a mixed rocpd + log merge; a damaged log merges up to its damage; a failed merge leaves no output. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/hub.h"

#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPROC 100
#define NDISP 40
#define NKERN 3

static char dir[256];

static const char *kernels[NKERN] = {"vector_add", "saxpy", "histogram"};

/* One per-process log: host `host`, pid, NDISP dispatches over NKERN kernels, 2 counters measured in
 * passes 1 and 2, one region, metadata. Ids are local to the file, as in a real per-process log. */
static void write_process_log(const char *path, const char *host, int pid, const char *format) {
  hp_store *s;
  hp_status st = hp_store_open(path, format, HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  hp_node node = {sizeof node, 1, host, "machine-id-of-", "Linux", "6.1", "#1", "x86_64"};
  node.machine_id = host;
  hp_write_node(s, &node);
  hp_process p = {.size = sizeof p,
                  .id = 1,
                  .node_id = 1,
                  .pid = pid,
                  .ppid = 1,
                  .rank = pid % 4,
                  .start_ns = 1000 + pid,
                  .command = "./app --size 1024"};
  hp_write_process(s, &p);
  p.end_ns = 900000000 + pid; /* rewritten at exit, as the collector does */
  hp_write_process(s, &p);
  for (int t = 1; t <= 2; t++) {
    hp_thread th = {sizeof th, (uint64_t)t, 1, pid * 10 + t, 0, 0, t == 1 ? "main" : "worker"};
    hp_write_thread(s, &th);
  }
  hp_agent a = {.size = sizeof a,
                .id = 7,
                .node_id = 1,
                .type = HP_AGENT_CPU,
                .device_index = 0,
                .vendor = "pocl",
                .name = "cpu-x86-64",
                .compute_units = 2};
  hp_write_agent(s, &a);
  hp_queue q = {sizeof q, 3, 1, 7, "queue0"};
  hp_write_queue(s, &q);
  hp_code_object co = {sizeof co, 5, 1, 7, "program://abc", 0, 0, "", 0, "", "", ""};
  hp_write_code_object(s, &co);
  for (int k = 0; k < NKERN; k++) {
    hp_kernel_symbol ks = {.size = sizeof ks,
                           .id = (uint64_t)(k + 10),
                           .code_object_id = 5,
                           .name = kernels[k],
                           .display_name = kernels[k]};
    hp_write_kernel_symbol(s, &ks);
  }
  const char *cn[2] = {"task-clock", "page-faults"};
  for (int c = 0; c < 2; c++) {
    hp_counter_info ci = {sizeof ci, (uint64_t)(c + 20), 7, cn[c], "", "sw", c ? "count" : "ns", ""};
    hp_write_counter_info(s, &ci);
  }
  for (int d = 1; d <= NDISP; d++) {
    hp_dispatch di = {.size = sizeof di,
                      .id = (uint64_t)d,
                      .dispatch_id = (uint64_t)d,
                      .process_id = 1,
                      .thread_id = (uint64_t)(d % 2 + 1),
                      .agent_id = 7,
                      .queue_id = 3,
                      .kernel_id = (uint64_t)(d % NKERN + 10),
                      .grid = {1024, 1, 1},
                      .workgroup = {64, 1, 1},
                      .start_ns = 10000 * d,
                      .end_ns = 10000 * d + 100 * (d % NKERN + 1),
                      .enqueue_ns = 10000 * d - 50,
                      .passes = 2};
    hp_write_dispatch(s, &di);
    for (int c = 0; c < 2; c++) {
      hp_counter_value v = {.size = sizeof v,
                            .dispatch_id = (uint64_t)d,
                            .counter_id = (uint64_t)(c + 20),
                            .pass = (uint32_t)(c + 1),
                            .value = (double)(pid * 1000 + d)};
      hp_write_counter_value(s, &v);
    }
  }
  hp_region r = {sizeof r, 1, 1, 1, "setup", "host", 10, 20};
  hp_write_region(s, &r);
  hp_write_metadata(s, "mode", "trace");
  hp_write_metadata(s, "tool_version", "0.1.0");
  st = hp_store_close(s);
  CHECK_MSG(st == HP_OK, "%s: %s", path, hp_status_str(st));
}

static uint64_t count(hp_store *s, hp_table t) {
  uint64_t n = 0;
  hp_store_count(s, t, &n);
  return n;
}

static void merge_100_logs(void) {
  char paths[NPROC][300];
  hp_store *in[NPROC];
  for (int i = 0; i < NPROC; i++) {
    snprintf(paths[i], sizeof paths[i], "%s/hubprof-host%d-%d.log", dir, i % 2, 4000 + i / 2);
    /* two hosts, pids 4000..4049 on each: the same pid on both hosts must stay two processes */
    write_process_log(paths[i], i % 2 ? "node-b" : "node-a", 4000 + i / 2, "log");
  }
  for (int i = 0; i < NPROC; i++) {
    hp_status st = hp_store_open(paths[i], NULL, HP_READ, &in[i]);
    CHECK_OK(st, in[i]);
  }
  char out_path[300];
  snprintf(out_path, sizeof out_path, "%s/merged.db", dir);
  hp_store *out;
  CHECK_OK(hp_store_open(out_path, "rocpd", HP_CREATE, &out), out);
  hp_merge_stats stats = {.size = sizeof stats};
  hp_status st = hp_merge(out, in, NPROC, &stats);
  CHECK_OK(st, out);
  CHECK_OK(hp_store_close(out), (hp_store *)NULL);
  for (int i = 0; i < NPROC; i++)
    hp_store_close(in[i]);
  CHECK_EQ_U64(stats.inputs, NPROC);
  CHECK_EQ_U64(stats.rows_in[HP_TABLE_DISPATCH], NPROC * NDISP);

  hp_store *m;
  CHECK_OK(hp_store_open(out_path, NULL, HP_READ, &m), m);
  CHECK_STR(hp_store_format(m), "rocpd");
  CHECK_EQ_U64(count(m, HP_TABLE_NODE), 2);
  CHECK_EQ_U64(count(m, HP_TABLE_PROCESS), NPROC);
  CHECK_EQ_U64(count(m, HP_TABLE_THREAD), 2 * NPROC);
  CHECK_EQ_U64(count(m, HP_TABLE_AGENT), 2); /* one device per host */
  CHECK_EQ_U64(count(m, HP_TABLE_QUEUE), NPROC);
  CHECK_EQ_U64(count(m, HP_TABLE_CODE_OBJECT), NPROC);
  CHECK_EQ_U64(count(m, HP_TABLE_KERNEL_SYMBOL), NKERN);
  CHECK_EQ_U64(count(m, HP_TABLE_DISPATCH), NPROC * NDISP);
  CHECK_EQ_U64(count(m, HP_TABLE_COUNTER_INFO), 2 * 2); /* per agent */
  CHECK_EQ_U64(count(m, HP_TABLE_COUNTER_VALUE), NPROC * NDISP * 2);
  CHECK_EQ_U64(count(m, HP_TABLE_REGION), NPROC);
  CHECK_STR(hp_store_metadata(m, "mode") ? hp_store_metadata(m, "mode") : "(null)", "trace");

  /* processes: ended (the later row won), distinct ids, 50 pids on each of two nodes */
  hp_cursor *c;
  int per_node[3] = {0}, ended = 0;
  CHECK_OK(hp_cursor_open(m, HP_TABLE_PROCESS, &c), m);
  hp_process p = {.size = sizeof p};
  while (hp_cursor_next(c, &p) == HP_OK) {
    if (p.node_id >= 1 && p.node_id <= 2) per_node[p.node_id]++;
    ended += p.end_ns == 900000000 + p.pid;
  }
  hp_cursor_close(c);
  CHECK_EQ_U64(per_node[1], NPROC / 2);
  CHECK_EQ_U64(per_node[2], NPROC / 2);
  CHECK_EQ_U64(ended, NPROC);

  /* every dispatch: unique row id, references to existing rows, its collector dispatch id kept */
  uint64_t ndisp = 0, bad_ref = 0, sum_dispatch_id = 0, max_id = 0;
  uint64_t kernel_calls[NKERN + 1] = {0};
  CHECK_OK(hp_cursor_open(m, HP_TABLE_DISPATCH, &c), m);
  hp_dispatch d = {.size = sizeof d};
  char *seen = calloc(NPROC * NDISP + 1, 1);
  while (hp_cursor_next(c, &d) == HP_OK) {
    ndisp++;
    if (d.id == 0 || d.id > NPROC * NDISP || seen[d.id])
      bad_ref++;
    else
      seen[d.id] = 1;
    if (d.kernel_id < 1 || d.kernel_id > NKERN)
      bad_ref++;
    else
      kernel_calls[d.kernel_id]++;
    if (d.process_id < 1 || d.process_id > NPROC || d.agent_id < 1 || d.agent_id > 2 || d.queue_id < 1 ||
        d.queue_id > NPROC || d.thread_id < 1 || d.thread_id > 2 * NPROC)
      bad_ref++;
    sum_dispatch_id += d.dispatch_id;
    if (d.id > max_id) max_id = d.id;
  }
  hp_cursor_close(c);
  free(seen);
  CHECK_EQ_U64(ndisp, NPROC * NDISP);
  CHECK_EQ_U64(bad_ref, 0);
  CHECK_EQ_U64(sum_dispatch_id, (uint64_t)NPROC * NDISP * (NDISP + 1) / 2);
  for (int k = 1; k <= NKERN; k++)
    CHECK(kernel_calls[k] > 0);

  /* counter values: passes kept, values per dispatch intact (pass 1 and pass 2 are different counters) */
  uint64_t per_pass[3] = {0};
  double sum = 0, want = 0;
  CHECK_OK(hp_cursor_open(m, HP_TABLE_COUNTER_VALUE, &c), m);
  hp_counter_value v = {.size = sizeof v};
  while (hp_cursor_next(c, &v) == HP_OK) {
    if (v.pass <= 2) per_pass[v.pass]++;
    sum += v.value;
  }
  hp_cursor_close(c);
  for (int i = 0; i < NPROC; i++)
    for (int dd = 1; dd <= NDISP; dd++)
      want += 2.0 * ((4000 + i / 2) * 1000 + dd);
  CHECK_EQ_U64(per_pass[1], NPROC * NDISP);
  CHECK_EQ_U64(per_pass[2], NPROC * NDISP);
  CHECK_MSG(sum == want, "counter sum %.0f != %.0f", sum, want);
  hp_store_close(m);

  /* merging the merged store with one more rocpd input (mixed formats) into a log, and back */
  char extra[300], out2[300];
  snprintf(extra, sizeof extra, "%s/extra.db", dir);
  snprintf(out2, sizeof out2, "%s/merged2.log", dir);
  write_process_log(extra, "node-c", 4000, "rocpd");
  hp_store *in2[2];
  CHECK_OK(hp_store_open(out_path, NULL, HP_READ, &in2[0]), in2[0]);
  CHECK_OK(hp_store_open(extra, NULL, HP_READ, &in2[1]), in2[1]);
  CHECK_OK(hp_store_open(out2, "log", HP_CREATE, &out), out);
  CHECK_OK(hp_merge(out, in2, 2, NULL), out);
  CHECK_OK(hp_store_close(out), (hp_store *)NULL);
  hp_store_close(in2[0]);
  hp_store_close(in2[1]);
  CHECK_OK(hp_store_open(out2, NULL, HP_READ, &m), m);
  CHECK_EQ_U64(count(m, HP_TABLE_NODE), 3);
  CHECK_EQ_U64(count(m, HP_TABLE_PROCESS), NPROC + 1);
  CHECK_EQ_U64(count(m, HP_TABLE_KERNEL_SYMBOL), NKERN);
  CHECK_EQ_U64(count(m, HP_TABLE_DISPATCH), (NPROC + 1) * NDISP);
  CHECK_EQ_U64(count(m, HP_TABLE_COUNTER_VALUE), (NPROC + 1) * NDISP * 2);
  hp_store_close(m);

  for (int i = 0; i < NPROC; i++)
    unlink(paths[i]);
  unlink(out_path);
  unlink(extra);
  unlink(out2);
}

/* A log cut in its middle merges up to the damage; the merge reports it in stats. */
static void merge_damaged(void) {
  char path[300], out_path[300];
  snprintf(path, sizeof path, "%s/damaged.log", dir);
  snprintf(out_path, sizeof out_path, "%s/damaged-merged.db", dir);
  write_process_log(path, "node-a", 1, "log");
  struct stat sb;
  CHECK(stat(path, &sb) == 0);
  /* find the end of the used part: the last non-zero byte */
  int fd = open(path, O_RDONLY);
  unsigned char *bytes = malloc((size_t)sb.st_size);
  CHECK(read(fd, bytes, (size_t)sb.st_size) == sb.st_size);
  close(fd);
  off_t used = sb.st_size;
  while (used > 0 && bytes[used - 1] == 0)
    used--;
  free(bytes);
  CHECK(truncate(path, used - 3) == 0);
  hp_store *in, *out;
  CHECK_OK(hp_store_open(path, NULL, HP_READ, &in), in);
  CHECK(hp_store_damage(in, NULL) != HP_OK);
  CHECK_OK(hp_store_open(out_path, "rocpd", HP_CREATE, &out), out);
  hp_merge_stats stats = {.size = sizeof stats};
  CHECK_OK(hp_merge(out, &in, 1, &stats), out);
  CHECK_EQ_U64(stats.damaged_inputs, 1);
  CHECK_OK(hp_store_close(out), (hp_store *)NULL);
  hp_store_close(in);
  CHECK(stat(out_path, &sb) == 0);
  unlink(path);
  unlink(out_path);
}

/* An input that cannot be read fails the merge, and the aborted output leaves nothing. */
static void merge_failure_leaves_nothing(void) {
  char out_path[300];
  snprintf(out_path, sizeof out_path, "%s/never.db", dir);
  hp_store *out;
  CHECK_OK(hp_store_open(out_path, "rocpd", HP_CREATE, &out), out);
  hp_store *bad = NULL;
  hp_status st = hp_store_open("/nonexistent/x.log", NULL, HP_READ, &bad);
  CHECK(st == HP_ERR_NOT_FOUND);
  CHECK(strstr(hp_store_error(bad), "/nonexistent/x.log") != NULL);
  hp_store_abort(bad);
  CHECK(hp_merge(out, NULL, 0, NULL) == HP_OK); /* zero inputs is a valid, empty merge */
  hp_store_abort(out);
  struct stat sb;
  CHECK(stat(out_path, &sb) != 0);
}

/* A caller compiled with an older, smaller hp_merge_stats gets what its size covers and nothing more. */
static void merge_old_stats(void) {
  char in_path[300], out_path[300];
  snprintf(in_path, sizeof in_path, "%s/old-stats.log", dir);
  snprintf(out_path, sizeof out_path, "%s/old-stats.db", dir);
  write_process_log(in_path, "node-a", 7, "log");
  struct {
    uint32_t size;
    uint64_t inputs;
    uint64_t rows_in[HP_TABLE_SLOTS];
    uint64_t guard;
  } old = {offsetof(hp_merge_stats, rows_out), 0, {0}, 0x5a5a5a5a5a5a5a5aULL};
  hp_store *in, *out;
  CHECK_OK(hp_store_open(in_path, NULL, HP_READ, &in), in);
  CHECK_OK(hp_store_open(out_path, "rocpd", HP_CREATE, &out), out);
  CHECK_OK(hp_merge(out, &in, 1, (hp_merge_stats *)&old), out);
  CHECK_OK(hp_store_close(out), (hp_store *)NULL);
  hp_store_close(in);
  CHECK_EQ_U64(old.inputs, 1);
  CHECK_EQ_U64(old.rows_in[HP_TABLE_DISPATCH], NDISP);
  CHECK_EQ_U64(old.guard, 0x5a5a5a5a5a5a5a5aULL);
  unlink(in_path);
  unlink(out_path);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/hubprof-merge-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  mkdir(dir, 0700);
  merge_100_logs();
  merge_damaged();
  merge_failure_leaves_nothing();
  merge_old_stats();
  rmdir(dir);
  return check_report("test_merge");
}
