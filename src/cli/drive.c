/* The one drive of the hub's assembly pipeline that trace, profile, sample, merge, convert and merge --append
 * share: the pipeline's options, the output's creation, partitioning, writing, failure reason and release. */
/* SPDX-License-Identifier: MIT */
#include "drive.h"
#include "cli.h"

#include "hubprof/parquet.h"
#include "partition.h"

#include <string.h>

static void warn_line(void *ctx, const char *line) {
  (void)ctx;
  cli_warn("%s", line);
}

int cli_drive_start(cli_drive *d, hp_assemble_opts *ao) {
  memset(d, 0, sizeof *d);
  d->stats.size = sizeof d->stats;
  ao->size = sizeof *ao;
  ao->warn = warn_line;
  ao->progress = cli_progress_ref_cb;
  ao->progress_ctx = &d->pr;
  if (hp_assembly_new(ao, &d->a) == HP_OK) return 0;
  cli_error("out of memory");
  return CLI_FAIL;
}

hp_status cli_drive_write(cli_drive *d, const cli_drive_out *o) {
  hp_status st = hp_store_open(o->path, o->format, HP_CREATE, &d->out);
  if (st == HP_OK && o->append)
    st = hp_parquet_set_append(d->out);
  else if (st == HP_OK && cli_partition_apply(d->out, o->inputs, o->ninputs))
    st = HP_ERR_INVALID;
  if (st == HP_OK) {
    d->pr = cli_progress_start(o->verb, "rows", 0, o->quiet);
    st = hp_assembly_write(d->a, d->out, &d->stats);
    cli_progress_end(d->pr);
    d->pr = NULL;
  }
  return st;
}

hp_status cli_drive_commit(cli_drive *d) {
  hp_status st = hp_store_commit(d->out);
  if (st == HP_OK && hp_store_note(d->out)[0]) cli_warn("%s", hp_store_note(d->out)); /* -q or not */
  return st;
}

const char *cli_drive_why(const cli_drive *d, hp_status st) {
  return hp_assembly_error(d->a)[0]            ? hp_assembly_error(d->a)
         : d->out && hp_store_error(d->out)[0] ? hp_store_error(d->out)
                                               : hp_status_str(st);
}

void cli_drive_merge_stats(const cli_drive *d, hp_merge_stats *stats) {
  size_t keep = stats->size < sizeof d->stats.merge ? stats->size : sizeof d->stats.merge;
  memcpy((char *)stats + sizeof stats->size, (char *)&d->stats.merge + sizeof stats->size,
         keep - sizeof stats->size);
}

void cli_drive_end(cli_drive *d) {
  hp_store_abort(d->out);
  hp_assembly_free(d->a);
  d->out = NULL;
  d->a = NULL;
}
