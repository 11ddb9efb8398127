/* `hubprof plan --counters LIST`: the passes a set of counters needs on a device — which counters go
 * together, under the device's per-pass and per-block limits — printed without running anything. */
#include "cli.h"
#include "report.h"

#include "counters.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEVICE "cpu-perf"
#define FMT_LINE 100 /* --format line: the plan string only */

void cmd_plan_help(FILE *out) {
  fprintf(out,
          "usage: hubprof plan --counters LIST [--group NAME=LIST]... [--device D]\n"
          "                    [--max-counters-per-pass N] [--format F]\n\n"
          "Print the passes a set of counters needs on a device, without running anything: the\n"
          "fewest passes the device's limits allow (counters per pass and per hardware block),\n"
          "with the counters of one group (a metric's ratio partners) in one pass where they fit.\n"
          "Counters are checked first: unknown names, counters this machine cannot measure and\n"
          "impossible plans are errors.\n\n"
          "options:\n"
          "  --counters LIST             counters to measure, comma-separated (repeatable)\n"
          "  --group NAME=LIST           counters to keep in one pass, e.g. a metric's (repeatable)\n"
          "  --device D                  device description name or path (default " DEFAULT_DEVICE "; see\n"
          "                              'hubprof list devices')\n"
          "  --max-counters-per-pass N   at most N counters per pass, whatever the device allows\n"
          "  --format F                  table (default), csv, json (one row per counter), or line\n"
          "                              (the plan string: passes split by ';', counters by ',')\n"
          "  -h, --help                  show this help\n");
}

static int print_plan(const hc_provider *p, const hc_plan *pl, unsigned max_arg, int fmt) {
  const hc_limits *lim = hc_provider_limits(p);
  if (fmt == FMT_LINE) {
    char *s = hc_plan_format(pl);
    if (!s) {
      cli_error("out of memory");
      return CLI_FAIL;
    }
    printf("%s\n", s);
    free(s);
    return CLI_OK;
  }
  int rc = CLI_OK;
  if (fmt != REPORT_TABLE) {
    static const report_col cols[] = {
        {"pass", 1, 0}, {"counter", 0, 0}, {"block", 0, 0}, {"group", 0, 0}, {"group_split", 1, 0}};
    report *r = report_new(cols, 5);
    for (size_t i = 0; r && i < pl->ncounters && rc == CLI_OK; i++) {
      char pass[16];
      int split = 0;
      snprintf(pass, sizeof pass, "%u", pl->pass[i]);
      for (char **g = pl->split_groups; pl->groups[i] && *g; g++)
        split |= strcmp(*g, pl->groups[i]) == 0;
      const char *cells[] = {pass, pl->names[i], pl->blocks[i], pl->groups[i] ? pl->groups[i] : "",
                             split ? "1" : "0"};
      if (report_add(r, cells)) rc = CLI_FAIL;
    }
    if (r && rc == CLI_OK) report_print(r, (report_fmt)fmt, 0, stdout);
    if (!r || rc != CLI_OK) cli_error("out of memory");
    report_free(r);
    return r ? rc : CLI_FAIL;
  }
  /* the summary line: device, counters, passes, the limits that applied */
  unsigned total = lim->max_per_pass;
  if (max_arg && (!total || max_arg < total)) total = max_arg;
  printf("%s: %zu counter%s in %zu pass%s (", lim->device, pl->ncounters, pl->ncounters == 1 ? "" : "s",
         pl->npasses, pl->npasses == 1 ? "" : "es");
  if (total)
    printf("at most %u per pass%s", total, total == max_arg ? " by --max-counters-per-pass" : "");
  else
    printf("no total limit per pass");
  for (size_t b = 0; b < lim->nblocks; b++) {
    if (lim->blocks[b].max == HC_UNLIMITED)
      printf("%s%s unlimited", b ? ", " : "; per block: ", lim->blocks[b].block);
    else
      printf("%s%s %u", b ? ", " : "; per block: ", lim->blocks[b].block, lim->blocks[b].max);
  }
  printf(")\n");
  /* one line per pass: its counters per block, so a saturated limit shows */
  char blocks[1024];
  for (size_t i = 0; i < pl->ncounters;) {
    size_t j = i, w = 0;
    while (j < pl->ncounters && pl->pass[j] == pl->pass[i])
      j++;
    blocks[0] = 0;
    for (size_t k = i; k < j; k++) { /* blocks in order of first appearance, with their counts */
      size_t seen = i;
      while (seen < k && strcmp(pl->blocks[seen], pl->blocks[k]))
        seen++;
      if (seen < k) continue;
      size_t cnt = 0;
      for (size_t m = k; m < j; m++)
        cnt += strcmp(pl->blocks[m], pl->blocks[k]) == 0;
      if (w < sizeof blocks)
        w += (size_t)snprintf(blocks + w, sizeof blocks - w, "%s%s %zu", w ? ", " : "", pl->blocks[k], cnt);
    }
    printf("pass %u: %zu counter%s (%s)\n", pl->pass[i], j - i, j - i == 1 ? "" : "s", blocks);
    i = j;
  }
  /* one row per counter */
  static const report_col cols[] = {{"PASS", 1, 0}, {"COUNTER", 0, 0}, {"BLOCK", 0, 0}, {"GROUP", 0, 1}};
  report *r = report_new(cols, 4);
  if (!r) rc = CLI_FAIL;
  for (size_t i = 0; rc == CLI_OK && i < pl->ncounters; i++) {
    char pass[16], group[300] = "";
    snprintf(pass, sizeof pass, "%u", pl->pass[i]);
    if (pl->groups[i]) {
      int split = 0;
      for (char **g = pl->split_groups; *g; g++)
        split |= strcmp(*g, pl->groups[i]) == 0;
      snprintf(group, sizeof group, "%s%s", pl->groups[i], split ? " (split)" : "");
    }
    const char *cells[] = {pass, pl->names[i], pl->blocks[i], group};
    if (report_add(r, cells)) rc = CLI_FAIL;
  }
  if (rc == CLI_OK) report_print(r, REPORT_TABLE, report_term_width(), stdout);
  for (char **g = pl->split_groups; rc == CLI_OK && *g; g++) {
    char where[256];
    size_t w = 0;
    unsigned last = 0;
    where[0] = 0;
    for (size_t i = 0; i < pl->ncounters; i++) /* passes in order: each listed once */
      if (pl->groups[i] && strcmp(pl->groups[i], *g) == 0 && pl->pass[i] != last && w < sizeof where) {
        w += (size_t)snprintf(where + w, sizeof where - w, "%s%u", w ? ", " : "", pl->pass[i]);
        last = pl->pass[i];
      }
    printf("note: group '%s' is split over passes %s: its counters could not share one pass\n", *g, where);
  }
  if (rc != CLI_OK) cli_error("out of memory");
  report_free(r);
  return rc;
}

