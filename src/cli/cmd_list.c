/* `hubprof list counters|metrics|devices`: the counters of a device (block, unit, whether they can be
 * measured here and why not), its derived metrics (unit, counters, measurable here), and the device
 * descriptions found, as a table, CSV or JSON; counters and metrics only those named (lists or @FILE, as
 * --counters and --metrics take them: a list file checked before a run). Runs nothing. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "report.h"

#include "../common/hu_buf.h"
#include "counters.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEVICE "cpu-perf"

static const cli_opt list_opts[] = {
    {.name = "device",
     .kind = CLI_OPT_STRING,
     .value = "D",
     .def = DEFAULT_DEVICE,
     .help = "list counters, list metrics: a device description's name or .device file ('hubprof list "
             "devices' names them; cpu-perf is this CPU through Linux perf_event; GH100 and the other NVIDIA "
             "chips come from CUPTI, docs/cuda.md)",
     .check = cli_check_device},
    {.name = "metrics-file",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "FILE",
     .help = "list metrics: more metric definitions",
     .check = cli_check_file},
    CLI_OPT_REPORT_FORMAT("table, csv or json"),
    {0},
};

static const cli_opt *const list_tables[] = {list_opts, cli_opts_common, NULL};

CLI_COMMAND(
    list,
    .usage =
        "list counters [NAMES|@FILE]... [--device D] [--format F]\n"
        "       hubprof list metrics [NAMES|@FILE]... [--device D] [--metrics-file FILE]... [--format F]\n"
        "       hubprof list devices [--format F]",
    .about = "counters: every counter of a device with its block, unit, whether it can be measured on\n"
             "this machine and, when not, why (no PMU, perf_event_paranoid, a description for planning\n"
             "only). metrics: the derived metrics for a device (share/hubprof/metrics, $HUBPROF_METRICS,\n"
             "--metrics-file; docs/metrics.md) with their unit, the counters they need and whether they\n"
             "can be measured here. devices: the device descriptions found (share/hubprof/devices,\n"
             "$HUBPROF_DEVICES) with their provider and per-pass limits, then the NVIDIA chips CUPTI's\n"
             "Profiler Host API describes when libcupti is found ($HUBPROF_CUPTI; docs/cuda.md).\n"
             "NAMES (a,b) or @FILE (one name a line, '#' comments: the lists --counters and --metrics\n"
             "take) list only those counters or metrics, in their order; an unknown one is an error\n"
             "naming its file and line.",
    .tables = list_tables)

/* "sw unlimited, core 4" */
static void block_limits(const hc_limits *l, char *out, size_t len) {
  size_t w = 0;
  out[0] = 0;
  for (size_t i = 0; i < l->nblocks && w < len; i++) {
    if (l->blocks[i].max == HC_UNLIMITED)
      w += (size_t)snprintf(out + w, len - w, "%s%s unlimited", i ? ", " : "", l->blocks[i].block);
    else
      w += (size_t)snprintf(out + w, len - w, "%s%s %u", i ? ", " : "", l->blocks[i].block, l->blocks[i].max);
  }
}

/* The names of the operands after the first (each "a,b" or @FILE), as indexes found by find (-1: unknown,
 * reported with its file and line); *nsel 0 without operands. CLI_OK, CLI_FAIL or CLI_USAGE. */
static int named(const cli_args *args, const char *what, long (*find)(const void *, const char *),
                 const void *ctx, size_t **sel, size_t *nsel) {
  *sel = NULL;
  *nsel = 0;
  size_t cap = 0;
  for (size_t i = 1; i < args->noperands; i++) {
    char why[1200];
    const char *x = cli_list_expand(args->operands[i], why, sizeof why); /* @FILE (list_file.c) */
    if (!x) {
      cli_error("list: %s", why);
      return CLI_FAIL;
    }
    for (const char *p = x;;) {
      size_t n = strcspn(p, ",");
      char *name = strndup(p, n);
      if (!name) {
        cli_error("out of memory");
        return CLI_FAIL;
      }
      if (!n) {
        cli_error("list: '%s': an empty name in the list", args->operands[i]);
        free(name);
        return CLI_USAGE;
      }
      long k = find(ctx, name);
      if (k < 0) {
        cli_error("list: unknown %s '%s'", what, name);
        free(name);
        return CLI_FAIL;
      }
      free(name);
      if (hu_grow((void **)sel, &cap, *nsel + 1, sizeof **sel)) {
        cli_error("out of memory");
        return CLI_FAIL;
      }
      (*sel)[(*nsel)++] = (size_t)k;
      if (!p[n]) break;
      p += n + 1;
    }
  }
  return CLI_OK;
}

