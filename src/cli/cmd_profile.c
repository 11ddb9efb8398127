/* `hubprof profile --counters LIST [--replay kernel|application|multiplex] [...] -- APP ARGS…`: plans the
 * counters into passes under the device's limits, then collects every pass either inside ONE run (kernel
 * replay: each dispatch replayed once per pass, its memory saved and restored), with one run per pass
 * (application replay), or inside ONE run with each dispatch measuring one pass, rotating (iteration
 * multiplexing, imputed afterwards), and writes ONE store. Every input error is reported before the
 * application starts, and then nothing is written. */
#include "cli.h"
#include "run_app.h"

#include "counters.h"
#include "metrics.h"
#include "hubprof/hub.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void cmd_profile_help(FILE *out) {
  fprintf(out,
          "usage: hubprof profile --counters LIST [options] [--] APP [ARGS...]\n\n"
          "Run APP and measure counters on every kernel dispatch. The counters are planned into passes\n"
          "under the device's per-pass limits (the plan is printed first; 'hubprof plan' shows it\n"
          "without running anything). Kernel replay (the default) runs APP once and replays each dispatch\n"
          "once per pass, saving the memory it can write before the first pass and restoring what it\n"
          "changed before the others, so APP sees one execution and every counter describes the same one.\n"
          "Application replay runs APP once per pass and matches the dispatches of every run to the\n"
          "first. Iteration multiplexing runs APP once and each dispatch once: successive dispatches of a\n"
          "kernel (or launch) measure successive passes, and each counter a dispatch did not measure is\n"
          "imputed from the mean of the kernel's measured values (marked imputed), for kernels whose\n"
          "dispatches covered every pass; the others are reported and get no imputed values.\n"
          "The result is ONE store: one row per dispatch, counter values tagged with their pass.\n"
          "hubprof exits with APP's own exit status (that of the first run).\n\n"
          "options:\n"
          "  -c, --counters LIST          counters to measure, comma-separated (repeatable);\n"
          "                               'hubprof list counters' shows them\n"
          "  -g, --group NAME=C1,C2       counters that belong together (one metric): kept in one pass\n"
          "                               where the limits allow (repeatable)\n"
          "  --replay MODE                how passes are collected: kernel (the default), application or\n"
          "                               multiplex (iteration multiplexing); one mode per run\n"
          "  --multiplex-policy P         multiplexing: rotate passes over the dispatches of the same\n"
          "                               kernel (P = kernel, the default) or of the same kernel, global\n"
          "                               and work-group sizes (P = launch)\n"
          "  --max-counters-per-pass N    at most N counters in one pass (and the device's own limits)\n"
          "  --device D                   device description giving the limits (name or .device path;\n"
          "                               default: cpu-perf)\n"
          "  --match name|grid|all        application replay: how dispatches of later runs are matched to\n"
          "                               the first run's: kernel name and order of that kernel (name);\n"
          "                               also global and work-group sizes (grid, the default); also the\n"
          "                               position in the whole sequence (all). Unmatched dispatches are\n"
          "                               reported and their counters left out, never joined to another\n"
          "  -o, --output OUT             the profile store (default: APP.hubprof.db, or .log / .parquet)\n"
          "  --format F                   format of OUT: ");
  for (const char *const *f = hp_formats(); *f; f++)
    fprintf(out, "%s%s", *f, f[1] ? ", " : "");
  fprintf(out, " (default: rocpd)\n"
               "  -f, --force                  replace OUT if it exists\n"
               "  --preload                    also load the collector with LD_PRELOAD\n"
               "  -q, --quiet                  no plan, progress or summary\n"
               "  -h, --help                   show this help\n\n"
               "Example: hubprof profile --counters task-clock,page-faults,context-switches \\\n"
               "           --max-counters-per-pass 1 -o prof.db -- ./app\n");
}

#define MAX_LISTS 64

/* The plan on stderr: one line per pass. */
static void print_plan(const hc_plan *plan, const char *device, unsigned maxpp, const char *replay,
                       const char *policy) {
  fprintf(stderr, "hubprof: plan: %zu counter%s in %zu pass%s on %s", plan->ncounters,
          plan->ncounters == 1 ? "" : "s", plan->npasses, plan->npasses == 1 ? "" : "es", device);
  if (maxpp) fprintf(stderr, ", at most %u per pass", maxpp);
  if (policy)
    fprintf(stderr, ", iteration multiplexing (policy '%s')\n", policy);
  else
    fprintf(stderr, ", %s replay\n", replay);
  for (size_t p = 1; p <= plan->npasses; p++) {
    fprintf(stderr, "hubprof:   pass %zu:", p);
    int first = 1;
    for (size_t i = 0; i < plan->ncounters; i++)
      if (plan->pass[i] == p) {
        fprintf(stderr, "%s%s", first ? " " : ", ", plan->names[i]);
        first = 0;
      }
    fputc('\n', stderr);
  }
  if (plan->split_groups && plan->split_groups[0]) {
    fprintf(stderr, "hubprof: warning: split across passes (they did not fit one):");
    for (char **g = plan->split_groups; *g; g++)
      fprintf(stderr, " %s", *g);
    fputc('\n', stderr);
  }
}

