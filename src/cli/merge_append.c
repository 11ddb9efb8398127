/* `hubprof merge --append -o STORE.parquet IN...`: the new inputs' processes added to an existing Parquet
 * dataset as new part files (hp_parquet_set_append): the store itself is merged first, so ids and
 * de-duplication are those of a full merge, but its per-process tables' files are never rewritten. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "progress.h"

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
  cli_progress *pr = NULL;
  hp_assembly *a = cli_merge_assembly(strict, &pr);
  if (!a) return CLI_FAIL;
  st = hp_assembly_add(a, store, 0); /* the store first: its ids stay */
  for (size_t i = 0; i < n && st == HP_OK; i++) {
    if (strcmp(paths[i], store) == 0) {
      cli_error("%s: is both an input and the store appended to", paths[i]);
      hp_assembly_free(a);
      return CLI_FAIL;
    }
    st = hp_assembly_add(a, paths[i], 0);
  }
  hp_store *out = NULL;
  hp_assemble_stats as = {.size = sizeof as};
  if (st == HP_OK) st = hp_store_open(store, "parquet", HP_CREATE, &out);
  if (st == HP_OK) st = hp_parquet_set_append(out);
  if (st == HP_OK) {
    pr = cli_progress_start("appending", "rows", 0, quiet);
    st = hp_assembly_write(a, out, &as);
    cli_progress_end(pr);
  }
  if (st == HP_OK) st = hp_store_commit(out);
  int rc = CLI_OK;
  if (st != HP_OK) {
    cli_error("merge --append: %s", hp_assembly_error(a)[0]         ? hp_assembly_error(a)
                                    : out && hp_store_error(out)[0] ? hp_store_error(out)
                                                                    : hp_status_str(st));
    rc = CLI_FAIL;
  }
  hp_store_abort(out); /* after a commit it only releases; otherwise the store is left as it was */
  hp_assembly_free(a);
  if (unfinished) *unfinished = as.unfinished_processes;
  size_t keep = stats->size < sizeof as.merge ? stats->size : sizeof as.merge;
  memcpy((char *)stats + sizeof stats->size, (char *)&as.merge + sizeof stats->size,
         keep - sizeof stats->size);
  return rc;
}