static long find_counter(const void *p, const char *name) { return hc_provider_find(p, name); }
static long find_metric(const void *m, const char *name) { return hc_metrics_find(m, name); }

/* The table's footnotes: the distinct reasons a counter or metric is not available here, numbered. */
typedef struct footnotes {
  char text[16][300];
  size_t n;
} footnotes;

/* The AVAILABLE / MEASURABLE cell: "yes", or "no [k]" naming reason's footnote (added when new). */
static void footnote_mark(footnotes *f, int ok, const char *reason, char *mark, size_t len) {
  if (ok) {
    snprintf(mark, len, "yes");
    return;
  }
  size_t k = 0;
  while (k < f->n && strcmp(f->text[k], reason))
    k++;
  if (k == f->n && f->n < 16) snprintf(f->text[f->n++], sizeof f->text[0], "%s", reason);
  if (k < 16)
    snprintf(mark, len, "no [%zu]", k + 1);
  else
    snprintf(mark, len, "no");
}

/* The report, then (a table) its footnotes. */
static void print_with_footnotes(report *r, int fmt, const footnotes *f) {
  report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  if (fmt == REPORT_TABLE && f->n) {
    putchar('\n');
    for (size_t k = 0; k < f->n; k++)
      printf("[%zu] %s\n", k + 1, f->text[k]);
  }
}

/* A listing of counters or metrics: the ones named (all when none is), their report and its footnotes. */
typedef struct listing {
  const char *what;  /* "counter", "metric": the error lines and the summary */
  const char *here;  /* "available", "measurable": the summary */
  size_t *sel, nsel; /* indexes named on the command line (named); nsel 0: every one */
  size_t n;          /* rows: nsel, or the total */
  size_t avail;      /* rows available here (the caller counts them) */
  report *r;         /* table_cols for a table, data_cols for csv and json */
  footnotes notes;
} listing;

/* The names the operands give (find in ctx) and the report for fmt; l->n rows of total (l->what and l->here
 * set by the caller). CLI_OK, or CLI_FAIL / CLI_USAGE after one error line; listing_end in every case. */
static int listing_begin(listing *l, const cli_args *args, long (*find)(const void *, const char *),
                         const void *ctx, size_t total, int fmt, const report_col *table_cols, size_t ntable,
                         const report_col *data_cols, size_t ndata) {
  l->r = NULL;
  l->avail = 0;
  l->notes.n = 0;
  int rc = named(args, l->what, find, ctx, &l->sel, &l->nsel);
  l->n = l->nsel ? l->nsel : total;
  if (rc != CLI_OK) return rc;
  l->r = fmt == REPORT_TABLE ? report_new(table_cols, ntable) : report_new(data_cols, ndata);
  if (!l->r) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  return CLI_OK;
}

/* Row i's index in the provider or metric set. */
static size_t listing_index(const listing *l, size_t i) { return l->nsel ? l->sel[i] : i; }

/* rc CLI_OK: a table's summary line ("DEVICE — DESCRIPTION: N counters, M available here"), then the report
 * (a table only when print_empty or it has rows) with its footnotes; else a failed report_add is out of
 * memory. The listing freed; rc returned. */
