/* `hubprof diff A B`: two profiles compared per kernel (or kernel + launch sizes, or region) through the
 * analysis library (ha_diff): calls, total and average device time, counters and metrics, with deltas,
 * percent changes and directions (faster/slower, higher/lower); kernels only in one store listed as
 * new/missing. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "progress.h"
#include "report.h"

#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SAME_PCT 1.0

static const char *const by_choices[] = {"kernel", "kernel-grid", "region", "region-tree", NULL};
static const int by_groups[] = {HA_BY_KERNEL, HA_BY_KERNEL_GRID, HA_BY_REGION, HA_BY_REGION_TREE};

/* the threshold: a percentage >= 0 */
static int check_pct(const char *v, char *err, size_t len) {
  char *end;
  double d = strtod(v, &end);
  if (*end || end == v || !(d >= 0) || d > 1e6) {
    snprintf(err, len, "needs a percentage from 0 to 1000000, not '%s'", v);
    return CLI_USAGE;
  }
  return CLI_OK;
}

static const cli_opt diff_opts[] = {
    {.name = "by",
     .kind = CLI_OPT_ENUM,
     .choices = by_choices,
     .def = "kernel",
     .help = "match kernels by name, or by name, grid and work-group sizes; or regions by category and "
             "name, or by category and path of nested names"},
    CLI_OPT_METRICS("metrics to compare; 'none' for none (default: every metric both stores' counters give)"),
    CLI_OPT_COUNTERS("counters to compare too (default none)"),
    {.name = "threshold",
     .kind = CLI_OPT_STRING,
     .value = "PCT",
     .def = "1",
     .help = "changes smaller than PCT percent are 'same'",
     .check = check_pct},
    CLI_OPT_LIMIT("only the N kernels with the most device time"),
    CLI_OPT_REPORT_FORMAT("table (fitted to the terminal), csv or json (every column, times in nanoseconds)"),
    {0},
};

static const cli_opt *const diff_tables[] = {diff_opts, cli_opts_select, cli_opts_quiet, cli_opts_common,
                                             NULL};

CLI_COMMAND(
    diff, .usage = "diff [options] A B",
    .about = "Compare two stores per kernel: calls, total and average device time, and the metrics\n"
             "both can give (and counters when asked), as A, B, the change B - A, the change in\n"
             "percent of A, and its direction: 'faster'/'slower' for the average time, 'higher'/\n"
             "'lower' for counters and metrics, 'same' under the threshold. Kernels are matched by\n"
             "name (with --by kernel-grid, also by grid and work-group sizes), and by device name\n"
             "when a store has several devices; kernels of only one store are 'new' (only in B) or\n"
             "'missing' (only in A). Rows: most device time first. With --by region (region-tree),\n"
             "regions are matched by category and name (path): calls, inclusive time (total, per call)\n"
             "and the counters and metrics of the kernels inside them (see 'hubprof analyze --by region').",
    .tables = diff_tables)

typedef struct diff_progress {
  cli_progress *p;
  uint64_t base, last; /* rows of the stores read before, rows of this one so far */
} diff_progress;

static int on_rows(void *ctx, uint64_t rows) {
  diff_progress *d = ctx;
  if (rows < d->last) d->base += d->last; /* the second store began */
  d->last = rows;
  cli_progress_update(d->p, d->base + rows);
  return 0;
}

int cmd_diff(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&diff_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  rc = CLI_USAGE;
  ha_query q = {.size = sizeof q,
                .group = by_groups[cli_enum(&args, "by", 0)],
                .limit = (int64_t)cli_uint(&args, "limit", 0),
                .metrics = cli_str(&args, "metrics"),
                .counters = cli_str(&args, "counters")};
  if (q.metrics && !strcmp(q.metrics, "none")) q.metrics = "";
  if (q.counters && !strcmp(q.counters, "none")) q.counters = "";
  size_t nkernels, ndevices;
  q.metric_files = cli_list(&args, "metrics-file", &q.nmetric_files);
  q.kernels = cli_list(&args, "kernel", &nkernels);
  q.devices = cli_list(&args, "device", &ndevices);
  q.nkernels = nkernels;
  q.ndevices = ndevices;
  int fmt = cli_enum(&args, "format", REPORT_TABLE);
  double same = cli_str(&args, "threshold") ? strtod(cli_str(&args, "threshold"), NULL) : DEFAULT_SAME_PCT;
  if (args.noperands != 2) {
    cli_error("diff: expected two stores, A and B (see 'hubprof diff --help')");
    goto out;
  }
  char **argv2 = args.operands;
  hp_store *a = NULL, *b = NULL;
  rc = CLI_FAIL;
  if (!(a = cli_open_readable("diff", argv2[0]))) goto out;
  if (!(b = cli_open_readable("diff", argv2[1]))) {
    hp_store_close(a);
    goto out;
  }
  /* a progress line on a terminal: rows read of both stores (the library reads A, then B) */
  diff_progress dp = {.p = cli_progress_start("reading", "rows", 0, cli_given(&args, "quiet"))};
  if (dp.p) {
    uint64_t total = 0, n;
    for (int i = 0; i < 2; i++)
      for (int t = 0; t < 2; t++)
        if (hp_store_count(i ? b : a, t ? HP_TABLE_COUNTER_VALUE : HP_TABLE_DISPATCH, &n) == HP_OK)
          total += n;
    cli_progress_stage(dp.p, NULL, total);
    q.progress = on_rows;
    q.progress_ctx = &dp;
  }
  ha_result *res;
  hp_status st = ha_diff(a, b, &q, same, &res);
  cli_progress_end(dp.p);
  if (st != HP_OK) {
    cli_error("diff: %s", ha_result_error(res));
    ha_result_free(res);
  } else {
    if (fmt == REPORT_TABLE) printf("A: %s\nB: %s\n\n", argv2[0], argv2[1]);
    if (fmt == REPORT_TABLE && ha_result_nrows(res) == 0)
      printf("no dispatches in either store%s\n", nkernels || ndevices ? " match the filters" : "");
    else
      rc = cli_print_analysis(res, fmt, report_term_width());
    if (rc == CLI_OK && ha_result_lost_records(res))
      cli_warn("%" PRIu64 " %s lost while tracing: calls and times are lower bounds",
               ha_result_lost_records(res),
               cli_noun(ha_result_lost_records(res), "record was", "records were"));
    if (fmt == REPORT_TABLE && ha_result_nrows(res) == 0) rc = CLI_OK;
    ha_result_free(res);
  }
  for (int i = 0; i < 2; i++) {
    hp_store *s = i ? b : a;
    if (st == HP_OK && hp_store_damage(s, NULL) != HP_OK)
      cli_warn("%s (figures cover the readable part)", hp_store_error(s));
  }
  hp_store_close(a);
  hp_store_close(b);
  rc = cli_finish_stdout(rc);
out:
  cli_args_free(&args);
  return rc;
}
