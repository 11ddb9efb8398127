/* The collector's environment variables, all declared in ONE table (as LTTng-UST does) and parsed once.
 * It must never print, allocate or fail loudly: a bad value disables tracing with a reason for the caller. */
/* SPDX-License-Identifier: MIT */
#include "env.h"

#include <stdlib.h>
#include <string.h>

/* Every variable the collector reads. docs/collector.md documents the same list. */
const hpc_env_var hpc_env_vars[] = {
    {"HUBPROF_OUTPUT_DIR", NULL,
     "directory for the per-process logs hubprof-<host>-<pid>.log; unset: collector disabled"},
    {"HUBPROF_MODE", "trace",
     "collection mode: \"trace\" (lite kernel trace) or \"profile\" (counters, kernel replay)"},
    {"HUBPROF_DEBUG", "0", "1: diagnostics on stderr (setup, per-process summary at exit)"},
    {"HUBPROF_PENDING", "262144",
     "most dispatches a thread keeps pending (enqueued, not harvested) before the oldest are written without "
     "device times; rounded up to a power of two, at least 16"},
    {"HUBPROF_HARVEST_MS", "20",
     "trace: period of the background harvester in milliseconds (1 to 1000): a completed dispatch is in the "
     "log within about this time whatever the application does next"},
    {"HUBPROF_HARVESTER", "auto",
     "trace: when the background harvester thread runs: auto (once the process has a second thread or a "
     "queue on a device that completes work on its own; a process with one thread on PoCL's basic device "
     "harvests at sync points), thread (always: the HUBPROF_HARVEST_MS bound everywhere) or sync (never: "
     "sync points, full rings and exits only)"},
    {"HUBPROF_PLAN", NULL,
     "profile: the counter plan, passes separated by ';', counters by ',' (what hc_plan_format writes)"},
    {"HUBPROF_PASS", "0",
     "profile: 0 = replay every dispatch once per pass of the plan (kernel replay); k = this run measures "
     "pass k of an application replay (the plan holds that pass only)"},
    {"HUBPROF_MULTIPLEX", NULL,
     "profile: iteration multiplexing instead of kernel replay: every dispatch runs once and measures one "
     "pass "
     "of the plan, rotating over the dispatches of the same \"kernel\" or the same \"launch\" (kernel + "
     "global "
     "and work-group sizes); unset: kernel replay"},
    {"HUBPROF_PROVIDER", "perf", "profile: counter provider (cupti: CUDA counters, prov_cuda_range.c)"},
    {"HUBPROF_SHADOW", "host",
     "profile: where buffers are saved before pass 1: host (read/write into a reused host pool) or device "
     "(copies into reused buffers of the same context)"},
    {"HUBPROF_TEST_SKIP_RESTORE", "0",
     "test hook: 1 = never restore buffers between passes (results then differ; proves the tests' check)"},
    {"HUBPROF_START_PAUSED", "0",
     "1: start with collection off (dispatches forwarded untouched) until the application calls "
     "hubprof_start() (include/hubprof/api.h)"},
    {"HUBPROF_TEST_FAIL_PASS", "0",
     "test hook: k >= 2 = pass k of the first replayed dispatch fails to enqueue (after its restore; the "
     "dispatch is run once more and replay disabled)"},
    {"HUBPROF_KERNEL", NULL,
     "selection: POSIX extended regexes, one per line; only dispatches of a kernel whose name one of them "
     "matches are collected (hubprof trace|profile --kernel)"},
    {"HUBPROF_KERNEL_EXCLUDE", NULL,
     "selection: regexes, one per line; dispatches of a kernel whose name one of them matches are not "
     "collected (--kernel-exclude)"},
    {"HUBPROF_DISPATCH_RANGE", NULL,
     "selection: ranges A-B, A-, -B or N (1-based, inclusive; \"kernel:\" first: numbered per kernel name), "
     "one per line, of the dispatches that passed the other filters (--dispatch-range)"},
    {"HUBPROF_REGION", NULL,
     "selection: region names, one per line; only dispatches made while the thread is inside a region of "
     "one of these names are collected (--region)"},
    {"HUBPROF_API", "0",
     "1: also record every OpenCL call the collector intercepts (regions of category \"api\") and every "
     "transfer command (memory_copy rows) (hubprof trace|profile|sample --api)"},
    {"HUBPROF_CODE", "auto",
     "which program code the store keeps besides each program's identity and build options: none, source "
     "(the sources the application gave) or all (sources and binaries, which PoCL compiles once more to "
     "give: --code); auto = source when PC sampling (HUBPROF_SAMPLE_PERIOD_US), else none"},
    /* Read, never set: the MPI rank as launchers publish it (the first one set wins). */
    {"OMPI_COMM_WORLD_RANK", NULL, "MPI rank (Open MPI)"},
    {"PMI_RANK", NULL, "MPI rank (MPICH, Intel MPI)"},
    {"PMIX_RANK", NULL, "MPI rank (PMIx launchers)"},
    {"SLURM_PROCID", NULL, "task rank (Slurm srun)"},
    /* Read by wtrack.c itself (not indexed below). */
    {"HUBPROF_WTRACK", "auto",
     "profile: write tracking on devices that keep buffers in host memory (pages saved when first written, "
     "only they restored): auto (where cheaper than the full save), on (wherever possible) or off"},
    {"HUBPROF_TEST_WTRACK_REFUSE", "0",
     "test hook: 1 = the write-tracking probe fails (the full save is used)"},
    /* Read, never set (src/common/hu_launch.c): the job's size, node-local rank and id, stored per process */
    {"OMPI_COMM_WORLD_SIZE", NULL, "ranks in the job (Open MPI; also PMI_SIZE, SLURM_NTASKS)"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", NULL,
     "rank on this node (Open MPI; also MPI_LOCALRANKID, PMI_LOCAL_RANK, SLURM_LOCALID)"},
    {"SLURM_JOB_ID", NULL,
     "job id (Slurm; also PBS_JOBID, LSB_JOBID, PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid)"},
    {"HUBPROF_HOSTNAME", NULL,
     "the host name to record and to put in log names instead of gethostname's (containers or tests that "
     "share one host name; docs/cluster.md)"},
    {NULL, NULL, NULL},
};