static int listing_end(listing *l, int rc, int fmt, const char *device, const char *description,
                       int print_empty) {
  if (rc == CLI_OK) {
    if (fmt == REPORT_TABLE)
      printf("%s%s%s: %zu %s%s%s, %zu %s here\n", device, description[0] ? " — " : "", description, l->n,
             l->what, l->n == 1 ? "" : "s", l->nsel ? " named" : "", l->avail, l->here);
    if (fmt != REPORT_TABLE || l->n || print_empty) print_with_footnotes(l->r, fmt, &l->notes);
  } else if (l->r) {
    cli_error("out of memory");
  }
  report_free(l->r);
  free(l->sel);
  return rc;
}

static int list_counters(const cli_args *args, const char *device, int fmt) {
  hc_provider *p;
  if (cli_device_open(NULL, device, &p) != CLI_OK) return CLI_FAIL;
  static const report_col table_cols[] = {
      {"COUNTER", 0, 0}, {"BLOCK", 0, 0}, {"UNIT", 0, 0}, {"AVAILABLE", 0, 0}, {"DESCRIPTION", 0, 1}};
  static const report_col data_cols[] = {{"device", 0, 0},     {"counter", 0, 0},   {"block", 0, 0},
                                         {"unit", 0, 0},       {"available", 1, 0}, {"reason", 0, 0},
                                         {"description", 0, 0}};
  listing l = {.what = "counter", .here = "available"};
  int rc = listing_begin(&l, args, find_counter, p, hc_provider_count(p), fmt, table_cols, 5, data_cols, 7);
  const hc_limits *lim = hc_provider_limits(p);
  for (size_t i = 0; i < l.n && rc == CLI_OK; i++) {
    const hc_counter *c = hc_provider_counter(p, listing_index(&l, i));
    l.avail += c->available != 0;
    char mark[32];
    if (fmt == REPORT_TABLE) {
      footnote_mark(&l.notes, c->available, c->reason, mark, sizeof mark);
      const char *cells[] = {c->name, c->block, c->unit, mark, c->description};
      if (report_add(l.r, cells)) rc = CLI_FAIL;
    } else {
      const char *cells[] = {
          lim->device,   c->name, c->block, c->unit, c->available ? "1" : "0", c->available ? "" : c->reason,
          c->description};
      if (report_add(l.r, cells)) rc = CLI_FAIL;
    }
  }
  rc = listing_end(&l, rc, fmt, lim->device, hc_provider_description(p), 1);
  hc_provider_close(p);
  return rc;
}

/* Can every counter of a metric be measured here? 1, or 0 with the first reason. */
static int metric_measurable(const hc_provider *p, const hc_metrics *m, const hc_metric_info *mi,
                             const char **reason, char *buf, size_t len) {
  *reason = "";
  for (size_t k = 0; k < mi->ncounters; k++) {
    const char *name = hc_metrics_counter_name(m, mi->counters[k]);
    long i = hc_provider_find(p, name);
    const hc_counter *c = i >= 0 ? hc_provider_counter(p, (size_t)i) : NULL;
    if (!c || !c->available) {
      snprintf(buf, len, "%s: %s", name, c ? c->reason : "unknown counter");
      *reason = buf;
      return 0;
    }
  }
  return 1;
}

