/* `hubprof profile --counters LIST [--replay kernel|application|multiplex] [...] -- APP ARGS…`: plans the
 * counters into passes under the device's limits, then collects every pass either inside ONE run (kernel
 * replay: each dispatch replayed once per pass, its memory saved and restored), with one run per pass
 * (application replay), or inside ONE run with each dispatch measuring one pass, rotating (iteration
 * multiplexing, imputed afterwards), and writes ONE store. Every input error is reported before the
 * application starts, and then nothing is written. */
/* SPDX-License-Identifier: MIT */
#include "partition.h"
#include "cli.h"
#include "profile_cuda.h"
#include "options.h"
#include "run_app.h"
#include "select_args.h"

#include "counters.h"
#include "metrics.h"
#include "hubprof/hub.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const replay_modes[] = {"kernel", "application", "multiplex", NULL};
static const char *const mux_policies[] = {"kernel", "launch", NULL};
static const char *const match_policies[] = {"name", "grid", "all", NULL};

static const cli_opt profile_opts[] = {
    {.name = "replay",
     .kind = CLI_OPT_ENUM,
     .choices = replay_modes,
     .def = "kernel",
     .help = "how passes are collected: kernel replay, application replay or multiplex (iteration "
             "multiplexing); one mode per run"},
    {.name = "multiplex-policy",
     .kind = CLI_OPT_ENUM,
     .choices = mux_policies,
     .def = "kernel",
     .help = "multiplexing: rotate passes over the dispatches of the same kernel, or of the same kernel, "
             "global and work-group sizes (launch)"},
    {.name = "match",
     .kind = CLI_OPT_ENUM,
     .choices = match_policies,
     .def = "grid",
     .help = "application replay: how dispatches of later runs are matched to the first run's: kernel "
             "name and order of that kernel (name); also global and work-group sizes (grid); also the "
             "position in the whole sequence (all). Unmatched dispatches are reported and their counters "
             "left out, never joined to another"},
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the profile store (default: APP.hubprof.db, or .log / .parquet by format; APP.hubprof-2.db, "
             "-3, ... when taken)"},
    {.name = "preload", .kind = CLI_OPT_FLAG, .help = "also load the collector with LD_PRELOAD"},
    {.name = "start-paused",
     .kind = CLI_OPT_FLAG,
     .help = "begin with collection off: dispatches are recorded only after the application calls "
             "hubprof_start() (include/hubprof/api.h, docs/api-regions.md)"},
    {0},
};

static const cli_opt *const profile_tables[] = {
    cli_opts_counters,  profile_opts,       cli_opts_api,   cli_opts_code,   cli_opts_dispatch_select,
    cli_opts_store_out, cli_opts_partition, cli_opts_quiet, cli_opts_common, NULL};

CLI_COMMAND(
    profile, .usage = "profile --counters LIST [options] [--] APP [ARGS...]",
    .about =
        "Run APP and measure counters on every kernel dispatch. The counters are planned into passes\n"
        "under the device's per-pass limits (the plan is printed first; 'hubprof plan' shows it\n"
        "without running anything). Kernel replay (the default) runs APP once and replays each dispatch\n"
        "once per pass, saving the memory it can write before the first pass and restoring what it\n"
        "changed before the others, so APP sees one execution and every counter describes the same one.\n"
        "Application replay runs APP once per pass and matches the dispatches of every run to the\n"
        "first. Iteration multiplexing runs APP once and each dispatch once: successive dispatches of a\n"
        "kernel (or launch) measure successive passes, and each counter a dispatch did not measure is\n"
        "imputed from the median of the kernel's measured values (marked imputed), for kernels whose\n"
        "dispatches covered every pass; the others are reported and get no imputed values.\n"
        "The result is ONE store: one row per dispatch, counter values tagged with their pass.\n"
        "hubprof exits with APP's own exit status (that of the first run).",
    .tables = profile_tables,
    .epilog = "Example: hubprof profile --counters task-clock,page-faults,context-switches \\\n"
              "           --max-counters-per-pass 1 -o prof.db -- ./app",
    .stop_at_operand = 1)

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

