/* `hubprof analyze STORE`: kernels, kernel launches or dispatches with device time, counters and derived
 * metrics (the analysis library, ha_run), filtered by kernel, device and dispatch range, printed as tables
 * fitted to the terminal (split into panels side by side when too wide), CSV or JSON. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "progress.h"
#include "report.h"

#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const by_choices[] = {"kernel",      "kernel-grid", "dispatch", "region",
                                         "region-tree", "instruction", "line",     "function",
                                         "basic-block", "source",      "rank",     "rank-imbalance",
                                         "api",         "copy",        NULL};
#define BY_ATTRIBUTION 5 /* the first of the sample views (the analysis library's attribution.c) */
#define BY_RANK 10       /* the rank views (cluster runs) follow them */
static const char *const sort_choices[] = {"time", "order", "name", "start", NULL};

static const cli_opt analyze_opts[] = {
    {.name = "by",
     .kind = CLI_OPT_ENUM,
     .choices = by_choices,
     .def = "kernel",
     .help =
         "one row per kernel, per kernel + grid + work-group sizes, per dispatch, or per region name "
         "(calls, inclusive and exclusive time, dispatches inside and their device time), or per path of "
         "nested regions as a tree; of a store made by 'hubprof sample', with --kernel K: per instruction "
         "(with its disassembly), source line (programs built with -g), function or basic block of the "
         "kernel's code, with sample counts and percentages, or the kernel's source with the samples of each "
         "line; of a cluster run (docs/cluster.md): per MPI rank, device and kernel, or per kernel its "
         "device "
         "time over the ranks (min, median, max, the slowest rank)"},
    {.name = "timeline",
     .kind = CLI_OPT_FLAG,
     .help = "with --dispatch N: the counter samples of dispatch N ('hubprof sample --counters'); without: "
             "the whole run's samples of no dispatch ('hubprof sample --whole-run')"},
    CLI_OPT_COUNTERS("counters to show, comma-separated or @FILE; 'none' for none (default: every counter "
                     "measured in the store)"),
    CLI_OPT_METRICS("metrics to show (comma-separated or @FILE); 'none' for none (default: every metric the "
                    "store's counters give; 'hubprof list metrics' names them)"),
    {.name = "dispatch",
     .kind = CLI_OPT_STRING,
     .value = "A-B",
     .help = "only the collector's dispatch ids A to B (A, A- and -B too; the ids of the 'dispatch' column, "
             "the same in every pass and process)"},
    {.name = "sort",
     .kind = CLI_OPT_ENUM,
     .choices = sort_choices,
     .help =
         "time (default for kernels), start (device start, earliest first; default for dispatches), order "
         "(store order) or name"},
    CLI_OPT_LIMIT("only the first N rows of each device"),
    CLI_OPT_REPORT_FORMAT(
        "table (fitted to the terminal), csv or json; csv and json give every column, times in "
        "nanoseconds, and the columns 'imputed' and 'incomplete' naming the row's imputed and "
        "unmeasured values"),
    {.name = "roofline",
     .kind = CLI_OPT_FLAG,
     .help = "the store's ceilings (from 'hubprof roofline --store'), one row per device and ceiling, then "
             "each kernel placed by arithmetic intensity and achieved GFLOP/s where its counters give FLOPs "
             "and DRAM bytes, or the counters missing to place it (docs/cli/analyze.md)"},
    {.name = "threads",
     .kind = CLI_OPT_UINT,
     .value = "N",
     .min = 1,
     .max = 64,
     .help = "threads reading the store at once (the views by kernel without counters, over Parquet or "
             "rocpd; default: $HUBPROF_THREADS, else one per CPU; 1: one thread). The answers are the same"},
    {0},
};

static const cli_opt *const analyze_tables[] = {analyze_opts,    cli_opts_select, cli_opts_quiet,
                                                cli_opts_strict, cli_opts_common, NULL};

CLI_COMMAND(analyze, .usage = "analyze [options] STORE",
            .about = "Device time, counters and derived metrics of a store's kernels (the default view: top\n"
                     "kernels per device, most expensive first), kernel launches or dispatches. Any store\n"
                     "format is read. Counters of a group are means per dispatch; metrics are computed from\n"
                     "them (docs/metrics.md). In tables, * marks an imputed value (measured on part of the\n"
                     "group's dispatches), ! a value combining different replay passes, - no value.",
            .tables = analyze_tables)

typedef struct opts {
  int fmt, group, sort, quiet;
  long limit;
  unsigned threads;
  const char *counters, *metrics;
  const char *const *files, *const *kernels, *const *devices;
  size_t nfiles, nkernels, ndevices;
  uint64_t first, last;
} opts;

static int on_rows(void *ctx, uint64_t rows) {
  cli_progress_update(ctx, rows);
  return 0;
}