static int list_metrics(const cli_args *args, const char *device, const char *const *files, size_t nfiles,
                        int fmt) {
  hc_provider *p;
  if (cli_device_open(NULL, device, &p) != CLI_OK) return CLI_FAIL;
  hc_metrics *m;
  if (cli_metrics_open(p, files, nfiles, &m) != CLI_OK) {
    hc_provider_close(p);
    return CLI_FAIL;
  }
  static const report_col table_cols[] = {
      {"METRIC", 0, 0}, {"UNIT", 0, 0}, {"COUNTERS", 0, 1}, {"MEASURABLE", 0, 0}, {"DESCRIPTION", 0, 1}};
  static const report_col data_cols[] = {{"device", 0, 0},     {"metric", 0, 0},     {"unit", 0, 0},
                                         {"counters", 0, 0},   {"measurable", 1, 0}, {"reason", 0, 0},
                                         {"expression", 0, 0}, {"peak", 0, 0},       {"set", 0, 0},
                                         {"file", 0, 0},       {"description", 0, 0}};
  listing l = {.what = "metric", .here = "measurable"};
  int rc = listing_begin(&l, args, find_metric, m, hc_metrics_count(m), fmt, table_cols, 5, data_cols, 11);
  const hc_limits *lim = hc_provider_limits(p);
  for (size_t i = 0; i < l.n && rc == CLI_OK; i++) {
    const hc_metric_info *mi = hc_metrics_get(m, listing_index(&l, i));
    char counters[1024] = "", why[300], mark[32], line[32];
    size_t w = 0;
    for (size_t k = 0; k < mi->ncounters && w < sizeof counters; k++)
      w += (size_t)snprintf(counters + w, sizeof counters - w, "%s%s", k ? "," : "",
                            hc_metrics_counter_name(m, mi->counters[k]));
    if (!mi->ncounters) snprintf(counters, sizeof counters, "%s", fmt == REPORT_TABLE ? "(none)" : "");
    const char *reason;
    int ok = metric_measurable(p, m, mi, &reason, why, sizeof why);
    l.avail += ok;
    if (fmt == REPORT_TABLE) {
      const char *bare = ok ? NULL : strstr(reason, ": "); /* a footnote gives the counter's reason */
      footnote_mark(&l.notes, ok, bare ? bare + 2 : reason, mark, sizeof mark);
      const char *cells[] = {mi->name, mi->unit, counters, mark, mi->description};
      if (report_add(l.r, cells)) rc = CLI_FAIL;
    } else {
      char file[4200];
      snprintf(line, sizeof line, "%u", mi->line);
      snprintf(file, sizeof file, "%s:%s", mi->file, line);
      const char *cells[] = {lim->device,    mi->name, mi->unit, counters, ok ? "1" : "0", reason,
                             mi->expression, mi->peak, mi->set,  file,     mi->description};
      if (report_add(l.r, cells)) rc = CLI_FAIL;
    }
  }
  rc = listing_end(&l, rc, fmt, lim->device, "", 0);
  hc_metrics_free(m);
  hc_provider_close(p);
  return rc;
}

/* One row per chip CUPTI's Profiler Host API describes, when libcupti is found; a note on stderr when not. */
static int cupti_rows(report *r, int fmt) {
  hc_cupti *c;
  if (hc_cupti_open(&c) != HC_OK) {
    if (c) cli_warn("no NVIDIA chips listed: %s", hc_cupti_error(c));
    hc_cupti_close(c);
    return c ? CLI_OK : CLI_FAIL;
  }
  const char *const *chips;
  size_t n;
  int rc = CLI_OK;
  if (hc_cupti_chips(c, &chips, &n) != HC_OK) {
    cli_warn("no NVIDIA chips listed: %s", hc_cupti_error(c));
    n = 0;
  }
  for (size_t i = 0; i < n && rc == CLI_OK; i++) {
    size_t count;
    char cnt[32], desc[HC_ERROR_MAX + 64];
    const char *dash = fmt == REPORT_TABLE ? "-" : "";
    if (hc_cupti_metric_count(c, chips[i], &count) != HC_OK) { /* listed, with CUPTI's reason */
      snprintf(cnt, sizeof cnt, "%s", dash);
      snprintf(desc, sizeof desc, "NVIDIA %s: CUPTI names it but cannot describe it (%s)", chips[i],
               hc_cupti_error(c));
    } else {
      snprintf(cnt, sizeof cnt, "%zu", count);
      snprintf(desc, sizeof desc, "NVIDIA %s: metrics and pass counts from CUPTI's Profiler Host API",
               chips[i]);
    }
    const char *cells[] = {chips[i], "cupti", cnt, dash, dash, desc, hc_cupti_path(c)};
    if (report_add(r, cells)) rc = CLI_FAIL;
  }
  hc_cupti_close(c);
  return rc;
}