int cmd_profile(int argc, char **argv) {
  static const struct option opts[] = {{"counters", required_argument, 0, 'c'},
                                       {"group", required_argument, 0, 'g'},
                                       {"metrics", required_argument, 0, 'E'},
                                       {"metrics-file", required_argument, 0, 'Y'},
                                       {"replay", required_argument, 0, 'R'},
                                       {"multiplex-policy", required_argument, 0, 'X'},
                                       {"max-counters-per-pass", required_argument, 0, 'M'},
                                       {"device", required_argument, 0, 'D'},
                                       {"match", required_argument, 0, 'm'},
                                       {"output", required_argument, 0, 'o'},
                                       {"format", required_argument, 0, 'F'},
                                       {"force", no_argument, 0, 'f'},
                                       {"preload", no_argument, 0, 'P'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  run_opts ro = {.mode = "profile", .format = "rocpd"};
  const char *counters[MAX_LISTS], *groups[MAX_LISTS], *replay = NULL, *device = NULL, *match = NULL,
                                                       *policy = NULL;
  const char *mlists[MAX_LISTS], *mfiles[MAX_LISTS];
  size_t ncounters = 0, ngroups = 0, nmlists = 0, nmfiles = 0;
  unsigned maxpp = 0;
  int o;
  opterr = 0;
  /* '+': stop at the first non-option, so APP's own options are never taken for ours */
  while ((o = getopt_long(argc, argv, "+:c:g:o:fqh", opts, NULL)) != -1) {
    switch (o) {
    case 'c':
    case 'g':
      if ((o == 'c' ? ncounters : ngroups) == MAX_LISTS) {
        cli_error("profile: too many --%s options", o == 'c' ? "counters" : "group");
        return CLI_USAGE;
      }
      if (o == 'c')
        counters[ncounters++] = optarg;
      else
        groups[ngroups++] = optarg;
      break;
    case 'E':
    case 'Y':
      if ((o == 'E' ? nmlists : nmfiles) == MAX_LISTS) {
        cli_error("profile: too many --%s options", o == 'E' ? "metrics" : "metrics-file");
        return CLI_USAGE;
      }
      if (o == 'E')
        mlists[nmlists++] = optarg;
      else
        mfiles[nmfiles++] = optarg;
      break;
    case 'R':
      if (strcmp(optarg, "kernel") != 0 && strcmp(optarg, "application") != 0 &&
          strcmp(optarg, "multiplex") != 0) {
        cli_error("profile: --replay must be 'kernel', 'application' or 'multiplex', not '%s'", optarg);
        return CLI_USAGE;
      }
      if (replay && strcmp(replay, optarg) != 0) {
        cli_error("profile: --replay given twice with different modes ('%s' and '%s'): they exclude each "
                  "other, choose one",
                  replay, optarg);
        return CLI_USAGE;
      }
      replay = optarg;
      break;
    case 'X':
      if (strcmp(optarg, "kernel") != 0 && strcmp(optarg, "launch") != 0) {
        cli_error("profile: --multiplex-policy must be 'kernel' or 'launch', not '%s'", optarg);
        return CLI_USAGE;
      }
      if (policy && strcmp(policy, optarg) != 0) {
        cli_error("profile: --multiplex-policy given twice with different policies ('%s' and '%s')", policy,
                  optarg);
        return CLI_USAGE;
      }
      policy = optarg;
      break;
    case 'M': {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || end == optarg || v < 1 || v > 100000) {
        cli_error("profile: --max-counters-per-pass must be a number from 1, not '%s'", optarg);
        return CLI_USAGE;
      }
      if (maxpp && maxpp != (unsigned)v) {
        cli_error("profile: --max-counters-per-pass given twice with different values");
        return CLI_USAGE;
      }
      maxpp = (unsigned)v;
      break;
    }
    case 'D':
      if (device && strcmp(device, optarg) != 0) {
        cli_error("profile: --device given twice ('%s' and '%s')", device, optarg);
        return CLI_USAGE;
      }
      device = optarg;
      break;
    case 'm':
      if (strcmp(optarg, "name") != 0 && strcmp(optarg, "grid") != 0 && strcmp(optarg, "all") != 0) {
        cli_error("profile: --match must be 'name', 'grid' or 'all', not '%s'", optarg);
        return CLI_USAGE;
      }
      if (match && strcmp(match, optarg) != 0) {
        cli_error("profile: --match given twice with different policies ('%s' and '%s')", match, optarg);
        return CLI_USAGE;
      }
      match = optarg;
      break;
    case 'o': ro.output = optarg; break;
    case 'F': ro.format = optarg; break;
    case 'f': ro.force = 1; break;
    case 'P': ro.preload = 1; break;
    case 'q': ro.quiet = 1; break;
    case 'h': cmd_profile_help(stdout); return cli_finish_stdout(CLI_OK);
    case ':': cli_error("profile: option '%s' needs a value", argv[optind - 1]); return CLI_USAGE;
    default:
      cli_error("profile: unknown option '%s' (see 'hubprof profile --help')", argv[optind - 1]);
      return CLI_USAGE;
    }
  }
  if (!replay) replay = "kernel";
  int app = strcmp(replay, "application") == 0, mux = strcmp(replay, "multiplex") == 0;
  if (match && !app) {
    cli_error("profile: --match applies to application replay only (%s); add --replay application or drop "
              "--match",
              mux ? "iteration multiplexing runs once and matches nothing: --multiplex-policy chooses how "
                    "dispatches are grouped"
                  : "kernel replay measures every pass of the same dispatch: nothing to match");
    return CLI_USAGE;
  }
  if (policy && !mux) {
    cli_error("profile: --multiplex-policy applies to iteration multiplexing only (this is %s replay); add "
              "--replay multiplex or drop --multiplex-policy",
              replay);
    return CLI_USAGE;
  }
  if (!ncounters && !ngroups && !nmlists) {
    cli_error(
        "profile: no counters requested: --counters LIST or --metrics LIST (see 'hubprof list counters', "
        "'hubprof list metrics')");
    return CLI_USAGE;
  }
  if (nmfiles && !nmlists) {
    cli_error("profile: --metrics-file needs --metrics LIST (the metrics to collect)");
    return CLI_USAGE;
  }
  if (optind >= argc) {
    cli_error("profile: no application given: hubprof profile --counters LIST [options] -- APP [ARGS...]");
    return CLI_USAGE;
  }

  /* the device, its provider and the plan: every error here comes before the application starts */
  const char *dev = device ? device : "cpu-perf";
  char err[1024] = "";
  hc_provider *prov = NULL;
  hc_status st = hc_device_open(dev, &prov, err, sizeof err);
  if (st != HC_OK) {
    cli_error("profile: %s", err[0] ? err : hc_status_str(st));
    return st == HC_ERR_UNKNOWN ? CLI_USAGE : CLI_FAIL;
  }
  if (!hc_provider_measurable(prov)) {
    cli_error("profile: device '%s' cannot be measured on this machine (no provider for it here); "
              "'hubprof plan --device %s' shows its plan",
              dev, dev);
    hc_provider_close(prov);
    return CLI_FAIL;
  }
  /* metrics become groups of counters the planner keeps together (ratio partners in one pass) */
  char **mgroups = NULL;
  size_t nmgroups = 0;
  int mrc = cli_metric_groups(prov, mlists, nmlists, mfiles, nmfiles, &mgroups, &nmgroups);
  if (mrc != CLI_OK) {
    hc_provider_close(prov);
    return mrc;
  }
  if (ngroups + nmgroups > MAX_LISTS) {
    cli_error("profile: too many metric groups (%zu)", ngroups + nmgroups);
    hc_metrics_groups_free(mgroups);
    hc_provider_close(prov);
    return CLI_USAGE;
  }
  for (size_t i = 0; i < nmgroups; i++)
    groups[ngroups++] = mgroups[i];
  hc_plan_args pa = {.counters = counters,
                     .ncounters = ncounters,
                     .groups = groups,
                     .ngroups = ngroups,
                     .max_per_pass = maxpp,
                     .need_available = 1};
  hc_plan *plan = NULL;
  st = hc_plan_text(prov, &pa, &plan, err, sizeof err);
  hc_metrics_groups_free(mgroups); /* the plan holds its own copies of the names */
  if (st != HC_OK) {
    cli_error("profile: %s", err[0] ? err : hc_status_str(st));
    hc_provider_close(prov);
    return st == HC_ERR_UNKNOWN || st == HC_ERR_INVALID ? CLI_USAGE : CLI_FAIL;
  }
  char *plan_str = hc_plan_format(plan);
  if (!plan_str) {
    cli_error("profile: out of memory");
    hc_plan_free(plan);
    hc_provider_close(prov);
    return CLI_FAIL;
  }
  ro.plan = plan_str;
  ro.provider = hc_provider_name(prov);
  ro.npasses = plan->npasses;
  ro.match = match ? match : "grid";
  ro.multiplex = mux ? (policy ? policy : "kernel") : NULL;
  const hc_limits *lim = hc_provider_limits(prov);
  if (!ro.quiet) print_plan(plan, lim && lim->device[0] ? lim->device : dev, maxpp, replay, ro.multiplex);
  int rc = app ? app_replay(&ro, plan, prov, argc - optind, argv + optind)
               : run_app(&ro, argc - optind, argv + optind);
  free(plan_str);
  hc_plan_free(plan);
  hc_provider_close(prov);
  return rc;
}
