/* `hubprof diff A B`: two profiles compared per kernel (or kernel + launch sizes) through the analysis
 * library (ha_diff): calls, total and average device time, counters and metrics, with deltas, percent
 * changes and directions (faster/slower, higher/lower); kernels only in one store listed as new/missing. */
#include "cli.h"
#include "report.h"

#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SAME_PCT 1.0

void cmd_diff_help(FILE *out) {
  fprintf(out, "usage: hubprof diff [options] A B\n\n"
               "Compare two stores per kernel: calls, total and average device time, and the metrics\n"
               "both can give (and counters when asked), as A, B, the change B - A, the change in\n"
               "percent of A, and its direction: 'faster'/'slower' for the average time, 'higher'/\n"
               "'lower' for counters and metrics, 'same' under the threshold. Kernels are matched by\n"
               "name (with --by kernel-grid, also by grid and work-group sizes), and by device name\n"
               "when a store has several devices; kernels of only one store are 'new' (only in B) or\n"
               "'missing' (only in A). Rows: most device time first.\n\n"
               "options:\n"
               "  --by G             kernel (default) or kernel-grid\n"
               "  --metrics LIST     metrics to compare; 'none' for none (default: every metric both\n"
               "                     stores' counters give)\n"
               "  --counters LIST    counters to compare too (default none)\n"
               "  --metrics-file F   more metric definitions (repeatable)\n"
               "  --kernel GLOB      only kernels whose name matches (repeatable)\n"
               "  --device GLOB      only devices whose name matches (repeatable)\n"
               "  --threshold PCT    changes smaller than PCT percent are 'same' (default 1)\n"
               "  -n, --limit N      only the N kernels with the most device time\n"
               "  --format F         table (default; fitted to the terminal), csv or json (every column,\n"
               "                     times in nanoseconds)\n"
               "  -h, --help         show this help\n");
}

static int push(const char ***v, size_t *n, const char *s) {
  const char **nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  nv[(*n)++] = s;
  *v = nv;
  return 0;
}

static hp_status open_store(const char *path, hp_store **s) {
  hp_status st = hp_store_open(path, NULL, HP_READ, s);
  if (st != HP_OK) {
    cli_error("%s", *s && hp_store_error(*s)[0] ? hp_store_error(*s) : hp_status_str(st));
    hp_store_abort(*s);
    *s = NULL;
  }
  return st;
}

int cmd_diff(int argc, char **argv) {
  static const struct option lo[] = {{"by", required_argument, 0, 'b'},
                                     {"metrics", required_argument, 0, 'm'},
                                     {"counters", required_argument, 0, 'c'},
                                     {"metrics-file", required_argument, 0, 'f'},
                                     {"kernel", required_argument, 0, 'k'},
                                     {"device", required_argument, 0, 'd'},
                                     {"threshold", required_argument, 0, 't'},
                                     {"limit", required_argument, 0, 'n'},
                                     {"format", required_argument, 0, 'F'},
                                     {"help", no_argument, 0, 'h'},
                                     {0, 0, 0, 0}};
  ha_query q = {.size = sizeof q, .group = HA_BY_KERNEL};
  const char **files = NULL, **kernels = NULL, **devices = NULL;
  size_t nfiles = 0, nkernels = 0, ndevices = 0;
  int fmt = REPORT_TABLE, c, rc = CLI_USAGE, have_m = 0, have_c = 0;
  double same = DEFAULT_SAME_PCT;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":n:h", lo, NULL)) != -1) {
    switch (c) {
    case 'b':
      if (!strcmp(optarg, "kernel"))
        q.group = HA_BY_KERNEL;
      else if (!strcmp(optarg, "kernel-grid"))
        q.group = HA_BY_KERNEL_GRID;
      else {
        cli_error("diff: unknown grouping '%s' (kernel or kernel-grid)", optarg);
        goto out;
      }
      break;
    case 'm':
    case 'c': {
      int *have = c == 'm' ? &have_m : &have_c;
      if (*have || !*optarg) {
        cli_error(*have ? "diff: --%s given twice (give one comma-separated list)"
                        : "diff: --%s needs a list",
                  c == 'm' ? "metrics" : "counters");
        goto out;
      }
      *have = 1;
      const char *v = !strcmp(optarg, "none") ? "" : optarg;
      if (c == 'm')
        q.metrics = v;
      else
        q.counters = v;
      break;
    }
    case 'f':
    case 'k':
    case 'd':
      if (c == 'f'   ? push(&files, &nfiles, optarg)
          : c == 'k' ? push(&kernels, &nkernels, optarg)
                     : push(&devices, &ndevices, optarg)) {
        cli_error("out of memory");
        rc = CLI_FAIL;
        goto out;
      }
      break;
    case 't': {
      char *end;
      same = strtod(optarg, &end);
      if (*end || end == optarg || !(same >= 0) || same > 1e6) {
        cli_error("diff: --threshold needs a percentage >= 0, not '%s'", optarg);
        goto out;
      }
      break;
    }
    case 'n': {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || end == optarg || v < 1) {
        cli_error("diff: --limit needs a positive number, not '%s'", optarg);
        goto out;
      }
      q.limit = v;
      break;
    }
    case 'F':
      if ((fmt = report_fmt_parse(optarg)) < 0) {
        cli_error("diff: unknown output format '%s' (table, csv or json)", optarg);
        goto out;
      }
      break;
    case 'h':
      cmd_diff_help(stdout);
      rc = cli_finish_stdout(CLI_OK);
      goto out;
    case ':': cli_error("diff: option '%s' needs a value", argv[optind - 1]); goto out;
    default: cli_error("diff: unknown option '%s' (see 'hubprof diff --help')", argv[optind - 1]); goto out;
    }
  }
  if (argc - optind != 2) {
    cli_error("diff: expected two stores, A and B (see 'hubprof diff --help')");
    goto out;
  }
  q.metric_files = files;
  q.nmetric_files = nfiles;
  q.kernels = kernels;
  q.nkernels = nkernels;
  q.devices = devices;
  q.ndevices = ndevices;
  hp_store *a = NULL, *b = NULL;
  rc = CLI_FAIL;
  if (open_store(argv[optind], &a) != HP_OK) goto out;
  if (open_store(argv[optind + 1], &b) != HP_OK) {
    hp_store_close(a);
    goto out;
  }
  ha_result *res;
  hp_status st = ha_diff(a, b, &q, same, &res);
  if (st != HP_OK) {
    cli_error("diff: %s", ha_last_error()[0] ? ha_last_error() : hp_status_str(st));
  } else {
    if (fmt == REPORT_TABLE) printf("A: %s\nB: %s\n\n", argv[optind], argv[optind + 1]);
    if (fmt == REPORT_TABLE && ha_result_nrows(res) == 0)
      printf("no dispatches in either store%s\n", nkernels || ndevices ? " match the filters" : "");
    else
      rc = cli_print_analysis(res, fmt, report_term_width());
    if (rc == CLI_OK && ha_result_lost_records(res))
      cli_warn("%" PRIu64 " records were lost while tracing: calls and times are lower bounds",
               ha_result_lost_records(res));
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
  free(files);
  free(kernels);
  free(devices);
  return rc;
}
