/* `hubprof plan --counters LIST --metrics LIST`: the passes a set of counters and metrics needs on a device
 * — which counters go together (a metric's in one pass where the limits allow), under the device's per-pass
 * and per-block limits — printed without running anything. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "report.h"

#include "counters.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEVICE "cpu-perf"
#define FMT_LINE 100 /* --format line: the plan string only */

static const char *const plan_formats[] = {"table", "csv", "json", "line", NULL};
enum { PLAN_TABLE, PLAN_CSV, PLAN_JSON, PLAN_LINE };

static const cli_opt plan_opts[] = {
    {.name = "format",
     .kind = CLI_OPT_ENUM,
     .choices = plan_formats,
     .def = "table",
     .help = "table, csv or json (one row per counter), or line (the plan string: passes split by ';', "
             "counters by ',')"},
    {.name = "splits",
     .kind = CLI_OPT_FLAG,
     .help = "print the split report instead: one row per group (metric) split across passes, with its "
             "passes and counters (table, csv or json)"},
    {0},
};

static const cli_opt *const plan_tables[] = {cli_opts_counters, plan_opts, cli_opts_common, NULL};

CLI_COMMAND(
    plan, .usage = "plan [--counters LIST] [--metrics LIST] [--group NAME=LIST]... [--device D] [options]",
    .about = "Print the passes a set of counters needs on a device, without running anything: the\n"
             "fewest passes the device's limits allow (counters per pass and per hardware block),\n"
             "with the counters of one group (a metric's ratio partners) in one pass where they fit.\n"
             "Counters are checked first: unknown names, counters this machine cannot measure and\n"
             "impossible plans are errors. An NVIDIA chip (--device GH100): CUPTI's own pass count of\n"
             "the --counters list as one configuration (docs/cuda.md).",
    .tables = plan_tables)

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
    for (size_t b = 0; pl->pass_regs && b < pl->nblocks && b < lim->nblocks; b++) { /* registers taken */
      unsigned r = pl->pass_regs[(pl->pass[i] - 1) * pl->nblocks + b];
      if (r && w < sizeof blocks)
        w += (size_t)snprintf(blocks + w, sizeof blocks - w, "%s%s %u", w ? ", " : "", lim->blocks[b].block,
                              r);
    }
    for (size_t k = i; !pl->pass_regs && k < j;
         k++) { /* blocks in order of first appearance, with their counts */
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
    printf("pass %u: %zu counter%s (%s%s)\n", pl->pass[i], j - i, j - i == 1 ? "" : "s",
           pl->pass_regs ? "registers: " : "", blocks);
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
  for (size_t g = 0; rc == CLI_OK && pl->split_groups[g]; g++)
    printf("note: group '%s' is split over passes %s: its counters could not share one pass\n",
           pl->split_groups[g], pl->split_passes ? pl->split_passes[g] : "?");
  if (rc == CLI_OK && pl->nrepeated) {
    size_t acc = 0;
    for (size_t i = 0; i < pl->ncounters; i++)
      acc += pl->level_of && pl->level_of[i];
    printf("note: %zu counter%s measured in more than one pass: ", pl->nrepeated,
           pl->nrepeated == 1 ? " is" : "s are");
    printf("a counter shared by groups is measured again in each pass that holds one of them, so the groups "
           "stay "
           "whole%s\n",
           acc ? "; an accumulator is measured after every LEVEL counter" : "");
  }
  if (rc != CLI_OK) cli_error("out of memory");
  report_free(r);
  return rc;
}

