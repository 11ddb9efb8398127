/* `hubprof trace [-o OUT] [--format F] -- APP ARGS…`: runs the application with the collector (an OpenCL
 * layer, LD_PRELOAD as fallback), follows its children, merges every per-process log into ONE store,
 * deletes the logs and exits with the application's own status. Never changes what the application sees
 * beyond the collector's documented HUBPROF_* variables. */
#include "cli.h"
#include "run_app.h"

#include "hubprof/hub.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void cmd_trace_help(FILE *out) {
  fprintf(out,
          "usage: hubprof trace [options] [--] APP [ARGS...]\n\n"
          "Run APP and record a lite kernel trace: for every kernel dispatch its kernel, device,\n"
          "queue, thread, global and local sizes, host enqueue time and device start/end — and\n"
          "nothing else, at the lowest overhead. Child processes are followed (each writes its own\n"
          "log); at the end every log is merged into ONE store and a summary is printed on stderr.\n"
          "hubprof exits with APP's own exit status (128+signal when APP was killed).\n\n"
          "options:\n"
          "  -o, --output OUT   the trace store (default: APP.hubprof.db, or .log / .parquet by format)\n"
          "  --format F         format of OUT: ");
  for (const char *const *f = hp_formats(); *f; f++)
    fprintf(out, "%s%s", *f, f[1] ? ", " : "");
  fprintf(out,
          " (default: rocpd)\n"
          "  -f, --force        replace OUT if it exists\n"
          "  --preload          also load the collector with LD_PRELOAD (for OpenCL loaders\n"
          "                     without layer support); the layer is used otherwise\n"
          "  -q, --quiet        no summary\n"
          "  -h, --help         show this help\n\n"
          "Counters are not collected by a trace: use 'hubprof profile --counters ...'.\n"
          "Afterwards: 'hubprof analyze OUT' for the top kernels, 'hubprof info OUT' for the contents.\n");
}

int cmd_trace(int argc, char **argv) {
  static const struct option opts[] = {
      {"output", required_argument, 0, 'o'},   {"format", required_argument, 0, 'F'},
      {"force", no_argument, 0, 'f'},          {"preload", no_argument, 0, 'P'},
      {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
      {"counters", required_argument, 0, 'C'}, {0, 0, 0, 0}};
  run_opts ro = {.mode = "trace", .format = "rocpd"};
  int o;
  opterr = 0;
  /* '+': stop at the first non-option, so APP's own options are never taken for ours */
  while ((o = getopt_long(argc, argv, "+:o:fqh", opts, NULL)) != -1) {
    switch (o) {
    case 'o': ro.output = optarg; break;
    case 'F': ro.format = optarg; break;
    case 'f': ro.force = 1; break;
    case 'P': ro.preload = 1; break;
    case 'q': ro.quiet = 1; break;
    case 'h': cmd_trace_help(stdout); return cli_finish_stdout(CLI_OK);
    case 'C':
      cli_error(
          "trace: a lite trace collects no counters; use 'hubprof profile --counters %s -- APP' instead",
          optarg);
      return CLI_USAGE;
    case ':': cli_error("trace: option '%s' needs a value", argv[optind - 1]); return CLI_USAGE;
    default:
      cli_error("trace: unknown option '%s' (see 'hubprof trace --help')", argv[optind - 1]);
      return CLI_USAGE;
    }
  }
  if (optind >= argc) {
    cli_error("trace: no application given: hubprof trace [options] -- APP [ARGS...]");
    return CLI_USAGE;
  }
  return run_app(&ro, argc - optind, argv + optind);
}
