/* `hubprof plan --counters LIST --metrics LIST`: the passes a set of counters and metrics needs on a device
 * — which counters go together (a metric's in one pass where the limits allow), under the device's per-pass
 * and per-block limits — printed without running anything. Also the CLI's metric helpers (cli.h). */
#include "cli.h"
#include "report.h"

#include "counters.h"
#include "metrics.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEVICE "cpu-perf"
#define FMT_LINE 100 /* --format line: the plan string only */

void cmd_plan_help(FILE *out) {
  fprintf(out,
          "usage: hubprof plan [--counters LIST] [--metrics LIST] [--group NAME=LIST]... [--device D]\n"
          "                    [--metrics-file F]... [--max-counters-per-pass N] [--format F]\n\n"
          "Print the passes a set of counters needs on a device, without running anything: the\n"
          "fewest passes the device's limits allow (counters per pass and per hardware block),\n"
          "with the counters of one group (a metric's ratio partners) in one pass where they fit.\n"
          "Counters are checked first: unknown names, counters this machine cannot measure and\n"
          "impossible plans are errors.\n\n"
          "options:\n"
          "  --counters LIST             counters to measure, comma-separated (repeatable)\n"
          "  --metrics LIST              metrics to measure: their counters, each metric's in one pass\n"
          "                              where they fit (repeatable; 'hubprof list metrics')\n"
          "  --metrics-file F            more metric definitions (repeatable; docs/metrics.md)\n"
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

/* ---- metric helpers shared with list and profile (cli.h) ---- */

int cli_metrics_open(const hc_provider *p, const char *const *files, size_t nfiles, hc_metrics **out) {
  char err[1024];
  const char *device = hc_provider_limits(p) ? hc_provider_limits(p)->device : NULL;
  size_t n = hc_provider_count(p);
  const char **names = calloc(n + 1, sizeof *names);
  hc_metrics *m = NULL;
  hc_status st = names ? hc_metrics_new(&m) : HC_ERR_NOMEM;
  for (size_t i = 0; names && i < n; i++)
    names[i] = hc_provider_counter(p, i)->name;
  if (st == HC_OK) st = hc_metrics_add_builtin(m, device, err, sizeof err);
  for (size_t i = 0; st == HC_OK && i < nfiles; i++)
    st = hc_metrics_add_file(m, files[i], device, err, sizeof err);
  if (st == HC_OK) st = hc_metrics_resolve(m, names, n, err, sizeof err);
  free(names);
  if (st != HC_OK) {
    cli_error("%s", st == HC_ERR_NOMEM ? "out of memory" : err);
    hc_metrics_free(m);
    return CLI_FAIL;
  }
  *out = m;
  return CLI_OK;
}

int cli_metric_groups(const hc_provider *p, const char *const *lists, size_t nlists, const char *const *files,
                      size_t nfiles, char ***groups, size_t *ngroups) {
  *groups = NULL;
  *ngroups = 0;
  if (!nlists) return CLI_OK;
  hc_metrics *m;
  int rc = cli_metrics_open(p, files, nfiles, &m);
  for (size_t i = 0; rc == CLI_OK && i < nlists; i++) {
    char err[1024], **g;
    size_t ng;
    hc_status st = hc_metrics_plan_groups(m, lists[i], &g, &ng, err, sizeof err);
    if (st != HC_OK) {
      cli_error("%s", st == HC_ERR_NOMEM ? "out of memory" : err);
      rc = st == HC_ERR_NOMEM ? CLI_FAIL : CLI_USAGE;
      break;
    }
    char **all = realloc(*groups, (*ngroups + ng + 1) * sizeof *all);
    if (!all) {
      hc_metrics_groups_free(g);
      cli_error("out of memory");
      rc = CLI_FAIL;
      break;
    }
    *groups = all;
    for (size_t k = 0; k < ng; k++) { /* a metric named twice is planned once */
      int dup = 0;
      for (size_t j = 0; j < *ngroups && !dup; j++)
        dup = strcmp(all[j], g[k]) == 0;
      if (dup)
        free(g[k]);
      else
        all[(*ngroups)++] = g[k];
    }
    all[*ngroups] = NULL;
    free(g); /* the strings moved */
  }
  hc_metrics_free(m);
  if (rc != CLI_OK) {
    hc_metrics_groups_free(*groups);
    *groups = NULL;
    *ngroups = 0;
  }
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
                                       {"metrics", required_argument, 0, 'M'},
                                       {"metrics-file", required_argument, 0, 'f'},
                                       {"device", required_argument, 0, 'd'},
                                       {"max-counters-per-pass", required_argument, 0, 'm'},
                                       {"format", required_argument, 0, 'F'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int fmt = REPORT_TABLE, o, rc = CLI_USAGE;
  const char *device = NULL, *fmt_arg = NULL, *max_arg = NULL;
  const char **lists = NULL, **groups = NULL, **mlists = NULL, **mfiles = NULL;
  size_t nlists = 0, ngroups = 0, nmlists = 0, nmfiles = 0;
  char **mgroups = NULL;
  size_t nmgroups = 0;
  unsigned max = 0;
  opterr = 0;
  while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (o) {
    case 'c':
    case 'g':
    case 'M':
    case 'f':
      if (o == 'c'   ? push_arg(&lists, &nlists, optarg)
          : o == 'g' ? push_arg(&groups, &ngroups, optarg)
          : o == 'M' ? push_arg(&mlists, &nmlists, optarg)
                     : push_arg(&mfiles, &nmfiles, optarg)) {
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
  if (!nlists && !ngroups && !nmlists) {
    cli_error(
        "plan: nothing to plan: give --counters LIST, --metrics LIST or --group NAME=LIST (see 'hubprof "
        "plan --help')");
    goto out;
  }
  if (nmfiles && !nmlists) {
    cli_error("plan: --metrics-file needs --metrics LIST (the metrics to plan)");
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
  rc = cli_metric_groups(p, mlists, nmlists, mfiles, nmfiles, &mgroups, &nmgroups);
  for (size_t i = 0; rc == CLI_OK && i < nmgroups; i++)
    if (push_arg(&groups, &ngroups, mgroups[i])) {
      cli_error("out of memory");
      rc = CLI_FAIL;
    }
  if (rc != CLI_OK) {
    hc_provider_close(p);
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
  free(mlists);
  free(mfiles);
  hc_metrics_groups_free(mgroups);
  return rc;
}
