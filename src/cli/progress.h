/* A live progress line on stderr for long CLI work (reading, merging, converting, replaying): what is done,
 * the rate and the time left where the total is known; only on a terminal and never with -q. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_PROGRESS_H
#define HUBPROF_CLI_PROGRESS_H

#include <stdint.h>

typedef struct cli_progress cli_progress;

/* Start a progress line "hubprof: <what>: <done>[/<total>] <unit> ...". total 0 = unknown (no percentage and
 * no time left). Returns NULL when quiet, when stderr is not a terminal (or TERM=dumb) or out of memory;
 * every function below accepts NULL and then does nothing, so callers never test. Nothing is drawn during
 * the first HUBPROF_PROGRESS_DELAY_MS milliseconds (default 500: short work stays silent); then the line is
 * redrawn at most every 100 ms. */
cli_progress *cli_progress_start(const char *what, const char *unit, uint64_t total, int quiet);
/* Work done so far (absolute, not an increment). Cheap: one clock read; call it per row or per batch. */
void cli_progress_update(cli_progress *p, uint64_t done);
/* A new stage: a new label ("pass 2/3"; NULL keeps the old one) and total (0 = unknown); done counts from 0
 * again, and the rate is this stage's. */
void cli_progress_stage(cli_progress *p, const char *what, uint64_t total);
/* The line shares the terminal with another program's output (the application, while it runs): drawn on the
 * terminal's last row, kept out of the scrolling region the program's output moves in, so neither runs onto
 * the other; the region is given back at the end. Where the terminal's size is unknown: drawn as usual. */
void cli_progress_pin(cli_progress *p);
/* Clear the line (if drawn) and free. */
void cli_progress_end(cli_progress *p);

/* The same as a callback, for library hooks that report (done, total), e.g. hp_assemble_opts.progress: ctx is
 * a cli_progress (or NULL). */
void cli_progress_cb(void *ctx, uint64_t done, uint64_t total);
/* The same with ctx a cli_progress ** whose target may still be NULL: for options copied when a library
 * handle is made, before the line is started (hp_assemble_opts). */
void cli_progress_ref_cb(void *ctx, uint64_t done, uint64_t total);

#endif
