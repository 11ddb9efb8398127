/* The pipeline of `merge` and `convert`: the output checked, the stores opened into one assembly (any
 * formats, damage by the merge policy), written in the output's format and committed only on success. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "drive.h"
#include "run_app.h"

#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int cli_merge_stores(char *const *paths, size_t n, const char *out_path, const char *format, int force,
                     int strict, int quiet, hp_merge_stats *stats, char *first_format,
                     size_t first_format_len, uint64_t *unfinished) {
  int rc = cli_check_output(out_path, format, force);
  if (rc) return rc == CLI_USAGE ? CLI_USAGE : CLI_FAIL;
  cli_drive d; /* a live progress line on a terminal while writing: rows read of every input */
  hp_assemble_opts ao = {.strict = strict};
  if (cli_drive_start(&d, &ao)) return CLI_FAIL;
  hp_status st = HP_OK;
  for (size_t i = 0; i < n && st == HP_OK; i++) {
    if (strcmp(paths[i], out_path) == 0) {
      cli_error("%s: is both an input and the output", paths[i]);
      cli_drive_end(&d);
      return CLI_FAIL;
    }
    if ((st = hp_assembly_add(d.a, paths[i], 0)) != HP_OK) cli_error("%s", hp_assembly_error(d.a));
  }
  if (st != HP_OK) {
    cli_drive_end(&d);
    return CLI_FAIL;
  }
  if (first_format && n) { /* the first input's format, for convert's summary */
    hp_store *s = NULL;
    snprintf(first_format, first_format_len, "%s",
             hp_store_open(paths[0], NULL, HP_READ, &s) == HP_OK ? hp_store_format(s) : "?");
    hp_store_abort(s);
  }
  cli_drive_out o = {
      .path = out_path, .format = format, .verb = "merging", .quiet = quiet, .inputs = paths, .ninputs = n};
  st = cli_drive_write(&d, &o);
  for (size_t i = 0; i < n && st == HP_OK; i++) { /* logs of a run's folder: those that stopped growing */
    const char *slash = strrchr(paths[i], '/'), *base = slash ? slash + 1 : paths[i];
    size_t len = strlen(base);
    if (strncmp(base, "hubprof-", 8) || len < 4 || strcmp(base + len - 4, ".log")) continue;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - paths[i]) : 1, slash ? paths[i] : ".");
    int seen = 0; /* each folder once */
    for (size_t j = 0; j < i && !seen; j++)
      seen = !strncmp(paths[j], dir, strlen(dir)) && paths[j][strlen(dir)] == '/' &&
             !strchr(paths[j] + strlen(dir) + 1, '/');
    if (!seen) st = run_collector_stopped(dir, d.out);
  }
  int nothing = st == HP_OK && n && d.stats.skipped_inputs == n; /* every input skipped: no empty output */
  if (nothing) {
    cli_error("%s: not written: nothing complete in %s", out_path, n == 1 ? "the input" : "any input");
    rc = CLI_FAIL;
  }
  if (st == HP_OK && !nothing) st = cli_drive_commit(&d); /* the output appears now */
  if (st != HP_OK) {
    cli_error("%s", cli_drive_why(&d, st));
    rc = CLI_FAIL;
  }
  if (unfinished) *unfinished = d.stats.unfinished_processes;
  cli_drive_merge_stats(&d, stats);
  cli_drive_end(&d); /* after a commit it only releases; otherwise nothing is left at out_path */
  if (rc == CLI_OK && stats->duplicate_processes)
    cli_warn("%" PRIu64 " process%s appeared in more than one input (the same profile given twice?): their "
             "dispatches were taken once",
             stats->duplicate_processes, stats->duplicate_processes == 1 ? "" : "es");
  if (rc == CLI_OK && stats->metadata_conflicts)
    cli_warn("%" PRIu64 " metadata value%s differed between inputs: the first input's kept",
             stats->metadata_conflicts, stats->metadata_conflicts == 1 ? "" : "s");
  return rc;
}
