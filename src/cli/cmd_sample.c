/* `hubprof sample [--period-us N] [--counters LIST] [--kernel REGEX] -- APP ARGS…`: runs the application
 * once with the collector sampling the threads that execute kernels (no replay): PC samples attributed to
 * the running dispatch and to code object + offset, and with --counters a counter timeline per dispatch.
 * The collector is told through HUBPROF_SAMPLE_* (docs/sampling.md); the run itself is `trace`'s. */
/* SPDX-License-Identifier: MIT */
#include "partition.h"
#include "cli.h"
#include "counters.h"
#include "options.h"
#include "run_app.h"

#include "../common/hu_text.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_PERIOD_US "1000"

static const cli_opt sample_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the store (default: APP.hubprof.db, or .log / .parquet by format; APP.hubprof-2.db, -3, ... "
             "when taken)"},
    {.name = "period-us",
     .kind = CLI_OPT_UINT,
     .value = "N",
     .min = 10,
     .max = 1000000,
     .def = DEFAULT_PERIOD_US,
     .help = "one sample per N microseconds of CPU time of each thread (10 to 1000000)"},
    {.name = "counters",
     .short_name = 'c',
     .kind = CLI_OPT_LIST,
     .value = "LIST",
     .help = "counters read on every sample, stored as a timeline per dispatch (perf counters, 'hubprof list "
             "counters'; comma-separated or @FILE). More than one pass holds (8): the planner's sets "
             "rotate by time slice, each sample records its set. NVIDIA metrics (sm__cycles_active.sum): "
             "CUPTI's PM sampling on CUDA devices, every 100 us of GPU time, instead of PC sampling"},
    {.name = "slice-ms",
     .kind = CLI_OPT_UINT,
     .value = "N",
     .min = 1,
     .max = 10000,
     .def = "50",
     .help = "with more counters than one pass holds: each set is read for N ms, then the next (1 to 10000)"},
    {.name = "whole-run",
     .kind = CLI_OPT_FLAG,
     .help = "with --counters: also poll the counters of every sampled thread on a timer (every "
             "HUBPROF_HARVEST_MS, 20 ms) for the whole run, between kernels too: a process-level timeline "
             "stored with no dispatch ('hubprof analyze --timeline OUT')"},
    {.name = "kernel",
     .short_name = 'k',
     .kind = CLI_OPT_STRING,
     .value = "REGEX",
     .help = "keep the samples of kernels whose name matches this extended regular expression only "
             "('glob:PATTERN' for a glob)"},
    {.name = "no-keep-ir",
     .kind = CLI_OPT_FLAG,
     .help = "do not ask PoCL to keep each kernel's IR (parallel.bc) for the source lines of -g alone, nor "
             "give it hubprof's kernel cache (~/.cache/hubprof/pocl-kcache, unless POCL_CACHE_DIR is set)"},
    {.name = "preload",
     .kind = CLI_OPT_FLAG,
     .help = "also load the collector with LD_PRELOAD (for OpenCL loaders without layer support)"},
    {.name = "fixed-period",
     .kind = CLI_OPT_FLAG,
     .help = "sample every thread at the period, also one that runs less than 100 us of CPU time per switch "
             "(by default such a thread is sampled every 50 ms while it does: its sampler's timer costs a "
             "clock reprogramming at every switch, a synchronous program's threads switch once per "
             "dispatch)"},
    {0},
};

static const cli_opt *const sample_tables[] = {
    sample_opts,        cli_opts_api,   cli_opts_code,   cli_opts_store_out,
    cli_opts_partition, cli_opts_quiet, cli_opts_common, NULL};

CLI_COMMAND(
    sample, .usage = "sample [options] [--] APP [ARGS...]",
    .about = "Run APP once and sample the threads that execute its kernels: every sample's program counter\n"
             "is attributed to the dispatch running on that thread and to the kernel's code object and\n"
             "offset (the code's bytes are kept in the store). Samples outside kernel code are counted,\n"
             "not stored. With --counters each listed counter is read on every sample, giving a counter\n"
             "timeline per dispatch. The trace of the dispatches is recorded as by 'hubprof trace'.\n"
             "hubprof exits with APP's own exit status.",
    .tables = sample_tables,
    .epilog = "Afterwards: 'hubprof analyze --by instruction|line|function|basic-block --kernel K OUT' for\n"
              "the hot code, 'hubprof analyze --timeline --dispatch N OUT' for a counter timeline.\n"
              "docs/sampling.md says what a sample means on each device.",
    .stop_at_operand = 1)

