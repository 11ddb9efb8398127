/* `hubprof convert IN -o OUT -F FORMAT`: rewrite one store in another format through the hub (a merge
 * of one input: every table, references, passes and imputed flags kept). The output appears only on success.
 */
/* SPDX-License-Identifier: MIT */
#include "partition.h"
#include "cli.h"
#include "options.h"

#include "hubprof/hub.h"

#include <inttypes.h>
#include <string.h>

static const cli_opt convert_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the converted store (required); it appears only on success"},
    {.name = "strict",
     .kind = CLI_OPT_FLAG,
     .help = "fail when IN is damaged (default: convert what is readable, with a warning)"},
    {0},
};

static const cli_opt *const convert_tables[] = {convert_opts,   cli_opts_store_out, cli_opts_partition,
                                                cli_opts_quiet, cli_opts_common,    NULL};

CLI_COMMAND(
    convert, .usage = "convert [options] IN -o OUT [-F FORMAT]",
    .about = "Rewrite the store IN (any format, detected) as OUT in format FORMAT: every table of the data\n"
             "model, replay passes and imputed flags kept. For example a rocpd file as a Parquet store\n"
             "for pandas, DuckDB, polars or Spark, or a Parquet store back to rocpd for ROCm's tools.",
    .tables = convert_tables)

int cmd_convert(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&convert_spec, argc, argv, &a);
  if (rc != CLI_PROCEED) return rc;
  const char *out_path = cli_str(&a, "output"), *format = cli_str(&a, "output-format");
  int force = cli_given(&a, "force"), strict = cli_given(&a, "strict"), quiet = cli_given(&a, "quiet");
  if (a.noperands != 1 || !out_path) {
    cli_error(a.noperands != 1 ? "convert: expected one input store (see 'hubprof convert --help')"
                               : "convert: -o OUT is required (see 'hubprof convert --help')");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  if ((rc = cli_output_format("convert", out_path, format, &format)) != 0 ||
      (rc = cli_partition_choose("convert", &a, format)) != 0) {
    cli_args_free(&a);
    return rc;
  }
  const char *in_path = a.operands[0];
  hp_merge_stats stats = {.size = sizeof stats};
  char in_format[32] = "";
  rc = cli_merge_stores(a.operands, 1, out_path, format, force, strict, quiet, &stats, in_format,
                        sizeof in_format, NULL);
  if (rc == CLI_OK && !quiet)
    fprintf(stderr, "hubprof: converted %s (%s) to %s (%s): %" PRIu64 " %s, %" PRIu64 " counter %s\n",
            in_path, in_format, out_path, format, stats.rows_out[HP_TABLE_DISPATCH],
            cli_noun(stats.rows_out[HP_TABLE_DISPATCH], "dispatch", "dispatches"),
            stats.rows_out[HP_TABLE_COUNTER_VALUE],
            cli_noun(stats.rows_out[HP_TABLE_COUNTER_VALUE], "value", "values"));
  cli_args_free(&a);
  return rc;
}