/* Grow a vector of strings by one. */
static int push_arg(const char ***v, size_t *n, const char *s) {
  const char **nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  nv[(*n)++] = s;
  *v = nv;
  return 0;
}

int cmd_plan(int argc, char **argv) {
  static const struct option opts[] = {{"counters", required_argument, 0, 'c'},
                                       {"group", required_argument, 0, 'g'},
                                       {"device", required_argument, 0, 'd'},
                                       {"max-counters-per-pass", required_argument, 0, 'm'},
                                       {"format", required_argument, 0, 'F'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int fmt = REPORT_TABLE, o, rc = CLI_USAGE;
  const char *device = NULL, *fmt_arg = NULL, *max_arg = NULL;
  const char **lists = NULL, **groups = NULL;
  size_t nlists = 0, ngroups = 0;
  unsigned max = 0;
  opterr = 0;
  while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (o) {
    case 'c':
    case 'g':
      if (o == 'c' ? push_arg(&lists, &nlists, optarg) : push_arg(&groups, &ngroups, optarg)) {
        cli_error("out of memory");
        rc = CLI_FAIL;
        goto out;
      }
      break;
    case 'd':
      if (device && strcmp(device, optarg)) {
        cli_error("plan: --device given twice ('%s' and '%s')", device, optarg);
        goto out;
      }
      device = optarg;
      break;
    case 'm': {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || end == optarg || v < 1 || v > 100000) {
        cli_error("plan: --max-counters-per-pass needs a number from 1 to 100000, not '%s'", optarg);
        goto out;
      }
      if (max_arg && (unsigned)v != max) {
        cli_error("plan: --max-counters-per-pass given twice ('%s' and '%s')", max_arg, optarg);
        goto out;
      }
      max = (unsigned)v;
      max_arg = optarg;
      break;
    }
    case 'F':
      if (fmt_arg && strcmp(fmt_arg, optarg)) {
        cli_error("plan: --format given twice ('%s' and '%s')", fmt_arg, optarg);
        goto out;
      }
      fmt = strcmp(optarg, "line") == 0 ? FMT_LINE : report_fmt_parse(optarg);
      if (fmt < 0) {
        cli_error("plan: unknown output format '%s' (table, csv, json or line)", optarg);
        goto out;
      }
      fmt_arg = optarg;
      break;
    case 'h':
      cmd_plan_help(stdout);
      rc = cli_finish_stdout(CLI_OK);
      goto out;
    case ':': cli_error("plan: option '%s' needs a value", argv[optind - 1]); goto out;
    default: cli_error("plan: unknown option '%s' (see 'hubprof plan --help')", argv[optind - 1]); goto out;
    }
  }
  if (optind < argc) {
    cli_error("plan: unexpected argument '%s' (plan runs nothing: to measure, use 'hubprof profile')",
              argv[optind]);
    goto out;
  }
  if (!nlists && !ngroups) {
    cli_error("plan: nothing to plan: give --counters LIST or --group NAME=LIST (see 'hubprof plan --help')");
    goto out;
  }
  hc_provider *p;
  char err[1024];
  hc_status st = hc_device_open(device ? device : DEFAULT_DEVICE, &p, err, sizeof err);
  if (st != HC_OK) {
    cli_error("%s", err[0] ? err : hc_status_str(st));
    rc = CLI_FAIL;
    goto out;
  }
  hc_plan_args a = {.counters = lists,
                    .ncounters = nlists,
                    .groups = groups,
                    .ngroups = ngroups,
                    .max_per_pass = max,
                    .need_available = 1};
  hc_plan *pl;
  st = hc_plan_text(p, &a, &pl, err, sizeof err);
  if (st != HC_OK) {
    cli_error("plan: %s", err[0] ? err : hc_status_str(st));
    rc = st == HC_ERR_INVALID ? CLI_USAGE : CLI_FAIL;
  } else {
    rc = cli_finish_stdout(print_plan(p, pl, max, fmt));
    hc_plan_free(pl);
  }
  hc_provider_close(p);
out:
  free(lists);
  free(groups);
  return rc;
}
