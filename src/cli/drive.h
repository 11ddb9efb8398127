/* The CLI's one drive of the hub's assembly pipeline (hubprof/assemble.h): the pipeline made with the CLI's
 * warnings and progress line, the output created, prepared, written and released (drive.c). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_DRIVE_H
#define HUBPROF_CLI_DRIVE_H

#include "progress.h"

#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <stddef.h>

/* One assembly driven by a command: trace, profile and sample (run_app.c), merge and convert (merge.c),
 * merge --append (merge_append.c). Inputs are added with hp_assembly_add(d->a, ...). */
typedef struct cli_drive {
  hp_assembly *a;          /* the pipeline */
  hp_store *out;           /* the output being written (NULL until cli_drive_write opens it) */
  cli_progress *pr;        /* the live progress line while writing */
  hp_assemble_stats stats; /* filled by cli_drive_write */
} cli_drive;

/* Where and how the assembly is written. */
typedef struct cli_drive_out {
  const char *path, *format; /* the store to create */
  const char *verb;          /* the progress line's: "assembling", "merging", "appending" */
  int quiet;                 /* no progress line */
  char *const *inputs;       /* what `--partition auto` measures (cli_partition_apply) */
  size_t ninputs;
  int append; /* new part files of the Parquet dataset at path (hp_parquet_set_append), no partitioning */
} cli_drive_out;

/* A new pipeline with *ao (the caller's strict, impute, plan, match, cancel; its size, warnings, as cli_warn
 * lines, and progress are set here). 0, or CLI_FAIL after one error line (out of memory). */
int cli_drive_start(cli_drive *d, hp_assemble_opts *ao);
/* The inputs added written into a new store as *o says: created, partitioned (or set to append) and written
 * under the progress line. Not committed: hp_store_commit(d->out) makes it appear. HP_OK or the failure. */
hp_status cli_drive_write(cli_drive *d, const cli_drive_out *o);
/* hp_store_commit(d->out): the output appears; what the commit could not confirm of a complete store (its
 * folder's sync) is one warning, and HP_OK all the same. */
hp_status cli_drive_commit(cli_drive *d);
/* Why st failed: the assembly's message, else the output store's, else the status's. */
const char *cli_drive_why(const cli_drive *d, hp_status st);
/* The merge statistics of the write into *stats (as much as stats->size holds). */
void cli_drive_merge_stats(const cli_drive *d, hp_merge_stats *stats);
/* The output aborted (after a commit only released) and the pipeline freed. */
void cli_drive_end(cli_drive *d);

#endif
