/* `hubprof analyze STORE`: top kernels per device — calls, total/avg/min/max device time and share of
 * the device's kernel time — as an aligned table fitted to the terminal, CSV or JSON. Reads through the hub.
 */
#include "cli.h"
#include "report.h"

#include "hubprof/analysis.h"
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

/* Print the result: the table shows times in ms/µs for people; CSV and JSON keep nanoseconds. */
static int print_result(const ha_result *res, int fmt) {
  static const report_col table_cols[] = {{"DEVICE", 0, 1},    {"KERNEL", 0, 1},  {"CALLS", 1, 0},
                                          {"TOTAL(ms)", 1, 0}, {"AVG(us)", 1, 0}, {"MIN(us)", 1, 0},
                                          {"MAX(us)", 1, 0},   {"%", 1, 0}};
  static const report_col data_cols[] = {{"device", 0, 0},   {"kernel", 0, 0}, {"calls", 1, 0},
                                         {"total_ns", 1, 0}, {"avg_ns", 1, 0}, {"min_ns", 1, 0},
                                         {"max_ns", 1, 0},   {"percent", 1, 0}};
  /* result columns: device kernel calls timed_calls total_ns avg_ns min_ns max_ns percent */
  report *r = report_new(fmt == REPORT_TABLE ? table_cols : data_cols, 8);
  if (!r) return CLI_FAIL;
  int rc = CLI_OK;
  for (size_t i = 0; i < ha_result_nrows(res); i++) {
    char cells[8][64];
    const char *cv[8] = {ha_result_text(res, i, 0), ha_result_text(res, i, 1)};
    snprintf(cells[2], 64, "%" PRId64, ha_result_int(res, i, 2));
    int timed = ha_result_int(res, i, 3) > 0;
    if (!timed) {
      for (int x = 3; x < 8; x++)
        snprintf(cells[x], 64, "-");
    } else if (fmt == REPORT_TABLE) {
      snprintf(cells[3], 64, "%.3f", ha_result_num(res, i, 4) / 1e6);
      snprintf(cells[4], 64, "%.2f", ha_result_num(res, i, 5) / 1e3);
      snprintf(cells[5], 64, "%.2f", ha_result_num(res, i, 6) / 1e3);
      snprintf(cells[6], 64, "%.2f", ha_result_num(res, i, 7) / 1e3);
      snprintf(cells[7], 64, "%.1f", ha_result_num(res, i, 8));
    } else {
      snprintf(cells[3], 64, "%" PRId64, ha_result_int(res, i, 4));
      snprintf(cells[4], 64, "%.1f", ha_result_num(res, i, 5));
      snprintf(cells[5], 64, "%" PRId64, ha_result_int(res, i, 6));
      snprintf(cells[6], 64, "%" PRId64, ha_result_int(res, i, 7));
      snprintf(cells[7], 64, "%.4f", ha_result_num(res, i, 8));
    }
    for (int x = 2; x < 8; x++)
      cv[x] = cells[x];
    if (report_add(r, cv)) rc = CLI_FAIL;
  }
  if (rc == CLI_OK) report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  report_free(r);
  return rc;
}

static int analyze(hp_store *s, int fmt, long limit) {
  ha_query q = {.size = sizeof q, .group = HA_BY_KERNEL, .limit = limit};
  ha_result *res;
  hp_status st = ha_run(s, &q, &res);
  if (st != HP_OK) {
    cli_error("%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    return CLI_FAIL;
  }
  int rc;
  if (fmt == REPORT_TABLE && ha_result_nrows(res) == 0) {
    printf("no dispatches in %s\n", hp_store_path(s));
    rc = CLI_OK;
  } else {
    rc = print_result(res, fmt);
  }
  /* losses make every figure a lower bound: say so */
  if (ha_result_lost_records(res))
    cli_warn("%" PRIu64 " records were lost while tracing: calls and times are lower bounds",
             ha_result_lost_records(res));
  if (hp_store_damage(s, NULL) != HP_OK) cli_warn("%s (figures cover the readable part)", hp_store_error(s));
  ha_result_free(res);
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