/* Everything after parsing: the checks between options, the device, the plan, then the run(s). */
static int profile(const cli_args *args, const cli_selection *sel) {
  size_t ncounters, ngroups0, nmlists, nmfiles;
  const char *const *counters = cli_list(args, "counters", &ncounters);
  const char *const *groups0 = cli_list(args, "group", &ngroups0);
  const char *const *mlists = cli_list(args, "metrics", &nmlists);
  const char *const *mfiles = cli_list(args, "metrics-file", &nmfiles);
  const char *replay = cli_str(args, "replay"), *match = cli_str(args, "match"),
             *policy = cli_str(args, "multiplex-policy"), *device = cli_str(args, "device");
  unsigned maxpp = (unsigned)cli_uint(args, "max-counters-per-pass", 0);
  const char *format, *output;
  int frc = cli_run_output("profile", args->noperands ? args->operands[0] : "app", cli_str(args, "output"),
                           cli_str(args, "output-format"), &format, &output);
  if (!frc) frc = cli_partition_choose("profile", args, format);
  if (frc) return frc; /* before the application starts */
  run_opts ro = {.mode = "profile",
                 .format = format,
                 .output = output,
                 .force = cli_given(args, "force"),
                 .preload = cli_given(args, "preload"),
                 .start_paused = cli_given(args, "start-paused"),
                 .api = cli_given(args, "api"),
                 .code = cli_given(args, "code") ? "all" : "none",
                 .quiet = cli_given(args, "quiet"),
                 .sel_kernel = sel->kernel,
                 .sel_exclude = sel->exclude,
                 .sel_range = sel->range,
                 .sel_region = sel->region};
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
  if (!ncounters && !ngroups0 && !nmlists) {
    cli_error(
        "profile: no counters requested: --counters LIST or --metrics LIST (see 'hubprof list counters', "
        "'hubprof list metrics')");
    return CLI_USAGE;
  }
  if (nmfiles && !nmlists) {
    cli_error("profile: --metrics-file needs --metrics LIST (the metrics to collect)");
    return CLI_USAGE;
  }
  if (!args->noperands) {
    cli_error("profile: no application given: hubprof profile --counters LIST [options] -- APP [ARGS...]");
    return CLI_USAGE;
  }

  /* the device, its provider and the plan: every error here comes before the application starts */
  char chip[64]; /* CUDA: the GPU's chip (--device cuda, or NVIDIA metric names and no --device) */
  if ((device && !strcasecmp(device, "cuda")) || (!device && cli_cuda_metric_names(counters, ncounters))) {
    if (cli_cuda_chip("profile", chip, sizeof chip) != CLI_OK) return CLI_FAIL;
    device = chip;
  }
  const char *dev = device ? device : "cpu-perf";
  hc_provider *prov = NULL;
  if (cli_device_open("profile", dev, &prov) != CLI_OK) return CLI_FAIL; /* an unknown or broken device */
  if (hc_provider_is_cupti(prov)) { /* NVIDIA metrics: CUPTI's Range Profiler in the collector */
    int crc = cli_profile_cuda(&ro, prov, replay, counters, ncounters, groups0, ngroups0, mlists, nmlists,
                               mfiles, nmfiles, maxpp, (int)args->noperands, args->operands);
    hc_provider_close(prov);
    return crc;
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
  const char **groups = malloc((ngroups0 + nmgroups + 1) * sizeof *groups);
  if (!groups) {
    cli_error("out of memory");
    hc_metrics_groups_free(mgroups);
    hc_provider_close(prov);
    return CLI_FAIL;
  }
  size_t ngroups = 0;
  for (size_t i = 0; i < ngroups0; i++)
    groups[ngroups++] = groups0[i];
  for (size_t i = 0; i < nmgroups; i++)
    groups[ngroups++] = mgroups[i];
  /* lists addressed per device ('device=SEL:LIST'): one plan per device list, their passes one after the
   * other in the plan; the collector measures a device's own (HUBPROF_DEVICE_PLANS) */
  cli_dev_lists dl;
  int drc = cli_device_lists("profile", counters, ncounters, &dl);
  if (drc != CLI_OK) {
    hc_metrics_groups_free(mgroups);
    free(groups);
    hc_provider_close(prov);
    return drc;
  }
  const hc_limits *lim = hc_provider_limits(prov);
  const char **slot_lists = malloc((ncounters + 1) * sizeof *slot_lists);
  size_t nslots = dl.nsel + 1, total = 0;
  hc_plan **plans = calloc(nslots, sizeof *plans);
  char *plan_str = NULL, *map = NULL;
  size_t plen = 0, mlen = 0;
  FILE *pf = open_memstream(&plan_str, &plen), *mf = open_memstream(&map, &mlen);
  int rc = !slot_lists || !plans || !pf || !mf ? CLI_FAIL : CLI_OK;
  if (rc) cli_error("profile: out of memory");
  for (size_t k = 0; rc == CLI_OK && k < nslots; k++) {
    size_t nl = cli_device_lists_of(&dl, k < dl.nsel ? k : dl.nsel, slot_lists);
    if (k == dl.nsel && dl.nsel && !nl && !ngroups) { /* no list for the other devices: they run unmeasured */
      fprintf(mf, "0-0:");
      continue;
    }
    rc = cli_plan_lists("profile", prov, slot_lists, nl, groups, ngroups, maxpp, &plans[k]);
    char *text = rc == CLI_OK ? hc_plan_format(plans[k]) : NULL;
    if (rc == CLI_OK && !text) {
      cli_error("profile: out of memory");
      rc = CLI_FAIL;
    } else if (rc == CLI_OK) {
      fprintf(pf, "%s%s", total ? ";" : "", text);
      fprintf(mf, "%zu-%zu:%s%s", total + 1, total + plans[k]->npasses, k < dl.nsel ? dl.sel[k] : "",
              k < dl.nsel ? "\n" : "");
      total += plans[k]->npasses;
      if (!ro.quiet && dl.nsel)
        fprintf(stderr, "hubprof: plan for %s%s:\n", k < dl.nsel ? "device=" : "",
                k < dl.nsel ? dl.sel[k] : "every other device");
      if (!ro.quiet)
        print_plan(plans[k], lim && lim->device[0] ? lim->device : dev, maxpp, replay,
                   mux ? (policy ? policy : "kernel") : NULL);
    }
    free(text);
  }
  if (pf) fclose(pf);
  if (mf) fclose(mf);
  hc_metrics_groups_free(mgroups); /* the plans hold their own copies of the names */
  free(groups);
  free(slot_lists);
  if (rc == CLI_OK && dl.nsel)
    setenv("HUBPROF_DEVICE_PLANS", map, 1);
  else
    unsetenv("HUBPROF_DEVICE_PLANS");
  if (rc == CLI_OK) {
    ro.plan = plan_str;
    ro.provider = hc_provider_name(prov);
    ro.npasses = total;
    ro.match = match ? match : "grid";
    ro.multiplex = mux ? (policy ? policy : "kernel") : NULL;
    /* application replay: per device list, its own runs (the most passes of a list sets their number) */
    const char **sels = app ? calloc(nslots, sizeof *sels) : NULL;
    for (size_t k = 0; sels && k < dl.nsel; k++)
      sels[k] = dl.sel[k];
    rc = app && !sels ? (cli_error("profile: out of memory"), CLI_FAIL)
         : app        ? app_replay(&ro, plans, sels, nslots, (int)args->noperands, args->operands)
                      : run_app(&ro, (int)args->noperands, args->operands);
    free(sels);
  }
  for (size_t k = 0; plans && k < nslots; k++)
    hc_plan_free(plans[k]);
  free(plans);
  free(plan_str);
  free(map);
  cli_device_lists_free(&dl);
  hc_provider_close(prov);
  return rc;
}

int cmd_profile(int argc, char **argv) {
  cli_args args;
  int prc = cli_parse(&profile_spec, argc, argv, &args);
  if (prc != CLI_PROCEED) return prc;
  cli_selection sel;
  int rc = cli_selection_get(&args, "profile", &sel);
  if (rc == CLI_OK) rc = profile(&args, &sel);
  cli_selection_free(&sel);
  cli_args_free(&args);
  return rc;
}
