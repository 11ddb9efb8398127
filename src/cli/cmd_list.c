/* `hubprof list counters|devices`: the counters of a device (block, unit, whether they can be
 * measured here and why not) and the device descriptions found, as a table, CSV or JSON. Runs nothing. */
#include "cli.h"
#include "report.h"

#include "counters.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEVICE "cpu-perf"

void cmd_list_help(FILE *out) {
  fprintf(out, "usage: hubprof list counters [--device D] [--format F]\n"
               "       hubprof list devices [--format F]\n\n"
               "counters: every counter of a device with its block, unit, whether it can be measured on\n"
               "this machine and, when not, why (no PMU, perf_event_paranoid, a description for planning\n"
               "only). devices: the device descriptions found (share/hubprof/devices, $HUBPROF_DEVICES)\n"
               "with their provider and per-pass limits.\n\n"
               "options:\n"
               "  --device D      a device description's name or path (default " DEFAULT_DEVICE ": this CPU\n"
               "                  through Linux perf_event); 'hubprof list devices' names them\n"
               "  --format F      table (default), csv or json\n"
               "  -h, --help      show this help\n");
}

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

static int list_counters(const char *device, int fmt) {
  hc_provider *p;
  char err[1024];
  hc_status st = hc_device_open(device, &p, err, sizeof err);
  if (st != HC_OK) {
    cli_error("%s", err[0] ? err : hc_status_str(st));
    return CLI_FAIL;
  }
  static const report_col table_cols[] = {
      {"COUNTER", 0, 0}, {"BLOCK", 0, 0}, {"UNIT", 0, 0}, {"AVAILABLE", 0, 0}, {"DESCRIPTION", 0, 1}};
  static const report_col data_cols[] = {{"device", 0, 0},     {"counter", 0, 0},   {"block", 0, 0},
                                         {"unit", 0, 0},       {"available", 1, 0}, {"reason", 0, 0},
                                         {"description", 0, 0}};
  report *r = fmt == REPORT_TABLE ? report_new(table_cols, 5) : report_new(data_cols, 7);
  const hc_limits *lim = hc_provider_limits(p);
  size_t n = hc_provider_count(p), avail = 0, nreasons = 0;
  const char *reasons[16]; /* distinct reasons, footnoted in the table */
  int rc = r ? CLI_OK : CLI_FAIL;
  for (size_t i = 0; i < n && rc == CLI_OK; i++) {
    const hc_counter *c = hc_provider_counter(p, i);
    avail += c->available != 0;
    char mark[32];
    if (fmt == REPORT_TABLE) {
      if (c->available) {
        snprintf(mark, sizeof mark, "yes");
      } else {
        size_t k = 0;
        while (k < nreasons && strcmp(reasons[k], c->reason))
          k++;
        if (k == nreasons && nreasons < 16) reasons[nreasons++] = c->reason;
        if (k < 16)
          snprintf(mark, sizeof mark, "no [%zu]", k + 1);
        else
          snprintf(mark, sizeof mark, "no");
      }
      const char *cells[] = {c->name, c->block, c->unit, mark, c->description};
      if (report_add(r, cells)) rc = CLI_FAIL;
    } else {
      const char *cells[] = {
          lim->device,   c->name, c->block, c->unit, c->available ? "1" : "0", c->available ? "" : c->reason,
          c->description};
      if (report_add(r, cells)) rc = CLI_FAIL;
    }
  }
  if (rc == CLI_OK) {
    if (fmt == REPORT_TABLE) {
      const char *d = hc_provider_description(p);
      printf("%s%s%s: %zu counters, %zu available here\n", lim->device, d[0] ? " — " : "", d, n, avail);
    }
    report_print(r, (report_fmt)fmt, report_term_width(), stdout);
    if (fmt == REPORT_TABLE && nreasons) {
      putchar('\n');
      for (size_t k = 0; k < nreasons; k++)
        printf("[%zu] %s\n", k + 1, reasons[k]);
    }
  } else {
    cli_error("out of memory");
  }
  report_free(r);
  hc_provider_close(p);
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
    char err[1024];
    hc_status st = hc_device_open(paths[i], &p, err, sizeof err);
    if (st != HC_OK) { /* a broken file does not hide the others */
      cli_warn("%s", err[0] ? err : hc_status_str(st));
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

int cmd_list(int argc, char **argv) {
  static const struct option opts[] = {{"device", required_argument, 0, 'd'},
                                       {"format", required_argument, 0, 'F'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int fmt = -1, o;
  const char *device = NULL, *fmt_arg = NULL;
  opterr = 0;
  while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (o) {
    case 'd':
      if (device && strcmp(device, optarg)) {
        cli_error("list: --device given twice ('%s' and '%s')", device, optarg);
        return CLI_USAGE;
      }
      device = optarg;
      break;
    case 'F':
      if (fmt_arg && strcmp(fmt_arg, optarg)) {
        cli_error("list: --format given twice ('%s' and '%s')", fmt_arg, optarg);
        return CLI_USAGE;
      }
      if ((fmt = report_fmt_parse(optarg)) < 0) {
        cli_error("list: unknown output format '%s' (table, csv or json)", optarg);
        return CLI_USAGE;
      }
      fmt_arg = optarg;
      break;
    case 'h': cmd_list_help(stdout); return cli_finish_stdout(CLI_OK);
    case ':': cli_error("list: option '%s' needs a value", argv[optind - 1]); return CLI_USAGE;
    default:
      cli_error("list: unknown option '%s' (see 'hubprof list --help')", argv[optind - 1]);
      return CLI_USAGE;
    }
  }
  if (fmt < 0) fmt = REPORT_TABLE;
  if (argc - optind != 1) {
    cli_error(argc - optind ? "list: expected one of counters, devices (see 'hubprof list --help')"
                            : "list: what to list? counters or devices (see 'hubprof list --help')");
    return CLI_USAGE;
  }
  const char *what = argv[optind];
  if (strcmp(what, "counters") == 0)
    return cli_finish_stdout(list_counters(device ? device : DEFAULT_DEVICE, fmt));
  if (strcmp(what, "devices") == 0) {
    if (device) {
      cli_error("list: --device applies to 'list counters', not 'list devices'");
      return CLI_USAGE;
    }
    return cli_finish_stdout(list_devices(fmt));
  }
  cli_error("list: cannot list '%s' (counters or devices)", what);
  return CLI_USAGE;
}
