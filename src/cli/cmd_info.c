/* `hubprof info STORE`: what a store holds — format, schema version, damage, rows per table,
 * processes and the time span of its dispatches — as text or JSON. Reads only through the hub. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "progress.h"
#include "report.h"

#include "../common/hu_text.h"

#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const info_formats[] = {"table", "json", NULL};

static const cli_opt info_opts[] = {
    {.name = "format",
     .kind = CLI_OPT_ENUM,
     .choices = info_formats,
     .def = "table",
     .help = "text for people, or one JSON object"},
    {.name = "json", .kind = CLI_OPT_FLAG, .flags = CLI_OPT_HIDDEN}, /* old spelling of --format json */
    {0},
};

static const cli_opt *const info_tables[] = {info_opts, cli_opts_quiet, cli_opts_common, NULL};

CLI_COMMAND(info, .usage = "info [--format table|json] STORE",
            .about =
                "Show what a profile store holds: its format and schema version, damage found while\n"
                "reading (a log cut short by a crash), rows per table, the processes with lost records,\n"
                "and the time span of its dispatches. Any format is detected automatically.",
            .tables = info_tables)

typedef struct span {
  int64_t first, last;
  uint64_t n;
  struct pcount {
    uint64_t id, n;
  } * per; /* dispatches per process id */
  size_t nper;
} span;

/* Count a dispatch of process `id` (the last one found is looked at first: rows come in runs). */
static int count_process(span *sp, uint64_t id) {
  for (size_t i = sp->nper; i-- > 0;)
    if (sp->per[i].id == id) {
      sp->per[i].n++;
      if (i + 1 != sp->nper) { /* keep the busiest at the end */
        struct pcount t = sp->per[i];
        sp->per[i] = sp->per[sp->nper - 1];
        sp->per[sp->nper - 1] = t;
      }
      return 0;
    }
  struct pcount *p = realloc(sp->per, (sp->nper + 1) * sizeof *p);
  if (!p) return -1;
  sp->per = p;
  sp->per[sp->nper++] = (struct pcount){id, 1};
  return 0;
}

static uint64_t dispatches_of(const span *sp, uint64_t id) {
  for (size_t i = 0; i < sp->nper; i++)
    if (sp->per[i].id == id) return sp->per[i].n;
  return 0;
}

