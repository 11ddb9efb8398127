/* `hubprof convert IN -o OUT --format F`: rewrite one store in another format through the hub (a merge
 * of one input: every table, references, passes and imputed flags kept). The output appears only on success.
 */
#include "cli.h"

#include "hubprof/hub.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

void cmd_convert_help(FILE *out) {
  fprintf(out, "usage: hubprof convert [options] IN -o OUT --format F\n\n"
               "Rewrite the store IN (any format, detected) as OUT in format F: every table of the data\n"
               "model, replay passes and imputed flags kept. For example a rocpd file as a Parquet store\n"
               "for pandas, DuckDB, polars or Spark, or a Parquet store back to rocpd for ROCm's tools.\n\n"
               "options:\n"
               "  -o, --output OUT   the converted store (required); it appears only on success\n"
               "  --format F         format of OUT (required): ");
  for (const char *const *f = hp_formats(); *f; f++)
    fprintf(out, "%s%s", *f, f[1] ? ", " : "");
  fprintf(out,
          "\n"
          "  -f, --force        replace OUT if it exists\n"
          "  --strict           fail when IN is damaged (default: convert what is readable, with a warning)\n"
          "  -q, --quiet        print no summary\n"
          "  -h, --help         show this help\n");
}

int cmd_convert(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                       {"format", required_argument, 0, 'F'},
                                       {"force", no_argument, 0, 'f'},
                                       {"strict", no_argument, 0, 'S'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *out_path = NULL, *format = NULL;
  int force = 0, strict = 0, quiet = 0, o;
  opterr = 0;
  while ((o = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
    switch (o) {
    case 'o': out_path = optarg; break;
    case 'F': format = optarg; break;
    case 'f': force = 1; break;
    case 'S': strict = 1; break;
    case 'q': quiet = 1; break;
    case 'h': cmd_convert_help(stdout); return cli_finish_stdout(CLI_OK);
    case ':': cli_error("convert: option '%s' needs a value", argv[optind - 1]); return CLI_USAGE;
    default:
      cli_error("convert: unknown option '%s' (see 'hubprof convert --help')", argv[optind - 1]);
      return CLI_USAGE;
    }
  }
  if (argc - optind != 1) {
    cli_error("convert: expected one input store (see 'hubprof convert --help')");
    return CLI_USAGE;
  }
  if (!out_path || !format) {
    cli_error("convert: both -o OUT and --format F are required (see 'hubprof convert --help')");
    return CLI_USAGE;
  }
  if (!cli_format_known(format)) {
    cli_error("convert: unknown format '%s' (see 'hubprof convert --help')", format);
    return CLI_USAGE;
  }
  const char *in_path = argv[optind];
  hp_merge_stats stats = {.size = sizeof stats};
  char in_format[32] = "";
  int rc = cli_merge_stores(argv + optind, 1, out_path, format, force, strict, &stats, in_format,
                            sizeof in_format);
  if (rc == CLI_OK && !quiet)
    fprintf(stderr,
            "hubprof: converted %s (%s) to %s (%s): %" PRIu64 " dispatches, %" PRIu64 " counter values\n",
            in_path, in_format, out_path, format, stats.rows_out[HP_TABLE_DISPATCH],
            stats.rows_out[HP_TABLE_COUNTER_VALUE]);
  return rc;
}