static int list_devices(int fmt) {
  char **paths;
  size_t n;
  if (hc_devices_list(&paths, &n) != HC_OK) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  static const report_col table_cols[] = {{"DEVICE", 0, 0},   {"PROVIDER", 0, 0},     {"COUNTERS", 1, 0},
                                          {"PER PASS", 0, 0}, {"BLOCK LIMITS", 0, 1}, {"DESCRIPTION", 0, 1}};
  static const report_col data_cols[] = {
      {"device", 0, 0},       {"provider", 0, 0},    {"counters", 1, 0}, {"max_per_pass", 1, 0},
      {"block_limits", 0, 0}, {"description", 0, 0}, {"path", 0, 0}};
  report *r = fmt == REPORT_TABLE ? report_new(table_cols, 6) : report_new(data_cols, 7);
  int rc = r ? CLI_OK : CLI_FAIL;
  for (size_t i = 0; i < n && rc == CLI_OK; i++) {
    hc_provider *p;
    hc_status st = hc_device_open(paths[i], &p);
    if (st != HC_OK) { /* a broken file does not hide the others */
      const char *err = hc_provider_error(p);
      cli_warn("%s", err[0] ? err : hc_status_str(st));
      hc_provider_close(p);
      continue;
    }
    const hc_limits *l = hc_provider_limits(p);
    char count[32], total[32], blocks[1024];
    snprintf(count, sizeof count, "%zu", hc_provider_count(p));
    if (l->max_per_pass)
      snprintf(total, sizeof total, "%u", l->max_per_pass);
    else
      snprintf(total, sizeof total, "%s", fmt == REPORT_TABLE ? "unlimited" : "");
    block_limits(l, blocks, sizeof blocks);
    const char *prov = hc_provider_measurable(p) ? hc_provider_name(p) : (fmt == REPORT_TABLE ? "-" : "");
    const char *cells[] = {l->device, prov, count, total, blocks, hc_provider_description(p), paths[i]};
    if (report_add(r, cells)) rc = CLI_FAIL;
    hc_provider_close(p);
  }
  if (rc == CLI_OK) rc = cupti_rows(r, fmt);
  if (rc == CLI_OK) {
    if (fmt == REPORT_TABLE && report_rows(r) == 0)
      printf("no device descriptions found (share/hubprof/devices next to hubprof, or $HUBPROF_DEVICES)\n");
    else
      report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  } else {
    cli_error("out of memory");
  }
  report_free(r);
  hc_devices_free(paths);
  return rc;
}

static int list(const cli_args *args) {
  int fmt = cli_enum(args, "format", REPORT_TABLE);
  const char *device = cli_str(args, "device");
  size_t nfiles;
  const char *const *files = cli_list(args, "metrics-file", &nfiles);
  if (!args->noperands) {
    cli_error("list: what to list? counters, metrics or devices (see 'hubprof list --help')");
    return CLI_USAGE;
  }
  const char *what = args->operands[0];
  if (args->noperands > 1 && strcmp(what, "counters") && strcmp(what, "metrics")) {
    cli_error("list: names to list (NAMES, @FILE) follow 'counters' or 'metrics' only (see 'hubprof list "
              "--help')");
    return CLI_USAGE;
  }
  if (nfiles && strcmp(what, "metrics")) {
    cli_error("list: --metrics-file applies to 'list metrics'");
    return CLI_USAGE;
  }
  if (strcmp(what, "metrics") == 0)
    return cli_finish_stdout(list_metrics(args, device ? device : DEFAULT_DEVICE, files, nfiles, fmt));
  if (strcmp(what, "counters") == 0)
    return cli_finish_stdout(list_counters(args, device ? device : DEFAULT_DEVICE, fmt));
  if (strcmp(what, "devices") == 0) {
    if (device) {
      cli_error("list: --device applies to 'list counters', not 'list devices'");
      return CLI_USAGE;
    }
    return cli_finish_stdout(list_devices(fmt));
  }
  static const char *const whats[] = {"counters", "metrics", "devices"};
  const char *sug = cli_suggest(what, whats, 3);
  if (sug)
    cli_error("list: cannot list '%s'; did you mean '%s'? (counters, metrics or devices)", what, sug);
  else
    cli_error("list: cannot list '%s' (counters, metrics or devices)", what);
  return CLI_USAGE;
}

int cmd_list(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&list_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  rc = list(&args);
  cli_args_free(&args);
  return rc;
}
