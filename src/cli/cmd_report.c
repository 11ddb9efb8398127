/* `hubprof report STORE -o report.html [--baseline B]`: the run as one self-contained HTML page with plots
 * (src/export/report_html.c does the work). */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"

#include "../export/exporter.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

static const cli_opt report_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the HTML file to write"},
    {.name = "baseline",
     .kind = CLI_OPT_STRING,
     .value = "B",
     .help = "a second store to compare with: the change of each kernel's time as a chart and a table"},
    {.name = "force", .short_name = 'f', .kind = CLI_OPT_FLAG, .help = "replace OUT when it exists"},
    {0},
};

static const cli_opt *const report_tables[] = {report_opts, cli_opts_quiet, cli_opts_common, NULL};

CLI_COMMAND(
    report, .usage = "report STORE -o OUT.html [--baseline B] [-f]",
    .about =
        "Write a store's run as one self-contained HTML page (no network needed to view it): the run's\n"
        "summary, the top kernels as a bar chart, a timeline overview, the per-kernel counter and metric\n"
        "table, the regions when there are any and, with --baseline, the per-kernel change as a chart.\n"
        "Tables sort by a click on their header. Any store format is read.",
    .tables = report_tables,
    .epilog = "examples:\n  hubprof report run.db -o run.html\n"
              "  hubprof report new.db -o diff.html --baseline old.db")

int cmd_report(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&report_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  const char *out = cli_str(&args, "output"), *base = cli_str(&args, "baseline");
  int force = cli_given(&args, "force"), quiet = cli_given(&args, "quiet");
  if (args.noperands != 1 || !out) {
    cli_error("report: expected one STORE and -o OUT (see 'hubprof report --help')");
    cli_args_free(&args);
    return CLI_USAGE;
  }
  char path[4096], outp[4096], basep[4096];
  snprintf(path, sizeof path, "%s", args.operands[0]);
  snprintf(outp, sizeof outp, "%s", out);
  snprintf(basep, sizeof basep, "%s", base ? base : "");
  cli_args_free(&args);
  struct stat sb;
  if (lstat(outp, &sb) == 0 && (!force || S_ISDIR(sb.st_mode))) {
    cli_error(S_ISDIR(sb.st_mode) ? "%s: is a folder; the report is a file"
                                  : "%s: the output exists (use -f to replace it)",
              outp);
    return CLI_FAIL;
  }
  hp_store *s = cli_open_readable("report", path), *b = NULL;
  if (!s) return CLI_FAIL;
  if (basep[0] && !(b = cli_open_readable("report", basep))) {
    hp_store_close(s);
    return CLI_FAIL;
  }
  ex_result *er;
  ex_status es = ex_report(s, path, b, basep[0] ? basep : NULL, outp, &er);
  hp_store_close(s);
  if (b) hp_store_close(b);
  if (es != EX_OK) {
    cli_error("%s", ex_result_error(er));
    ex_result_free(er);
    return CLI_FAIL;
  }
  ex_stats st = *ex_result_stats(er);
  ex_result_free(er);
  if (st.damaged)
    cli_warn("%s: damaged store: reported what was readable, the rest of the table skipped (%s)", path,
             st.damage);
  if (!quiet)
    fprintf(stderr, "hubprof: wrote %s: %" PRIu64 " %s, %" PRIu64 " %s%s\n", outp, st.dispatches,
            cli_noun(st.dispatches, "dispatch", "dispatches"), st.regions,
            cli_noun(st.regions, "region", "regions"), b ? ", compared with the baseline" : "");
  return CLI_OK;
}
