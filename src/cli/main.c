/* hubprof CLI entry point: the table of subcommands, global help and version, dispatch to cmd_*.c. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "../export/exporter.h"
#include "roofline.h"

#include "hubprof/hub.h"

#include <stdio.h>
#include <string.h>

static const cli_cmd commands[] = {
    {"trace", "run an application and record a lite kernel trace (no counters)", cmd_trace, cmd_trace_help},
    {"sample", "run an application and sample its kernels: hot instructions and counter timelines",
     cmd_sample, cmd_sample_help},
    {"profile", "run an application and measure counters on every dispatch (replay or multiplexing)",
     cmd_profile, cmd_profile_help},
    {"analyze", "top kernels per device (or launches, dispatches): time, counters, metrics", cmd_analyze,
     cmd_analyze_help},
    {"diff", "compare two profiles per kernel: time and metric changes", cmd_diff, cmd_diff_help},
    {"info", "show a store's format, schema version, rows per table, processes and time span", cmd_info,
     cmd_info_help},
    {"merge", "merge stores of any format into one", cmd_merge, cmd_merge_help},
    {"convert", "rewrite a store in another format (rocpd, log, parquet)", cmd_convert, cmd_convert_help},
    {"export", "write a store as a timeline: Perfetto, Chrome trace JSON or OTF2", cmd_export,
     cmd_export_help},
    {"report", "write a store as one self-contained HTML page with plots (top kernels, timeline, diff)",
     cmd_report, cmd_report_help},
    {"plan", "print the counter passes a profile needs, without running anything", cmd_plan, cmd_plan_help},
    {"list", "list counters and metrics (with availability here) or device descriptions", cmd_list,
     cmd_list_help},
    {"roofline", "measure each OpenCL device's ceilings: FLOP/s per precision, int32 op/s, memory GB/s",
     cmd_roofline, cmd_roofline_help},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out) {
  fprintf(out, "usage: hubprof <command> [options] [args]\n\n"
               "hubprof is an open GPU-kernel profiler. Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nStore formats (-F/--output-format): ");
  for (const char *const *f = hp_formats(); *f; f++)
    fprintf(out, "%s%s", *f, f[1] ? ", " : "\n");
  fprintf(out,
          "Report formats (--format): table, csv, json\n"
          "Exit status: 0 success, 1 input error or failure, 2 usage error; trace and profile exit with\n"
          "the application's own status once it has started (docs/cli/exit-codes.md).\n"
          "Run 'hubprof <command> --help' for a command's options.\n");
}

static const cli_cmd *find(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* An unknown command: one line, with the closest command when it looks like a typo. */
static int unknown(const char *name) {
  const char *names[NCOMMANDS + 2];
  for (size_t i = 0; i < NCOMMANDS; i++)
    names[i] = commands[i].name;
  names[NCOMMANDS] = "help";
  names[NCOMMANDS + 1] = "version";
  const char *sug = name[0] != '-' ? cli_suggest(name, names, NCOMMANDS + 2) : NULL;
  if (sug)
    cli_error("unknown command '%s'; did you mean '%s'? (see 'hubprof --help')", name, sug);
  else
    cli_error("unknown %s '%s' (see 'hubprof --help')", name[0] == '-' ? "option" : "command", name);
  return CLI_USAGE;
}

int main(int argc, char **argv) {
  /* stderr line-buffered: every message reaches it in one write, however many calls built it, so the
   * hubprof of each MPI rank sharing one stderr (mpirun forwards them as they come) never interleaves
   * mid-line; the progress line flushes itself */
  static char errbuf[16384];
  setvbuf(stderr, errbuf, _IOLBF, sizeof errbuf);
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  if (cli_is_help(name)) {
    usage(stdout);
    return cli_finish_stdout(CLI_OK);
  }
  if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 || strcmp(name, "version") == 0) {
    printf("hubprof %s\n", hp_version());
    /* the optional parts decided at build time (Makefile: found after `make deps`, rebuilt when that changes)
     */
    printf("export formats:");
    for (int f = 0; ex_format_names[f]; f++)
      printf(" %s%s", ex_format_names[f],
             ex_format_available((ex_format)f) ? "" : " (not built: no libotf2)");
    printf("\nroofline platforms: opencl cuda%s\n", rl_cuda_built() ? "" : " (not built: no nvcc)");
    return cli_finish_stdout(CLI_OK);
  }
  if (strcmp(name, "help") == 0) {
    if (argc < 3) {
      usage(stdout);
      return cli_finish_stdout(CLI_OK);
    }
    const cli_cmd *c = find(argv[2]);
    if (!c) return unknown(argv[2]);
    c->help(stdout);
    return cli_finish_stdout(CLI_OK);
  }
  const cli_cmd *c = find(name);
  if (!c) return unknown(name);
  int rc = c->run(argc - 1, argv + 1);
  cli_list_files_forget(); /* the lists read from @FILE arguments */
  return rc;
}