/* Every listed counter known to the perf provider and measurable here: 0, or the exit code (printed). With
 * more than one pass holds (8 in a perf group, and the PMU's own limits), *sets gets the planner's passes
 * ("a,b;c"): the sets that rotate by time slice. */
static int check_counters(const char *const *names, size_t n, char **sets) {
  *sets = NULL;
  if (!n) return 0;
  if (n > 64) {
    cli_error("sample: --counters: at most 64 counters (8 sets of 8) are sampled (%zu given)", n);
    return CLI_USAGE;
  }
  hc_provider *p;
  if (hc_provider_open("perf", &p) != HC_OK) {
    cli_error("sample: --counters: the perf counter provider cannot be opened");
    return CLI_FAIL;
  }
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    long k = hc_provider_find(p, names[i]);
    const hc_counter *c = k >= 0 ? hc_provider_counter(p, (size_t)k) : NULL;
    uint32_t ty;
    uint64_t cf;
    if (!c || hc_perf_event_of(names[i], &ty, &cf) != 0) {
      cli_error("sample: --counters: unknown counter '%s' ('hubprof list counters' shows them)", names[i]);
      rc = CLI_FAIL;
    } else if (!c->available) {
      cli_error("sample: --counters: %s cannot be measured here: %s", names[i], c->reason);
      rc = CLI_FAIL;
    }
  }
  hc_plan *plan = NULL;
  if (!rc && n > 8) {
    rc = cli_plan_lists("sample", p, names, n, NULL, 0, 8, &plan);
    if (!rc && plan->npasses > 8) {
      cli_error("sample: --counters: %zu counters need %zu sets; at most 8 rotate", n, plan->npasses);
      rc = CLI_USAGE;
    }
    if (!rc && !(*sets = hc_plan_format(plan))) {
      cli_error("out of memory");
      rc = CLI_FAIL;
    }
  }
  hc_plan_free(plan);
  hc_provider_close(p);
  return rc;
}

/* PoCL's kernel cache for sampled runs: a kernel that an ordinary run (without the variable above) cached
 * has no IR beside its .so, and PoCL never builds it again, so the first `sample` after ordinary use would
 * have no source lines. Unless the user chose a cache (POCL_CACHE_DIR), sampled runs use one of hubprof's
 * own, kept between runs ($XDG_CACHE_HOME/hubprof/pocl-kcache, else ~/.cache/hubprof/pocl-kcache): every
 * kernel in it was built with its IR kept, once; the code is what PoCL builds anyway (the same compiler and
 * options). When the folder cannot be made, PoCL's own cache is used (and the lines may be missing). */
static void sample_kernel_cache(void) {
  const char *given = getenv("POCL_CACHE_DIR");
  if (given && *given) return;
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char dir[PATH_MAX];
  int n;
  if (xdg && *xdg == '/')
    n = snprintf(dir, sizeof dir, "%s/hubprof/pocl-kcache", xdg);
  else if (home && *home == '/')
    n = snprintf(dir, sizeof dir, "%s/.cache/hubprof/pocl-kcache", home);
  else
    return;
  if (n <= 0 || (size_t)n >= sizeof dir) return;
  for (char *p = dir + 1; *p; p++) { /* mkdir -p, private to the user as PoCL's own cache */
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return;
    *p = '/';
  }
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) return;
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) return;
  setenv("POCL_CACHE_DIR", dir, 1);
}