/* The time span of the dispatches: the one pass over every row, so it shows progress on a terminal. */
static hp_status dispatch_span(hp_store *s, span *sp, uint64_t total, int quiet) {
  memset(sp, 0, sizeof *sp);
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  if (st != HP_OK) return st;
  hp_dispatch d = {.size = sizeof d};
  cli_progress *pr = cli_progress_start("reading", "dispatches", total, quiet);
  uint64_t rows = 0;
  while ((st = hp_cursor_next(c, &d)) == HP_OK) {
    if ((++rows & 1023) == 0) cli_progress_update(pr, rows);
    if (count_process(sp, d.process_id)) {
      st = HP_ERR_NOMEM;
      break;
    }
    int64_t a = d.start_ns ? d.start_ns : d.enqueue_ns, b = d.end_ns ? d.end_ns : a;
    if (!a) continue;
    if (!sp->n || a < sp->first) sp->first = a;
    if (!sp->n || b > sp->last) sp->last = b;
    sp->n++;
  }
  cli_progress_end(pr);
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

/* How a process ended: it closed its log, or not (SIGKILL, power loss: its end time is unknown), or its log
 * was cut short (a log store read up to a truncation). */
static const char *process_state(hp_store *s, const hp_process *p) {
  if (p->end_ns != 0) return "finished";
  return strcmp(hp_store_format(s), "log") == 0 && hp_store_damage(s, NULL) == HP_ERR_TRUNCATED ? "cut"
                                                                                                : "killed";
}

/* How a process ended, for the EXIT column: its exit code, SIGNAME, or "-" when unknown (or when the process
 * did not close its log and no signal is known: writers that predate the columns leave 0s). */
static const char *exit_text(const hp_process *p, char *b, size_t n) {
  if (!p->end_ns && p->exit_signal <= 0) { /* not closed and not seen killed: a code here is a writer's 0 */
    snprintf(b, n, "-");
    return b;
  }
  const char *abbrev = p->exit_signal > 0 ? sigabbrev_np((int)p->exit_signal) : NULL;
  if (abbrev)
    snprintf(b, n, "SIG%s", abbrev);
  else if (p->exit_signal > 0)
    snprintf(b, n, "signal %" PRId64, p->exit_signal);
  else if (p->exit_code >= 0)
    snprintf(b, n, "%" PRId64, p->exit_code);
  else
    snprintf(b, n, "-");
  return b;
}

/* Host name of a node id (small table: looked up by scanning). */
static void node_name(hp_store *s, uint64_t id, char *out, size_t n) {
  snprintf(out, n, "?");
  hp_cursor *c;
  if (hp_cursor_open(s, HP_TABLE_NODE, &c) != HP_OK) return;
  hp_node r = {.size = sizeof r};
  while (hp_cursor_next(c, &r) == HP_OK)
    if (r.id == id) {
      snprintf(out, n, "%s", r.hostname);
      break;
    }
  hp_cursor_close(c);
}

/* Per-device plans (profile --counters 'device=SEL:LIST'): metadata "device_plan.INDEX" = "NAME = PLAN",
 * written by the collector at each device's first dispatch; as "device plan" lines or a JSON list. */
static void print_device_plans(hp_store *s, int json) {
  int n = 0;
  for (int i = 0; i < 256; i++) {
    char key[32];
    snprintf(key, sizeof key, "device_plan.%d", i);
    const char *v = hp_store_metadata(s, key);
    if (!v) continue;
    const char *eq = strstr(v, " = ");
    char *name = strndup(v, eq ? (size_t)(eq - v) : strlen(v));
    const char *plan = eq ? eq + 3 : "";
    if (json) {
      printf("%s{\"index\": %d, \"device\": ", n ? ", " : "\"device_plans\": [", i);
      report_json_text(stdout, name ? name : "");
      printf(", \"plan\": ");
      report_json_text(stdout, plan);
      printf("}");
    } else {
      char *t;
      printf("device plan     #%d %s: %s\n", i, hu_term_clean(name ? name : "", &t),
             *plan ? plan : "(none: its dispatches ran unmeasured)");
      free(t);
    }
    free(name);
    n++;
  }
  if (json && n) printf("], ");
}

static int print_info(hp_store *s, int json, int quiet) {
  uint64_t counts[HP_TABLE_COUNT];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    hp_status st = hp_store_count(s, (hp_table)t, &counts[t]);
    if (st != HP_OK) {
      cli_error("%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
      return CLI_FAIL;
    }
  }
  span sp;
  hp_status st = dispatch_span(s, &sp, counts[HP_TABLE_DISPATCH], quiet);
  if (st != HP_OK) {
    free(sp.per);
    cli_error("%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    return CLI_FAIL;
  }
  uint64_t dmg_off = 0;
  hp_status dmg = hp_store_damage(s, &dmg_off);

  if (json) {
    printf("{\"path\": ");
    report_json_text(stdout, hp_store_path(s));
    printf(", \"format\": ");
    report_json_text(stdout, hp_store_format(s));
    printf(", \"schema_version\": ");
    report_json_text(stdout, hp_store_schema_version(s));
    printf(", \"damage\": ");
    if (dmg == HP_OK)
      printf("null");
    else {
      printf("{\"status\": ");
      report_json_text(stdout, hp_status_str(dmg));
      printf(", \"offset\": %" PRIu64 ", \"message\": ", dmg_off);
      report_json_text(stdout, hp_store_error(s));
      printf("}");
    }
    printf(", \"rows\": {");
    for (int t = 0; t < HP_TABLE_COUNT; t++)
      printf("%s\"%s\": %" PRIu64, t ? ", " : "", hp_table_describe((hp_table)t)->name, counts[t]);
    printf("}, \"processes\": [");
  } else {
    char *t1, *t2, *t3; /* text of the store: control characters made visible */
    printf("path            %s\n", hu_term_clean(hp_store_path(s), &t1));
    printf("format          %s\n", hp_store_format(s));
    printf("schema version  %s\n", hu_term_clean(hp_store_schema_version(s), &t2));
    printf("damage          %s\n", dmg == HP_OK ? "none" : hu_term_clean(hp_store_error(s), &t3));
    free(t1);
    free(t2);
    if (dmg != HP_OK) free(t3);
    printf("\nrows\n");
    for (int t = 0; t < HP_TABLE_COUNT; t++)
      printf("  %-15s %12" PRIu64 "\n", hp_table_describe((hp_table)t)->name, counts[t]);
    printf("\nprocesses\n  %-8s %-8s %-5s %-16s %-9s %-8s %-14s %-10s %-8s %s\n", "PID", "PPID", "RANK",
           "HOST", "STATE", "EXIT", "DURATION(s)", "DISPATCHES", "LOST", "COMMAND");
  }
  hp_cursor *c;
  uint64_t lost = 0, unfinished = 0;
  int first = 1;
  hp_status pst = hp_cursor_open(s, HP_TABLE_PROCESS, &c);
  if (pst == HP_OK) {
    hp_process p = {.size = sizeof p};
    char host[128];
    while ((pst = hp_cursor_next(c, &p)) == HP_OK) {
      node_name(s, p.node_id, host, sizeof host);
      lost = lost + p.lost_records < lost ? UINT64_MAX : lost + p.lost_records; /* saturated, never 0 */
      const char *state = process_state(s, &p);
      unfinished += p.end_ns == 0;
      uint64_t nd = dispatches_of(&sp, p.id);
      /* in double: stored times may be anything, INT64_MIN and INT64_MAX included */
      double dur = p.end_ns > p.start_ns && p.start_ns ? ((double)p.end_ns - (double)p.start_ns) / 1e9 : -1;
      if (json) {
        printf("%s{\"pid\": %" PRId64 ", \"ppid\": %" PRId64 ", \"rank\": %" PRId64 ", \"host\": ",
               first ? "" : ", ", p.pid, p.ppid, p.rank);
        report_json_text(stdout, host);
        printf(", \"state\": \"%s\", \"start_ns\": %" PRId64 ", \"end_ns\": ", state, p.start_ns);
        if (p.end_ns)
          printf("%" PRId64, p.end_ns);
        else
          printf("null");
        printf(", \"dispatches\": %" PRIu64 ", \"lost_records\": %" PRIu64 ", \"exit_code\": ", nd,
               p.lost_records);
        if (p.exit_code >= 0)
          printf("%" PRId64, p.exit_code);
        else
          printf("null");
        printf(", \"exit_signal\": ");
        if (p.exit_signal >= 0)
          printf("%" PRId64, p.exit_signal);
        else
          printf("null");
        printf(", \"command\": ");
        report_json_text(stdout, p.command);
        printf("}");
      } else {
        char rank[24] = "-", durs[32] = "-";
        if (p.rank >= 0) snprintf(rank, sizeof rank, "%" PRId64, p.rank);
        if (dur >= 0) snprintf(durs, sizeof durs, "%.6f", dur);
        char *th, *tc, *vh, *vc; /* text that is not UTF-8 (a store from before the escaping) leaves escaped,
                                  * control characters visible */
        const char *hs = hu_utf8_clean(host, &th), *cmd = hu_utf8_clean(p.command, &tc);
        const char *hv = hu_term_clean(hs, &vh), *cv = hu_term_clean(cmd, &vc);
        char ex[32];
        printf("  %-8" PRId64 " %-8" PRId64 " %-5s %-16.16s %-9s %-8s %-14s %-10" PRIu64 " %-8" PRIu64
               " %s\n",
               p.pid, p.ppid, rank, hv, state, exit_text(&p, ex, sizeof ex), durs, nd, p.lost_records, cv);
        free(vh);
        free(vc);
        free(th);
        free(tc);
      }
      first = 0;
    }
    hp_cursor_close(c);
  }
  free(sp.per);
  if (pst != HP_END) { /* a process table that cannot be read is an error, not an empty list */
    fflush(stdout);
    cli_error("%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(pst));
    return CLI_FAIL;
  }
  const char *rmode = hp_store_metadata(s, "replay"), *rmem = hp_store_metadata(s, "replay_memory"),
             *rwt = hp_store_metadata(s, "replay_write_tracking"); /* how kernel replay saved memory */
  if (json) {
    printf("], \"lost_records\": %" PRIu64 ", ", lost);
    if (rmode) {
      printf("\"replay\": {\"mode\": ");
      report_json_text(stdout, rmode);
      printf(", \"memory\": ");
      report_json_text(stdout, rmem ? rmem : "");
      printf(", \"write_tracking\": ");
      report_json_text(stdout, rwt ? rwt : "");
      printf("}, ");
    }
    print_device_plans(s, 1);
    printf("\"time_span\": ");
    if (sp.n)
      printf("{\"first_ns\": %" PRId64 ", \"last_ns\": %" PRId64 "}}\n", sp.first, sp.last);
    else
      printf("null}\n");
  } else {
    if (first) printf("  (none)\n");
    if (lost) printf("\nlost records    %" PRIu64 " (the collector ran out of space)\n", lost);
    if (unfinished)
      printf("\nunfinished      %" PRIu64 " %s (killed or cut short): end time unknown, what %s recorded "
             "before is kept\n",
             unfinished,
             unfinished == 1 ? "process did not close its log" : "processes did not close their log",
             unfinished == 1 ? "it" : "they");
    if (sp.n)
      printf("\ntime span       %.6f s (first dispatch at %" PRId64 " ns, last end at %" PRId64 " ns)\n",
             ((double)sp.last - (double)sp.first) / 1e9, sp.first, sp.last);
    else
      printf("\ntime span       no timed dispatches\n");
    if (rmode)
      printf("replay          %s%s%s%s%s\n", rmode, rmem ? "; memory saved " : "", rmem ? rmem : "",
             rwt ? "; write tracking " : "", rwt ? rwt : "");
    print_device_plans(s, 0);
  }
  return CLI_OK;
}

int cmd_info(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&info_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  int json = cli_enum(&args, "format", 0) == 1, quiet = cli_given(&args, "quiet");
  if (cli_given(&args, "json")) {
    if (cli_str(&args, "format") && !json) {
      cli_error("info: --json and --format %s contradict each other: give one", cli_str(&args, "format"));
      cli_args_free(&args);
      return CLI_USAGE;
    }
    json = 1;
  }
  if (args.noperands != 1) {
    cli_error("info: expected one STORE (see 'hubprof info --help')");
    cli_args_free(&args);
    return CLI_USAGE;
  }
  const char *path = args.operands[0];
  cli_args_free(&args);
  hp_store *s = cli_open_store(path);
  if (!s) return CLI_FAIL;
  rc = print_info(s, json, quiet);
  if (rc == CLI_OK) rc = cli_check_readable("info", s); /* after showing what the store holds */
  hp_store_close(s);
  return cli_finish_stdout(rc);
}