/* The split report: every group whose counters could not share one pass, its passes and its counters. */
static int print_splits(const hc_plan *pl, int fmt) {
  static const report_col cols[] = {{"group", 0, 0}, {"passes", 0, 0}, {"counters", 0, 1}};
  report *r = report_new(cols, 3);
  int rc = r ? CLI_OK : CLI_FAIL;
  for (size_t g = 0; rc == CLI_OK && pl->split_groups[g]; g++) {
    const char *cells[] = {pl->split_groups[g], pl->split_passes[g], pl->split_counters[g]};
    if (report_add(r, cells)) rc = CLI_FAIL;
  }
  if (rc == CLI_OK)
    report_print(r, fmt == PLAN_TABLE ? REPORT_TABLE : (report_fmt)fmt,
                 fmt == PLAN_TABLE ? report_term_width() : 0, stdout);
  else
    cli_error("out of memory");
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

/* Split the --counters lists into distinct names (blanks around a name ignored; a name given twice kept
 * once). CLI_OK, CLI_USAGE (an empty name) or CLI_FAIL; *names and *buf to free. */
static int cupti_names(const char *const *lists, size_t nlists, char **buf, const char ***names, size_t *n) {
  size_t len = 0;
  for (size_t i = 0; i < nlists; i++)
    len += strlen(lists[i]) + 1;
  *n = 0;
  *names = NULL;
  *buf = malloc(len + 1);
  if (!*buf) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  char *w = *buf;
  for (size_t i = 0; i < nlists; i++) {
    for (const char *s = lists[i];;) {
      const char *e = strchr(s, ',');
      size_t l = e ? (size_t)(e - s) : strlen(s);
      while (l && (*s == ' ' || *s == '\t'))
        s++, l--;
      while (l && (s[l - 1] == ' ' || s[l - 1] == '\t'))
        l--;
      if (!l) {
        cli_error("plan: an empty name in --counters '%s'", lists[i]);
        return CLI_USAGE;
      }
      memcpy(w, s, l);
      w[l] = 0;
      size_t k = 0;
      while (k < *n && strcmp((*names)[k], w))
        k++;
      if (k == *n && push_arg(names, n, w)) {
        cli_error("out of memory");
        return CLI_FAIL;
      }
      w += l + 1;
      if (!e) break;
      s = e + 1;
    }
  }
  return CLI_OK;
}

/* The plan of an NVIDIA chip: CUPTI's own pass count of the whole list as one configuration (it does not say
 * which metric goes in which pass), and per metric the passes it takes alone. */
/* One plan per device list: "device=SEL:" then its table (or its plan line); the unaddressed lists alone
 * for every other device. */
static int plan_devices(hc_provider *p, const cli_dev_lists *dl, const char **groups, size_t ngroups,
                        unsigned max, int line) {
  const char **l = malloc((dl->nun + dl->naddr + 1) * sizeof *l);
  int rc = l ? CLI_OK : CLI_FAIL;
  if (!l) cli_error("out of memory");
  for (size_t k = 0; rc == CLI_OK && k <= dl->nsel; k++) {
    size_t n = cli_device_lists_of(dl, k, l);
    printf("%sdevice=%s:%s", k && !line ? "\n" : "", k < dl->nsel ? dl->sel[k] : "*", line ? " " : "\n");
    if (!n && !ngroups) {
      printf("(nothing: its dispatches run unmeasured)\n");
      continue;
    }
    hc_plan *pl;
    fflush(stdout);
    rc = cli_plan_lists("plan", p, l, n, groups, ngroups, max, &pl);
    if (rc == CLI_OK) rc = print_plan(p, pl, max, line ? FMT_LINE : PLAN_TABLE);
    hc_plan_free(pl);
  }
  free(l);
  return cli_finish_stdout(rc);
}

static int plan_cupti(hc_provider *p, const char *const *lists, size_t nlists, int fmt) {
  if (!nlists) {
    cli_error("plan: give the metrics of %s with --counters LIST ('hubprof list counters --device %s' names "
              "them)",
              hc_provider_limits(p)->device, hc_provider_limits(p)->device);
    return CLI_USAGE;
  }
  char *buf;
  const char **names;
  size_t n, passes = 0;
  int rc = cupti_names(lists, nlists, &buf, &names, &n);
  hc_status st = rc == CLI_OK ? hc_cupti_passes(p, names, n, &passes) : HC_OK;
  if (st != HC_OK) {
    cli_error("plan: %s", hc_provider_error(p));
    rc = CLI_FAIL;
  }
  size_t *alone = rc == CLI_OK ? calloc(n, sizeof *alone) : NULL;
  if (rc == CLI_OK && !alone) {
    cli_error("out of memory");
    rc = CLI_FAIL;
  }
  for (size_t i = 0; rc == CLI_OK && i < n; i++)
    if (hc_cupti_passes(p, &names[i], 1, &alone[i]) != HC_OK) {
      cli_error("plan: %s", hc_provider_error(p));
      rc = CLI_FAIL;
    }
  const char *dev = hc_provider_limits(p)->device;
  if (rc == CLI_OK && fmt == PLAN_LINE) { /* the one configuration */
    for (size_t i = 0; i < n; i++)
      printf("%s%s", i ? "," : "", names[i]);
    printf("\n");
  } else if (rc == CLI_OK) {
    static const report_col tcols[] = {
        {"COUNTER", 0, 0}, {"ALONE", 1, 0}, {"UNIT", 0, 0}, {"DESCRIPTION", 0, 1}};
    static const report_col dcols[] = {{"passes", 1, 0}, {"counter", 0, 0}, {"passes_alone", 1, 0},
                                       {"block", 0, 0},  {"unit", 0, 0},    {"description", 0, 0}};
    report *r = fmt == PLAN_TABLE ? report_new(tcols, 4) : report_new(dcols, 6);
    char all[32];
    snprintf(all, sizeof all, "%zu", passes);
    for (size_t i = 0; r && rc == CLI_OK && i < n; i++) {
      long b = hc_cupti_base(p, names[i]);
      const hc_counter *c = b >= 0 ? hc_provider_counter(p, (size_t)b) : NULL;
      char one[32];
      snprintf(one, sizeof one, "%zu", alone[i]);
      const char *cells[] = {
          all, names[i], one, c ? c->block : "", c ? c->unit : "", c ? c->description : ""};
      const char *tcells[] = {names[i], one, cells[4], cells[5]};
      if (report_add(r, fmt == PLAN_TABLE ? tcells : cells)) rc = CLI_FAIL;
    }
    if (r && rc == CLI_OK && fmt == PLAN_TABLE) {
      printf("%s: %zu counter%s in %zu pass%s (CUPTI's own count for the list as one configuration)\n", dev,
             n, n == 1 ? "" : "s", passes, passes == 1 ? "" : "es");
      printf("note: CUPTI does not say which metric is measured in which pass: the table is the one "
             "configuration; ALONE is the passes a metric takes by itself\n");
      report_print(r, REPORT_TABLE, report_term_width(), stdout);
    } else if (r && rc == CLI_OK) {
      report_print(r, (report_fmt)fmt, 0, stdout);
    }
    if (!r || rc != CLI_OK) {
      cli_error("out of memory");
      rc = CLI_FAIL;
    }
    report_free(r);
    if (rc == CLI_OK) rc = cli_finish_stdout(CLI_OK);
  }
  free(alone);
  free(names);
  free(buf);
  return rc;
}

int cmd_plan(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&plan_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  rc = CLI_USAGE;
  size_t nlists, ngroups0, nmlists, nmfiles, ngroups = 0;
  const char *const *lists = cli_list(&args, "counters", &nlists);
  const char *const *groups0 = cli_list(&args, "group", &ngroups0);
  const char *const *mlists = cli_list(&args, "metrics", &nmlists);
  const char *const *mfiles = cli_list(&args, "metrics-file", &nmfiles);
  const char *device = cli_str(&args, "device");
  unsigned max = (unsigned)cli_uint(&args, "max-counters-per-pass", 0);
  int fmt = cli_enum(&args, "format", PLAN_TABLE);
  const char **groups = NULL;
  char **mgroups = NULL;
  size_t nmgroups = 0;
  for (size_t i = 0; i < ngroups0; i++)
    if (push_arg(&groups, &ngroups, groups0[i])) {
      cli_error("out of memory");
      rc = CLI_FAIL;
      goto out;
    }
  if (args.noperands) {
    cli_error("plan: unexpected argument '%s' (plan runs nothing: to measure, use 'hubprof profile')",
              args.operands[0]);
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
  if (cli_device_open(NULL, device ? device : DEFAULT_DEVICE, &p) != CLI_OK) {
    rc = CLI_FAIL;
    goto out;
  }
  if (hc_provider_is_cupti(p)) { /* an NVIDIA chip: CUPTI counts the passes */
    if (max || cli_given(&args, "splits")) {
      cli_error("plan: %s is an NVIDIA chip: CUPTI plans its metrics as one configuration "
                "(--max-counters-per-pass and --splits do not apply)",
                hc_provider_limits(p)->device);
      rc = CLI_USAGE;
    } else { /* --metrics and --group: their metrics join the --counters lists ("NAME=" dropped) */
      rc = cli_metric_groups(p, mlists, nmlists, mfiles, nmfiles, &mgroups, &nmgroups);
      const char **all = NULL;
      size_t nall = 0;
      int oom = 0;
      for (size_t i = 0; rc == CLI_OK && !oom && i < nmgroups; i++)
        oom = push_arg(&groups, &ngroups, mgroups[i]);
      for (size_t i = 0; rc == CLI_OK && !oom && i < nlists + ngroups; i++) {
        const char *g = i < nlists ? lists[i] : groups[i - nlists];
        if (i >= nlists && strchr(g, '=')) g = strchr(g, '=') + 1;
        oom = push_arg(&all, &nall, g);
      }
      if (oom) {
        cli_error("out of memory");
        rc = CLI_FAIL;
      }
      if (rc == CLI_OK) rc = plan_cupti(p, all, nall, fmt);
      free(all);
    }
    hc_provider_close(p);
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
  cli_dev_lists dl; /* lists addressed per device ('device=SEL:LIST', device_lists.c): a plan per list */
  rc = cli_device_lists("plan", lists, nlists, &dl);
  if (rc == CLI_OK && dl.nsel && (fmt == PLAN_CSV || fmt == PLAN_JSON || cli_given(&args, "splits"))) {
    cli_error("plan: lists for some devices ('device=SEL:LIST') print one table or line per device list: "
              "not --format csv or json, nor --splits");
    rc = CLI_USAGE;
  }
  size_t nsel = dl.nsel;
  if (rc == CLI_OK && nsel) rc = plan_devices(p, &dl, groups, ngroups, max, fmt == PLAN_LINE);
  if (rc != CLI_OK || nsel) {
    cli_device_lists_free(&dl);
    hc_provider_close(p);
    goto out;
  }
  cli_device_lists_free(&dl);
  hc_plan *pl;
  rc = cli_plan_lists("plan", p, lists, nlists, groups, ngroups, max, &pl);
  if (rc == CLI_OK) {
    if (cli_given(&args, "splits") && fmt == PLAN_LINE) {
      cli_error("plan: --splits prints a table, csv or json, not --format line");
      rc = CLI_USAGE;
    } else if (cli_given(&args, "splits")) {
      rc = cli_finish_stdout(print_splits(pl, fmt));
    } else {
      rc = cli_finish_stdout(print_plan(p, pl, max, fmt == PLAN_LINE ? FMT_LINE : fmt));
    }
    hc_plan_free(pl);
  }
  hc_provider_close(p);
out:
  free(groups);
  hc_metrics_groups_free(mgroups);
  cli_args_free(&args);
  return rc;
}