static int analyze(hp_store *s, const opts *o) {
  ha_query q = {.size = sizeof q,
                .group = o->group,
                .limit = o->limit,
                .counters = o->counters,
                .metrics = o->metrics,
                .metric_files = o->files,
                .nmetric_files = o->nfiles,
                .kernels = o->kernels,
                .nkernels = o->nkernels,
                .devices = o->devices,
                .ndevices = o->ndevices,
                .dispatch_first = o->first,
                .dispatch_last = o->last,
                .sort = o->sort,
                .threads = o->threads};
  /* a progress line on a terminal: rows read of the dispatches and counter values */
  cli_progress *pr = cli_progress_start("reading", "rows", 0, o->quiet);
  if (pr) {
    uint64_t nd = 0, nv = 0;
    hp_store_count(s, HP_TABLE_DISPATCH, &nd);
    hp_store_count(s, HP_TABLE_COUNTER_VALUE, &nv);
    cli_progress_stage(pr, NULL, nd + nv);
    q.progress = on_rows;
    q.progress_ctx = pr;
  }
  ha_result *res;
  hp_status st = ha_run(s, &q, &res);
  cli_progress_end(pr);
  if (st != HP_OK) {
    cli_error("analyze: %s", ha_result_error(res));
    ha_result_free(res);
    return CLI_FAIL;
  }
  int rc = CLI_OK;
  if (o->fmt == REPORT_TABLE && ha_result_nrows(res) == 0 && o->group < HA_BY_INSTRUCTION)
    printf("no dispatches in %s%s\n", hp_store_path(s),
           o->nkernels || o->ndevices || o->first || o->last ? " match the filters" : "");
  else if (o->fmt == REPORT_TABLE && ha_result_nrows(res) == 0 &&
           (o->group == HA_BY_API || o->group == HA_BY_COPY))
    printf("no %s in %s\n",
           o->group == HA_BY_API ? "API calls (record them with --api)"
                                 : "memory copies (record them with --api)",
           hp_store_path(s));
  else
    rc = cli_print_analysis(res, o->fmt, report_term_width());
  /* losses make every figure a lower bound: say so */
  if (ha_result_lost_records(res))
    cli_warn("%" PRIu64 " %s lost while tracing: calls and times are lower bounds",
             ha_result_lost_records(res),
             cli_noun(ha_result_lost_records(res), "record was", "records were"));
  if (hp_store_damage(s, NULL) != HP_OK) cli_warn("%s (figures cover the readable part)", hp_store_error(s));
  ha_result_free(res);
  return rc;
}

/* "A-B", "A", "A-", "-B" (positive ids). */
static int parse_range(const char *s, uint64_t *first, uint64_t *last) {
  const char *dash = strchr(s, '-');
  char *end;
  *first = *last = 0;
  if (!*s) return -1;
  if (s[0] != '-') {
    if (s[0] < '0' || s[0] > '9') return -1;
    unsigned long long a = strtoull(s, &end, 10);
    if (end != (dash ? dash : s + strlen(s)) || a == 0) return -1;
    *first = a;
  }
  if (!dash) {
    *last = *first;
    return 0;
  }
  if (dash[1]) {
    if (dash[1] < '0' || dash[1] > '9') return -1;
    unsigned long long b = strtoull(dash + 1, &end, 10);
    if (*end || b == 0) return -1;
    *last = b;
  }
  if (!*first && !*last) return -1;
  return *first && *last && *first > *last ? -1 : 0;
}

int cmd_analyze(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&analyze_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  rc = CLI_USAGE;
  static const int groups[] = {HA_BY_KERNEL,      HA_BY_KERNEL_GRID, HA_BY_DISPATCH, HA_BY_REGION,
                               HA_BY_REGION_TREE, HA_BY_INSTRUCTION, HA_BY_LINE,     HA_BY_FUNCTION,
                               HA_BY_BLOCK,       HA_BY_SOURCE,      HA_BY_RANK,     HA_BY_RANK_IMBALANCE,
                               HA_BY_API,         HA_BY_COPY};
  static const int sorts[] = {HA_SORT_TIME, HA_SORT_ORDER, HA_SORT_NAME, HA_SORT_START};
  opts o = {.fmt = cli_enum(&args, "format", REPORT_TABLE),
            .group = groups[cli_enum(&args, "by", 0)],
            .limit = (long)cli_uint(&args, "limit", 0),
            .counters = cli_str(&args, "counters"),
            .metrics = cli_str(&args, "metrics"),
            .quiet = cli_given(&args, "quiet"),
            .threads = (unsigned)cli_uint(&args, "threads", 0)};
  int sort = cli_enum(&args, "sort", -1);
  if (sort >= 0) o.sort = sorts[sort];
  if (o.counters && !strcmp(o.counters, "none")) o.counters = "";
  if (o.metrics && !strcmp(o.metrics, "none")) o.metrics = "";
  o.files = cli_list(&args, "metrics-file", &o.nfiles);
  o.kernels = cli_list(&args, "kernel", &o.nkernels);
  o.devices = cli_list(&args, "device", &o.ndevices);
  const char *range = cli_str(&args, "dispatch");
  if (range && parse_range(range, &o.first, &o.last)) {
    cli_error("analyze: --dispatch needs A-B, A, A- or -B with ids from 1 and A <= B, not '%s'", range);
    goto out;
  }
  if (args.noperands != 1) {
    cli_error("analyze: expected one STORE (see 'hubprof analyze --help')");
    goto out;
  }
  int by = cli_enum(&args, "by", 0), timeline = cli_given(&args, "timeline");
  if (timeline && range && o.first != o.last) {
    cli_error("analyze: --timeline takes --dispatch N (one dispatch id), or no --dispatch for the whole run");
    goto out;
  }
  if (timeline) o.group = HA_TIMELINE;
  if (by >= BY_ATTRIBUTION && by < BY_RANK && !timeline && !o.nkernels) {
    cli_error("analyze: --by %s needs --kernel K (the kernel whose samples to attribute)", by_choices[by]);
    goto out;
  }
  hp_store *s = cli_open_readable("analyze", args.operands[0]);
  if (!s) {
    rc = CLI_FAIL;
    goto out;
  }
  if (cli_given(&args, "strict") && hp_store_damage(s, NULL) != HP_OK) { /* incomplete: no figures at all */
    cli_error("analyze: %s (--strict)", hp_store_error(s));
    hp_store_close(s);
    rc = CLI_FAIL;
    goto out;
  }
  rc = cli_given(&args, "roofline") ? cli_analyze_roofline(s, o.fmt) : analyze(s, &o);
  hp_store_close(s);
  rc = cli_finish_stdout(rc);
out:
  cli_args_free(&args);
  return rc;
}