enum {
  VAR_OUTPUT_DIR,
  VAR_MODE,
  VAR_DEBUG,
  VAR_PENDING,
  VAR_HARVEST_MS,
  VAR_HARVESTER,
  VAR_PLAN,
  VAR_PASS,
  VAR_MULTIPLEX,
  VAR_PROVIDER,
  VAR_SHADOW,
  VAR_SKIP_RESTORE,
  VAR_START_PAUSED,
  VAR_FAIL_PASS,
  VAR_SEL_KERNEL,
  VAR_SEL_EXCLUDE,
  VAR_SEL_RANGE,
  VAR_SEL_REGION,
  VAR_API,
  VAR_CODE,
  VAR_RANK_FIRST,
  VAR_RANK_LAST = VAR_RANK_FIRST + 3
};

static const char *get(int v) {
  const char *s = getenv(hpc_env_vars[v].name);
  if (!s || !*s) s = hpc_env_vars[v].default_str;
  return s;
}

int hpc_env_load(hpc_env *e, const char **why) {
  memset(e, 0, sizeof *e);
  *why = NULL;
  e->output_dir = get(VAR_OUTPUT_DIR);
  e->mode = get(VAR_MODE);
  const char *d = get(VAR_DEBUG);
  e->debug = d && strcmp(d, "0") != 0;
  const char *sp = get(VAR_START_PAUSED);
  e->start_paused = sp && strcmp(sp, "0") != 0;
  const char *api = get(VAR_API);
  e->api = api && strcmp(api, "0") != 0;
  const char *code = get(VAR_CODE), *sampling = getenv("HUBPROF_SAMPLE_PERIOD_US"); /* sample.c's */
  if (!strcmp(code, "auto")) code = sampling && *sampling ? "source" : "none";
  e->code = !strcmp(code, "all") ? HPC_CODE_ALL : !strcmp(code, "source") ? HPC_CODE_SOURCE : HPC_CODE_NONE;
  if (e->code == HPC_CODE_NONE && strcmp(code, "none")) {
    *why = "HUBPROF_CODE must be auto, none, source or all";
    return -1;
  }
  e->select_kernel = get(VAR_SEL_KERNEL); /* checked by select.c: a bad one disables selection only */
  e->select_exclude = get(VAR_SEL_EXCLUDE);
  e->select_range = get(VAR_SEL_RANGE);
  e->select_region = get(VAR_SEL_REGION);
  char *end;
  unsigned long long p = strtoull(get(VAR_PENDING), &end, 10);
  if (*end || p < 16 || p > (1u << 24)) {
    *why = "HUBPROF_PENDING must be a number from 16 to 16777216";
    return -1;
  }
  size_t pow2 = 16;
  while (pow2 < p)
    pow2 <<= 1;
  e->pending = pow2;
  unsigned long long h = strtoull(get(VAR_HARVEST_MS), &end, 10);
  if (*end || h < 1 || h > 1000) {
    *why = "HUBPROF_HARVEST_MS must be a number of milliseconds from 1 to 1000";
    return -1;
  }
  e->harvest_ms = (unsigned)h;
  const char *hv = get(VAR_HARVESTER);
  if (strcmp(hv, "auto") == 0)
    e->harvester = HPC_HARVEST_AUTO;
  else if (strcmp(hv, "thread") == 0)
    e->harvester = HPC_HARVEST_THREAD;
  else if (strcmp(hv, "sync") == 0)
    e->harvester = HPC_HARVEST_SYNC;
  else {
    *why = "HUBPROF_HARVESTER must be \"auto\", \"thread\" or \"sync\"";
    return -1;
  }
  hu_launch_read(&e->launch);
  e->rank = e->launch.rank;
  e->profile = strcmp(e->mode, "profile") == 0;
  if (!e->profile && strcmp(e->mode, "trace") != 0) {
    *why = "unknown HUBPROF_MODE (\"trace\" or \"profile\")";
    return -1;
  }
  e->plan = get(VAR_PLAN);
  e->provider = get(VAR_PROVIDER);
  const char *sk = get(VAR_SKIP_RESTORE);
  e->skip_restore = sk && strcmp(sk, "0") != 0;
  e->fail_pass = strtol(get(VAR_FAIL_PASS), &end, 10);
  if (*end || e->fail_pass < 0) e->fail_pass = 0; /* a test hook: never a reason to stop */
  if (!e->profile) return 0;                      /* the profile-only variables below never stop a trace */
  const char *sh = get(VAR_SHADOW);
  e->shadow_device = strcmp(sh, "device") == 0;
  if (!e->shadow_device && strcmp(sh, "host") != 0) {
    *why = "HUBPROF_SHADOW must be \"host\" or \"device\"";
    return -1;
  }
  e->pass = strtol(get(VAR_PASS), &end, 10);
  if (*end || e->pass < 0 || e->pass > 1000000) {
    *why = "HUBPROF_PASS must be a pass number (0 for kernel replay)";
    return -1;
  }
  const char *mx = get(VAR_MULTIPLEX);
  if (mx) {
    if (strcmp(mx, "kernel") == 0)
      e->multiplex = HPC_MUX_KERNEL;
    else if (strcmp(mx, "launch") == 0)
      e->multiplex = HPC_MUX_LAUNCH;
    else {
      *why = "HUBPROF_MULTIPLEX must be \"kernel\" or \"launch\" (or unset)";
      return -1;
    }
    if (e->pass) {
      *why = "HUBPROF_MULTIPLEX and HUBPROF_PASS exclude each other (iteration multiplexing is one run)";
      return -1;
    }
  }
  if (e->profile && !e->plan) {
    *why = "HUBPROF_MODE=profile needs HUBPROF_PLAN (the counters of each pass)";
    return -1;
  }
  return 0;
}
