/* `hubprof analyze STORE`: top kernels per device — calls, total/avg/min/max device time and share of
 * the device's kernel time — as an aligned table fitted to the terminal, CSV or JSON. Reads through the hub.
 */
#include "cli.h"
#include "report.h"

#include "hubprof/hub.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void cmd_analyze_help(FILE *out) {
  fprintf(out, "usage: hubprof analyze [options] STORE\n\n"
               "Top kernels per device: calls, total / average / minimum / maximum device time\n"
               "(end - start of each dispatch) and the kernel's share of the device's kernel time,\n"
               "most expensive first. Any store format is read.\n\n"
               "options:\n"
               "  --format F      table (default; fitted to the terminal), csv or json; csv and json\n"
               "                  give times in nanoseconds\n"
               "  -n, --limit N   only the N most expensive kernels of each device\n"
               "  -h, --help      show this help\n");
}

typedef struct kstat {
  uint64_t agent, kernel;
  uint64_t calls, timed;
  int64_t total, min, max;
} kstat;

typedef struct names {
  uint64_t *ids;
  char **names;
  size_t n;
} names;

static void names_free(names *m) {
  for (size_t i = 0; i < m->n; i++)
    free(m->names[i]);
  free(m->ids);
  free(m->names);
}

static const char *names_get(const names *m, uint64_t id) {
  for (size_t i = 0; i < m->n; i++)
    if (m->ids[i] == id) return m->names[i];
  return "?";
}

