/* `hubprof trace [-o OUT] [--format F] -- APP ARGS…`: runs the application with the collector (an OpenCL
 * layer, LD_PRELOAD as fallback), follows its children, merges every per-process log into ONE store,
 * deletes the logs and exits with the application's own status. Never changes what the application sees
 * beyond the collector's documented HUBPROF_* variables. */
/* SPDX-License-Identifier: MIT */
#include "partition.h"
#include "cli.h"
#include "options.h"
#include "run_app.h"
#include "select_args.h"

#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const cli_opt trace_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the trace store (default: APP.hubprof.db, or .log / .parquet by format; APP.hubprof-2.db, -3, "
             "... when taken)"},
    {.name = "preload",
     .kind = CLI_OPT_FLAG,
     .help = "also load the collector with LD_PRELOAD (for OpenCL loaders without layer support); the layer "
             "is used otherwise"},
    {.name = "start-paused",
     .kind = CLI_OPT_FLAG,
     .help = "begin with collection off: dispatches are recorded only after the application calls "
             "hubprof_start() (include/hubprof/api.h, docs/api-regions.md)"},
    {.name = "counters", .kind = CLI_OPT_STRING, .flags = CLI_OPT_HIDDEN}, /* refused with advice */
    {0},
};

static const cli_opt *const trace_tables[] = {trace_opts,
                                              cli_opts_api,
                                              cli_opts_code,
                                              cli_opts_dispatch_select,
                                              cli_opts_store_out,
                                              cli_opts_partition,
                                              cli_opts_quiet,
                                              cli_opts_common,
                                              NULL};

CLI_COMMAND(
    trace, .usage = "trace [options] [--] APP [ARGS...]",
    .about = "Run APP and record a lite kernel trace: for every kernel dispatch its kernel, device,\n"
             "queue, thread, global and local sizes, host enqueue time and device start/end — and\n"
             "nothing else, at the lowest overhead. Child processes are followed (each writes its own\n"
             "log); at the end every log is merged into ONE store and a summary is printed on stderr.\n"
             "hubprof exits with APP's own exit status (128+signal when APP was killed).",
    .tables = trace_tables,
    .epilog = "Counters are not collected by a trace: use 'hubprof profile --counters ...'.\n"
              "Afterwards: 'hubprof analyze OUT' for the top kernels, 'hubprof info OUT' for the contents.",
    .stop_at_operand = 1)

int cmd_trace(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&trace_spec, argc, argv, &a);
  if (rc != CLI_PROCEED) return rc;
  if (cli_given(&a, "counters")) {
    cli_error("trace: a lite trace collects no counters; use 'hubprof profile --counters %s -- APP' instead",
              cli_str(&a, "counters"));
    cli_args_free(&a);
    return CLI_USAGE;
  }
  if (!a.noperands) {
    cli_error("trace: no application given: hubprof trace [options] -- APP [ARGS...]");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  const char *format, *output;
  rc = cli_run_output("trace", a.operands[0], cli_str(&a, "output"), cli_str(&a, "output-format"), &format,
                      &output);
  if (!rc) rc = cli_partition_choose("trace", &a, format);
  if (rc) { /* before the application starts */
    cli_args_free(&a);
    return rc;
  }
  cli_selection sel;
  if ((rc = cli_selection_get(&a, "trace", &sel)) != CLI_OK) {
    cli_args_free(&a);
    return rc;
  }
  run_opts ro = {.mode = "trace",
                 .format = format,
                 .output = output,
                 .force = cli_given(&a, "force"),
                 .preload = cli_given(&a, "preload"),
                 .start_paused = cli_given(&a, "start-paused"),
                 .api = cli_given(&a, "api"),
                 .code = cli_given(&a, "code") ? "all" : "none",
                 .quiet = cli_given(&a, "quiet"),
                 .sel_kernel = sel.kernel,
                 .sel_exclude = sel.exclude,
                 .sel_range = sel.range,
                 .sel_region = sel.region};
  rc = run_app(&ro, (int)a.noperands, a.operands);
  cli_selection_free(&sel);
  cli_args_free(&a);
  return rc;
}
