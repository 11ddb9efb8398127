/* `hubprof export STORE -o OUT --format perfetto|chrome|otf2`: a store's dispatches, regions, flows and
 * counters as a timeline for Perfetto, Chrome's trace viewer or OTF2 readers (src/export does the work). */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "progress.h"
#include "options.h"

#include "../export/exporter.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_opt export_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the file to write (for otf2: a folder holding the archive, traces.otf2 in it)"},
    {.name = "format",
     .kind = CLI_OPT_ENUM,
     .choices = ex_format_names,
     .def = "perfetto",
     .help = "perfetto: protobuf trace for ui.perfetto.dev; chrome: trace-event JSON; otf2: OTF2 archive"},
    {.name = "force", .short_name = 'f', .kind = CLI_OPT_FLAG, .help = "replace OUT when it exists"},
    {0},
};

static const cli_opt *const export_tables[] = {export_opts, cli_opts_quiet, cli_opts_common, NULL};

CLI_COMMAND(
    export, .usage = "export STORE -o OUT [--format perfetto|chrome|otf2] [-f]",
    .about =
        "Write a store's run as a timeline: a track per process, thread and queue; dispatches as slices\n"
        "with kernel, grid and work-group; regions nested on their threads, markers as instants; a flow\n"
        "from each enqueue to its device slice; per-dispatch counter values as counter tracks; memory\n"
        "copies (--api) as slices on their queues, with a flow from their enqueue.\n"
        "Times are the nanoseconds each node recorded (one clock per node). A damaged store exports\n"
        "what is readable and says what was skipped. Any store format is read.",
    .tables = export_tables,
    .epilog = "examples:\n  hubprof export run.db -o run.pftrace          # open in ui.perfetto.dev\n"
              "  hubprof export run.db -o run.json --format chrome\n"
              "  hubprof export run.db -o run-otf2 --format otf2  # otf2-print run-otf2/traces.otf2")

int cmd_export(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&export_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  const char *out = cli_str(&args, "output");
  ex_format fmt = (ex_format)cli_enum(&args, "format", EX_PERFETTO);
  int force = cli_given(&args, "force"), quiet = cli_given(&args, "quiet");
  if (args.noperands != 1 || !out) {
    cli_error("export: expected one STORE and -o OUT (see 'hubprof export --help')");
    cli_args_free(&args);
    return CLI_USAGE;
  }
  char path[4096], outp[4096];
  snprintf(path, sizeof path, "%s", args.operands[0]);
  snprintf(outp, sizeof outp, "%s", out);
  cli_args_free(&args);
  if (!ex_format_available(fmt)) {
    cli_error("export: format %s is not compiled into this build (install libotf2-trace-dev and rebuild)",
              ex_format_names[fmt]);
    return CLI_FAIL;
  }
  struct stat sb;
  if (!force && lstat(outp, &sb) == 0) {
    cli_error("%s: the output exists (use -f to replace it)", outp);
    return CLI_FAIL;
  }
  if (force && fmt == EX_OTF2 && lstat(outp, &sb) == 0) {
    /* -f replaces an earlier archive only: never a folder of something else */
    char anchor[4200];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", outp);
    if (!S_ISDIR(sb.st_mode) || access(anchor, F_OK)) {
      cli_error("%s: exists and is not an OTF2 archive (no traces.otf2 in it); not replaced", outp);
      return CLI_FAIL;
    }
  }
  if (force && fmt != EX_OTF2 && lstat(outp, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    cli_error("%s: is a folder; the %s output is a file", outp, ex_format_names[fmt]);
    return CLI_FAIL;
  }
  hp_store *s = cli_open_readable("export", path);
  if (!s) return CLI_FAIL;
  /* a progress line on a terminal: regions and dispatches read */
  cli_progress *pr = cli_progress_start("exporting", "rows", 0, quiet);
  ex_opts eo = {.progress = cli_progress_cb, .progress_ctx = pr};
  ex_result *er;
  ex_status es = ex_export(s, outp, fmt, pr ? &eo : NULL, &er);
  cli_progress_end(pr);
  hp_store_close(s);
  if (es != EX_OK) {
    cli_error("%s", ex_result_error(er));
    ex_result_free(er);
    return CLI_FAIL;
  }
  ex_stats stats = *ex_result_stats(er);
  ex_result_free(er);
  if (stats.damaged)
    cli_warn("%s: damaged store: exported what was readable, the rest of the table skipped (%s)", path,
             stats.damage);
  if (stats.skipped_untimed)
    cli_warn("%" PRIu64 " %s without start or end time not exported", stats.skipped_untimed,
             cli_noun(stats.skipped_untimed, "dispatch or region", "dispatches or regions"));
  if (stats.skipped_order)
    cli_warn("%" PRIu64 " %s out of order skipped (see docs/cli/export.md)", stats.skipped_order,
             cli_noun(stats.skipped_order, "event", "events"));
  char copies[48] = ""; /* stores traced with --api */
  if (stats.copies) snprintf(copies, sizeof copies, ", %" PRIu64 " memory copies", stats.copies);
  if (!quiet)
    fprintf(stderr,
            "hubprof: wrote %s (%s): %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
            " counter %s%s\n",
            outp, ex_format_names[fmt], stats.dispatches,
            cli_noun(stats.dispatches, "dispatch", "dispatches"), stats.regions,
            cli_noun(stats.regions, "region", "regions"), stats.markers,
            cli_noun(stats.markers, "marker", "markers"), stats.flows, cli_noun(stats.flows, "flow", "flows"),
            stats.counter_values, cli_noun(stats.counter_values, "value", "values"), copies);
  if (!quiet && stats.counter_samples)
    fprintf(stderr, "hubprof: %" PRIu64 " counter %s\n", stats.counter_samples,
            cli_noun(stats.counter_samples, "sample", "samples"));
  return CLI_OK;
}