/* id → name of a small table (agents, kernels): name column chosen by the caller. */
static hp_status load_names(hp_store *s, hp_table t, names *m) {
  hp_cursor *c;
  memset(m, 0, sizeof *m);
  hp_status st = hp_cursor_open(s, t, &c);
  if (st != HP_OK) return st;
  size_t cap = 0;
  union {
    hp_agent a;
    hp_kernel_symbol k;
  } row;
  for (;;) {
    memset(&row, 0, sizeof row);
    row.a.size = t == HP_TABLE_AGENT ? sizeof(hp_agent) : sizeof(hp_kernel_symbol);
    if ((st = hp_cursor_next(c, &row)) != HP_OK) break;
    const char *nm;
    uint64_t id;
    char buf[256];
    if (t == HP_TABLE_AGENT) {
      id = row.a.id;
      const char *base = row.a.product_name[0] ? row.a.product_name : row.a.name;
      if (row.a.device_index)
        snprintf(buf, sizeof buf, "%s#%d", base, row.a.device_index);
      else
        snprintf(buf, sizeof buf, "%s", base);
      nm = buf;
    } else {
      id = row.k.id;
      nm = row.k.display_name[0] ? row.k.display_name : row.k.name;
    }
    if (m->n == cap) {
      cap = cap ? 2 * cap : 32;
      uint64_t *ni = realloc(m->ids, cap * sizeof *ni);
      if (ni) m->ids = ni;
      char **nn = realloc(m->names, cap * sizeof *nn);
      if (nn) m->names = nn;
      if (!ni || !nn) {
        st = HP_ERR_NOMEM;
        break;
      }
    }
    m->ids[m->n] = id;
    if (!(m->names[m->n] = strdup(nm))) {
      st = HP_ERR_NOMEM;
      break;
    }
    m->n++;
  }
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

/* Aggregates per (agent, kernel) in an open-addressed table. */
typedef struct agg {
  kstat *v;
  size_t cap, n;
} agg;

static kstat *agg_get(agg *a, uint64_t agent, uint64_t kernel) {
  if (2 * (a->n + 1) > a->cap) {
    size_t nc = a->cap ? 2 * a->cap : 256;
    kstat *nv = calloc(nc, sizeof *nv);
    if (!nv) return NULL;
    for (size_t i = 0; i < a->cap; i++) {
      if (!a->v[i].calls) continue;
      size_t j = (a->v[i].agent * 31 + a->v[i].kernel) * 0x9E3779B97F4A7C15ULL >> 7 & (nc - 1);
      while (nv[j].calls)
        j = (j + 1) & (nc - 1);
      nv[j] = a->v[i];
    }
    free(a->v);
    a->v = nv;
    a->cap = nc;
  }
  size_t j = (agent * 31 + kernel) * 0x9E3779B97F4A7C15ULL >> 7 & (a->cap - 1);
  while (a->v[j].calls && !(a->v[j].agent == agent && a->v[j].kernel == kernel))
    j = (j + 1) & (a->cap - 1);
  if (!a->v[j].calls) {
    a->v[j] = (kstat){.agent = agent, .kernel = kernel};
    a->n++;
  }
  return &a->v[j];
}

static int by_agent_then_total(const void *x, const void *y) {
  const kstat *a = x, *b = y;
  if (a->agent != b->agent) return a->agent < b->agent ? -1 : 1;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  return a->kernel < b->kernel ? -1 : a->kernel > b->kernel;
}

static int analyze(hp_store *s, int fmt, long limit) {
  names agents, kernels;
  hp_status st = load_names(s, HP_TABLE_AGENT, &agents);
  if (st == HP_OK)
    st = load_names(s, HP_TABLE_KERNEL_SYMBOL, &kernels);
  else
    memset(&kernels, 0, sizeof kernels);
  agg a = {0};
  hp_cursor *c = NULL;
  if (st == HP_OK) st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  if (st == HP_OK) {
    hp_dispatch d = {.size = sizeof d};
    while ((st = hp_cursor_next(c, &d)) == HP_OK) {
      kstat *k = agg_get(&a, d.agent_id, d.kernel_id);
      if (!k) {
        st = HP_ERR_NOMEM;
        break;
      }
      k->calls++;
      if (d.start_ns && d.end_ns >= d.start_ns) {
        int64_t t = d.end_ns - d.start_ns;
        if (!k->timed || t < k->min) k->min = t;
        if (!k->timed || t > k->max) k->max = t;
        k->total += t;
        k->timed++;
      }
    }
    hp_cursor_close(c);
    if (st == HP_END) st = HP_OK;
  }
  if (st != HP_OK) {
    cli_error("%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    names_free(&agents);
    names_free(&kernels);
    free(a.v);
    return CLI_FAIL;
  }
  /* compact, sort per device by total time */
  size_t n = 0;
  for (size_t i = 0; i < a.cap; i++)
    if (a.v[i].calls) a.v[n++] = a.v[i];
  qsort(a.v, n, sizeof *a.v, by_agent_then_total);

  static const report_col table_cols[] = {{"DEVICE", 0, 1},    {"KERNEL", 0, 1},  {"CALLS", 1, 0},
                                          {"TOTAL(ms)", 1, 0}, {"AVG(us)", 1, 0}, {"MIN(us)", 1, 0},
                                          {"MAX(us)", 1, 0},   {"%", 1, 0}};
  static const report_col data_cols[] = {{"device", 0, 0},   {"kernel", 0, 0}, {"calls", 1, 0},
                                         {"total_ns", 1, 0}, {"avg_ns", 1, 0}, {"min_ns", 1, 0},
                                         {"max_ns", 1, 0},   {"percent", 1, 0}};
  report *r = report_new(fmt == REPORT_TABLE ? table_cols : data_cols, 8);
  int rc = r ? CLI_OK : CLI_FAIL;
  for (size_t i = 0; i < n && r;) {
    size_t j = i;
    int64_t dev_total = 0;
    while (j < n && a.v[j].agent == a.v[i].agent)
      dev_total += a.v[j++].total;
    for (size_t k = i; k < j && (limit <= 0 || (long)(k - i) < limit); k++) {
      kstat *e = &a.v[k];
      char cells[8][64];
      const char *cv[8] = {names_get(&agents, e->agent), names_get(&kernels, e->kernel)};
      snprintf(cells[2], 64, "%" PRIu64, e->calls);
      double pct = dev_total ? 100.0 * (double)e->total / (double)dev_total : 0;
      if (!e->timed) {
        for (int x = 3; x < 7; x++)
          snprintf(cells[x], 64, "-");
      } else if (fmt == REPORT_TABLE) {
        snprintf(cells[3], 64, "%.3f", (double)e->total / 1e6);
        snprintf(cells[4], 64, "%.2f", (double)e->total / (double)e->timed / 1e3);
        snprintf(cells[5], 64, "%.2f", (double)e->min / 1e3);
        snprintf(cells[6], 64, "%.2f", (double)e->max / 1e3);
      } else {
        snprintf(cells[3], 64, "%" PRId64, e->total);
        snprintf(cells[4], 64, "%.1f", (double)e->total / (double)e->timed);
        snprintf(cells[5], 64, "%" PRId64, e->min);
        snprintf(cells[6], 64, "%" PRId64, e->max);
      }
      snprintf(cells[7], 64, fmt == REPORT_TABLE ? "%.1f" : "%.4f", pct);
      for (int x = 2; x < 8; x++)
        cv[x] = cells[x];
      if (report_add(r, cv)) rc = CLI_FAIL;
    }
    i = j;
  }
  if (r && rc == CLI_OK) {
    if (fmt == REPORT_TABLE && report_rows(r) == 0)
      printf("no dispatches in %s\n", hp_store_path(s));
    else
      report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  }
  report_free(r);
  /* losses make every figure above a lower bound: say so */
  uint64_t lost = 0;
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
    hp_process p = {.size = sizeof p};
    while (hp_cursor_next(c, &p) == HP_OK)
      lost += p.lost_records;
    hp_cursor_close(c);
  }
  if (lost) cli_warn("%" PRIu64 " records were lost while tracing: calls and times are lower bounds", lost);
  if (hp_store_damage(s, NULL) != HP_OK) cli_warn("%s (figures cover the readable part)", hp_store_error(s));
  names_free(&agents);
  names_free(&kernels);
  free(a.v);
  return rc;
}

int cmd_analyze(int argc, char **argv) {
  static const struct option opts[] = {{"format", required_argument, 0, 'F'},
                                       {"limit", required_argument, 0, 'n'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int fmt = REPORT_TABLE, o;
  long limit = 0;
  opterr = 0;
  while ((o = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
    switch (o) {
    case 'F':
      if ((fmt = report_fmt_parse(optarg)) < 0) {
        cli_error("analyze: unknown output format '%s' (table, csv or json)", optarg);
        return CLI_USAGE;
      }
      break;
    case 'n': {
      char *end;
      limit = strtol(optarg, &end, 10);
      if (*end || limit < 1) {
        cli_error("analyze: --limit needs a positive number, not '%s'", optarg);
        return CLI_USAGE;
      }
      break;
    }
    case 'h': cmd_analyze_help(stdout); return cli_finish_stdout(CLI_OK);
    case ':': cli_error("analyze: option '%s' needs a value", argv[optind - 1]); return CLI_USAGE;
    default:
      cli_error("analyze: unknown option '%s' (see 'hubprof analyze --help')", argv[optind - 1]);
      return CLI_USAGE;
    }
  }
  if (argc - optind != 1) {
    cli_error("analyze: expected one STORE (see 'hubprof analyze --help')");
    return CLI_USAGE;
  }
  hp_store *s;
  hp_status st = hp_store_open(argv[optind], NULL, HP_READ, &s);
  if (st != HP_OK) {
    cli_error("%s", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    hp_store_abort(s);
    return CLI_FAIL;
  }
  int rc = analyze(s, fmt, limit);
  hp_store_close(s);
  return cli_finish_stdout(rc);
}