int cmd_sample(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&sample_spec, argc, argv, &a);
  if (rc != CLI_PROCEED) return rc;
  if (!a.noperands) {
    cli_error("sample: no application given: hubprof sample [options] -- APP [ARGS...]");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  size_t nc = 0;
  char **cs = NULL;
  if (cli_str(&a, "counters") && hu_split_names(cli_str(&a, "counters"), &cs, &nc) != HU_OK) {
    cli_error("sample: --counters: '%s' is not a comma-separated list of names", cli_str(&a, "counters"));
    cli_args_free(&a);
    return CLI_USAGE;
  }
  const char *kre = cli_str(&a, "kernel");
  char why[1200] = "too long", kbuf[4 * 1024 + 8]; /* a "glob:" as a regex: up to 4 bytes per byte */
  if (kre && (cli_check_regex(kre, why, sizeof why) != CLI_OK || cli_pattern_regex(kre, kbuf, sizeof kbuf))) {
    cli_error("sample: --kernel %s", why);
    hu_strv_free(cs);
    cli_args_free(&a);
    return CLI_USAGE;
  }
  /* NVIDIA's metrics (a '__' in the name, e.g. sm__cycles_active.sum): PM sampling on CUDA devices, checked
   * by CUPTI in the application (one line there when it refuses them); the rest are perf counters */
  char cuda_list[2048] = "";
  size_t ncuda = 0, nperf = 0;
  for (size_t i = 0; i < nc; i++) {
    if (!strstr(cs[i], "__")) {
      char *t = cs[i];
      cs[i] = cs[nperf], cs[nperf++] = t; /* perf names first, in their order */
      continue;
    }
    size_t used = strlen(cuda_list);
    if (++ncuda > 32 || used + strlen(cs[i]) + 2 > sizeof cuda_list) {
      cli_error("sample: --counters: at most 32 CUDA metrics (PM sampling) fit one run");
      hu_strv_free(cs);
      cli_args_free(&a);
      return CLI_USAGE;
    }
    snprintf(cuda_list + used, sizeof cuda_list - used, "%s%s", used ? "," : "", cs[i]);
  }
  nc = nperf;
  char *sets = NULL;
  rc = check_counters((const char *const *)cs, nc, &sets);
  if (rc) {
    hu_strv_free(cs);
    cli_args_free(&a);
    return rc;
  }
  const char *format; /* the output's format follows its name unless -F says (one rule: output_format.c) */
  rc = cli_output_format("sample", cli_str(&a, "output"), cli_str(&a, "output-format"), &format);
  if (!rc) rc = cli_partition_choose("sample", &a, format);
  if (rc) { /* before the application starts */
    free(sets);
    hu_strv_free(cs);
    cli_args_free(&a);
    return rc;
  }
  char period[32], slice[32], list[4096] = "";
  snprintf(period, sizeof period, "%lu", cli_uint(&a, "period-us", strtoul(DEFAULT_PERIOD_US, NULL, 10)));
  for (size_t i = 0; i < nc && !sets; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", cs[i]);
  if (sets) snprintf(list, sizeof list, "%s", sets); /* ';' between the sets that rotate */
  free(sets);
  snprintf(slice, sizeof slice, "%lu", cli_uint(&a, "slice-ms", 50));
  setenv("HUBPROF_SAMPLE_SLICE_MS", slice, 1);
  hu_strv_free(cs);
  /* the collector reads these in the application (run_launch passes the environment on) */
  setenv("HUBPROF_SAMPLE_PERIOD_US", period, 1);
  if (nc)
    setenv("HUBPROF_SAMPLE_COUNTERS", list, 1);
  else
    unsetenv("HUBPROF_SAMPLE_COUNTERS");
  if (ncuda) /* prov_cuda_why.c: PM sampling of these instead of PC sampling on CUDA devices */
    setenv("HUBPROF_SAMPLE_CUDA_COUNTERS", cuda_list, 1);
  else
    unsetenv("HUBPROF_SAMPLE_CUDA_COUNTERS");
  if (cli_given(&a, "whole-run") && !nc) {
    cli_error("sample: --whole-run polls the counters of --counters LIST: give some");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  if (cli_given(&a, "whole-run"))
    setenv("HUBPROF_SAMPLE_WHOLE_RUN", "1", 1);
  else
    unsetenv("HUBPROF_SAMPLE_WHOLE_RUN");
  if (cli_given(&a, "fixed-period"))
    setenv("HUBPROF_SAMPLE_ADAPT", "0", 1);
  else
    unsetenv("HUBPROF_SAMPLE_ADAPT");
  if (kre)
    setenv("HUBPROF_SAMPLE_KERNEL", kbuf, 1);
  else
    unsetenv("HUBPROF_SAMPLE_KERNEL");
  /* PoCL keeps each kernel's parallel.bc beside its .so (the code that runs is the same): the collector
   * stores it, and analysis compiles it again for the lines of a program built with -g alone */
  if (!cli_given(&a, "no-keep-ir")) {
    setenv("POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES", "1", 1);
    sample_kernel_cache();
  }
  run_opts ro = {.mode = "trace",
                 .format = format,
                 .output = cli_str(&a, "output"),
                 .force = cli_given(&a, "force"),
                 .preload = cli_given(&a, "preload"),
                 .api = cli_given(&a, "api"),
                 .code = cli_given(&a, "code") ? "all" : "source", /* sources for analyze --by line */
                 .quiet = cli_given(&a, "quiet")};
  rc = run_app(&ro, (int)a.noperands, a.operands);
  cli_args_free(&a);
  return rc;
}
