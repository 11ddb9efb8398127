/* `hubprof merge --append -o STORE.parquet IN...`: the new inputs' processes added to an existing Parquet
 * dataset as new part files (hp_parquet_set_append): the store itself is merged first, so ids and
 * de-duplication are those of a full merge, but its per-process tables' files are never rewritten. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "drive.h"

#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <string.h>

int cli_merge_append(char *const *paths, size_t n, const char *store, int strict, int quiet,
                     hp_merge_stats *stats, uint64_t *unfinished) {
  hp_store *in = NULL;
  hp_status st = hp_store_open(store, NULL, HP_READ, &in);
  if (st != HP_OK || strcmp(hp_store_format(in), "parquet") != 0) {
    cli_error("merge --append: %s: %s", store,
              st != HP_OK ? (in && hp_store_error(in)[0] ? hp_store_error(in) : hp_status_str(st))
                          : "not a Parquet store (only a Parquet dataset can take new part files)");
    hp_store_close(in);
    return CLI_FAIL;
  }
  if (hp_store_damage(in, NULL) != HP_OK) {
    cli_error("merge --append: %s: damaged, not appending to it: %s", store, hp_store_error(in));
    hp_store_close(in);
    return CLI_FAIL;
  }
  hp_store_close(in);
  cli_drive d;
  hp_assemble_opts ao = {.strict = strict};
  if (cli_drive_start(&d, &ao)) return CLI_FAIL;
  st = hp_assembly_add(d.a, store, 0); /* the store first: its ids stay */
  for (size_t i = 0; i < n && st == HP_OK; i++) {
    if (strcmp(paths[i], store) == 0) {
      cli_error("%s: is both an input and the store appended to", paths[i]);
      cli_drive_end(&d);
      return CLI_FAIL;
    }
    st = hp_assembly_add(d.a, paths[i], 0);
  }
  cli_drive_out o = {.path = store, .format = "parquet", .verb = "appending", .quiet = quiet, .append = 1};
  if (st == HP_OK) st = cli_drive_write(&d, &o);
  if (st == HP_OK) st = cli_drive_commit(&d);
  int rc = CLI_OK;
  if (st != HP_OK) {
    cli_error("merge --append: %s", cli_drive_why(&d, st));
    rc = CLI_FAIL;
  }
  if (unfinished) *unfinished = d.stats.unfinished_processes;
  cli_drive_merge_stats(&d, stats);
  cli_drive_end(&d); /* after a commit it only releases; otherwise the store is left as it was */
  return rc;
}
