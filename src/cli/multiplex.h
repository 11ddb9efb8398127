/* Iteration multiplexing after the run (`hubprof profile --replay multiplex`): imputes, per kernel or launch,
 * the counters each dispatch did not measure, reports keys whose coverage is incomplete, writes ONE store. */
#ifndef HUBPROF_CLI_MULTIPLEX_H
#define HUBPROF_CLI_MULTIPLEX_H

#include "run_app.h"

/* A key's pass must have been measured by at least this many of its dispatches for the key to be imputed. */
#define MUX_MIN_PER_PASS 1

/* Merge the per-process logs in `dir` (written with HUBPROF_MULTIPLEX = o->multiplex and the plan o->plan)
 * into `output`, adding the imputed values and the multiplex_* metadata; prints the summary and one warning
 * per key with incomplete coverage. Returns 0 on success; otherwise 1 with the logs kept in dir (message
 * printed), or 1 when there was nothing to merge. */
int multiplex_merge(const run_opts *o, const char *output, const char *dir);

#endif
