/* `hubprof merge IN... -o OUT [-F FORMAT]`: merge stores of any format into one through the hub's assembly
 * pipeline (one damage policy). The output appears only when everything succeeded (the hub writes a temporary
 * and renames it). */
/* SPDX-License-Identifier: MIT */
#include "partition.h"
#include "cli.h"
#include "options.h"

#include "hubprof/hub.h"

#include <inttypes.h>
#include <string.h>

static const cli_opt merge_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "OUT",
     .help = "the merged store (required); it appears only on success"},
    {.name = "strict", .kind = CLI_OPT_FLAG, .help = "fail instead of warning when an input is damaged"},
    {.name = "append",
     .kind = CLI_OPT_FLAG,
     .help = "add IN... to the existing Parquet dataset OUT as new part files (its files are not rewritten)"},
    {0},
};

static const cli_opt *const merge_tables[] = {merge_opts,     cli_opts_store_out, cli_opts_partition,
                                              cli_opts_quiet, cli_opts_common,    NULL};

CLI_COMMAND(merge, .usage = "merge [options] -o OUT IN|DIR...",
            .about =
                "Merge profile stores (any mix of formats, detected automatically) into ONE store:\n"
                "ids are remapped; nodes, agents, kernels, code objects and counters are de-duplicated;\n"
                "processes stay apart (host + pid + start time); replay passes stay apart.\n"
                "A log cut short by a crash is merged up to its damage, with a warning.\n"
                "A folder that is not a store stands for the stores in it (the rank stores of\n"
                "'mpirun -np N hubprof trace -o DIR -- APP'): a foreign file there is an error naming it,\n"
                "and a rank that did not finish is named with the dispatches kept.",
            .tables = merge_tables)

int cmd_merge(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&merge_spec, argc, argv, &a);
  if (rc != CLI_PROCEED) return rc;
  const char *out_path = cli_str(&a, "output"), *format = cli_str(&a, "output-format");
  int force = cli_given(&a, "force"), strict = cli_given(&a, "strict"), quiet = cli_given(&a, "quiet");
  if (!out_path) {
    cli_error("merge: no output given: use -o OUT (see 'hubprof merge --help')");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  if ((rc = cli_output_format("merge", out_path, format, &format)) != 0 ||
      (rc = cli_partition_choose("merge", &a, format)) != 0) {
    cli_args_free(&a);
    return rc;
  }
  if (!a.noperands) {
    cli_error("merge: no input stores given (see 'hubprof merge --help')");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  hp_merge_stats stats = {.size = sizeof stats};
  if (cli_given(&a, "append") && (strcmp(format, "parquet") != 0 || cli_given(&a, "partition"))) {
    cli_error("merge: --append %s", strcmp(format, "parquet") != 0
                                        ? "adds to a Parquet dataset: OUT must be one (-o DIR.parquet)"
                                        : "keeps the store's own partitioning: drop --partition");
    cli_args_free(&a);
    return CLI_USAGE;
  }
  uint64_t unfinished = 0;
  char **inputs = NULL; /* folders of stores (merge_dir.c) replaced by their stores */
  size_t ninputs = 0;
  if ((rc = cli_merge_inputs(a.operands, a.noperands, &inputs, &ninputs)) != CLI_OK) {
    cli_args_free(&a);
    return rc;
  }
  if (cli_given(&a, "append"))
    rc = cli_merge_append(inputs, ninputs, out_path, strict, quiet, &stats, &unfinished);
  else
    rc = cli_merge_stores(inputs, ninputs, out_path, format, force, strict, quiet, &stats, NULL, 0,
                          &unfinished);
  /* the cut processes named with their host and rank: only when the assembly found one (reading every input
   * again costs a whole open of each) */
  if (rc == CLI_OK && unfinished) cli_merge_report_cut(inputs, ninputs);
  cli_merge_inputs_free(inputs, ninputs);
  if (rc == CLI_OK && !quiet && cli_given(&a, "append"))
    fprintf(stderr, "hubprof: appended %" PRIu64 " store%s to %s: now %" PRIu64 " %s, %" PRIu64 " %s\n",
            stats.inputs - 1, stats.inputs == 2 ? "" : "s", out_path, stats.rows_out[HP_TABLE_PROCESS],
            cli_noun(stats.rows_out[HP_TABLE_PROCESS], "process", "processes"),
            stats.rows_out[HP_TABLE_DISPATCH],
            cli_noun(stats.rows_out[HP_TABLE_DISPATCH], "dispatch", "dispatches"));
  else if (rc == CLI_OK && !quiet)
    fprintf(stderr,
            "hubprof: merged %" PRIu64 " %s into %s (%s): %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
            " counter %s, %" PRIu64 " %s\n",
            stats.inputs, cli_noun(stats.inputs, "store", "stores"), out_path, format,
            stats.rows_out[HP_TABLE_PROCESS],
            cli_noun(stats.rows_out[HP_TABLE_PROCESS], "process", "processes"),
            stats.rows_out[HP_TABLE_DISPATCH],
            cli_noun(stats.rows_out[HP_TABLE_DISPATCH], "dispatch", "dispatches"),
            stats.rows_out[HP_TABLE_COUNTER_VALUE],
            cli_noun(stats.rows_out[HP_TABLE_COUNTER_VALUE], "value", "values"),
            stats.rows_out[HP_TABLE_KERNEL_SYMBOL],
            cli_noun(stats.rows_out[HP_TABLE_KERNEL_SYMBOL], "kernel", "kernels"));
  cli_args_free(&a);
  return rc;
}
