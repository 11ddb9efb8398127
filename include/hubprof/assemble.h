/* hubprof assembly: the one pipeline that turns inputs (collector logs, stores of any format) into ONE store:
 * one damage policy, per-input transforms (multiplex imputation, application-replay matching and pass
 * tagging) applied while streaming into one writer, no intermediate files, progress and warnings reported. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ASSEMBLE_H
#define HUBPROF_ASSEMBLE_H

#include "hubprof/export.h"
#include "hubprof/hub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Iteration multiplexing: how the counters a dispatch did not measure are imputed. */
typedef enum hp_impute {
  HP_IMPUTE_NONE = 0,   /* nothing imputed (merge, convert, trace, kernel replay) */
  HP_IMPUTE_KERNEL = 1, /* the mean of the same kernel's measured values in its process */
  HP_IMPUTE_LAUNCH = 2, /* the same kernel with the same global and work-group sizes */
  HP_IMPUTE_AUTO = 3,   /* each input as its metadata says (multiplex_policy); none where it says nothing */
} hp_impute;

/* Application replay: which dispatch of a later run is the same as one of the first run. Processes are
 * paired first: same command line, then order of start among equals. */
typedef enum hp_match {
  HP_MATCH_GRID = 0, /* kernel name, global and work-group sizes, then order among equals */
  HP_MATCH_NAME = 1, /* kernel name, then order among equals */
  HP_MATCH_ALL = 2,  /* kernel name, sizes and position in the process's whole sequence */
} hp_match;

typedef struct hp_assemble_opts {
  uint32_t size; /* sizeof(hp_assemble_opts) of the caller's build */
  /* The damage policy (docs/api.md): 0 = a damaged input gives what is complete, with a warning, and an
   * input with nothing complete in it is skipped with a warning; 1 = either is an error. */
  int strict;
  hp_impute impute;
  /* The pass plan imputation works with, "a,b;c" (';' between passes); NULL = each input's pass_plan. */
  const char *plan;
  uint32_t min_per_pass; /* a key is imputed only when each pass was measured this often; 0 = 1 */
  hp_match match;        /* application replay (inputs added with run > 0) */
  /* Progress: rows read so far and the rows of every input (0 = unknown), every 65 536 rows and once at the
   * end (done == total), on the thread that called hp_assembly_write. NULL: none. */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
  /* Warnings, one line each without a prefix ("x.log: truncated at byte 4096 (taking what is
   * complete)"). NULL: not reported (the counts in hp_assemble_stats remain). */
  void (*warn)(void *ctx, const char *line);
  void *warn_ctx;
  /* Set to nonzero (e.g. by a signal handler) to stop: hp_assembly_write then returns HP_ERR_CANCELLED within
   * 4096 rows, having committed nothing. NULL: never. */
  const volatile int *cancel;
} hp_assemble_opts;

typedef struct hp_assemble_stats {
  uint32_t size;
  hp_merge_stats merge;    /* rows in and out, damaged inputs, duplicates (its size is set by the hub) */
  uint64_t skipped_inputs; /* inputs with nothing complete in them, left out (lenient policy) */
  uint64_t lost_records;   /* records the collectors could not store (the process rows' lost_records) */
  /* iteration multiplexing */
  uint64_t measured_values, imputed_values;
  uint64_t keys, incomplete_keys; /* kernels (or launches) per process; those left out of imputation */
  /* application replay */
  uint64_t runs;                 /* runs given (passes) */
  uint64_t unmatched_dispatches; /* dispatches of a later run without a partner, and the first run's without
                                    a partner in a later run */
  uint64_t unmatched_processes;  /* processes of a later run without a partner in the first run, and back */
  /* processes that did not close their logs (killed, power lost: end time unknown), and their dispatches
     kept in the output */
  uint64_t unfinished_processes, unfinished_dispatches;
  /* dispatches the collectors' selection (trace|profile --kernel, --dispatch-range, --region) forwarded
     without recording: the sum of the inputs' metadata dispatches_not_selected (first run's processes) */
  uint64_t not_selected_dispatches;
  /* dispatches still running when their process died (a sampled run's "dispatch begun" row without the
     dispatch's own row): kept without device times, with their samples; and, in a run not sampled, those
     launched and not seen to end (a killed process's log read with its launch file, docs/formats/log.md):
     kept without device times; counted in unfinished_dispatches */
  uint64_t incomplete_dispatches;
  /* kernels the output's dispatches name, a kernel being its name and its program (kernel_symbol rows may
     also name kernels created but never dispatched) */
  uint64_t kernels_dispatched;
} hp_assemble_stats;

typedef struct hp_assembly hp_assembly; /* opaque */

/* A new assembly with these options (NULL: defaults). */
HP_API hp_status hp_assembly_new(const hp_assemble_opts *o, hp_assembly **out);

/* Add the store at `path` (any format, detected). `run` is the application-replay run it came from (0 = the
 * first run, or no replay). The damage policy is applied here: HP_OK when taken (perhaps damaged, with a
 * warning) or skipped (nothing complete, lenient), otherwise the error, explained by hp_assembly_error. */
HP_API hp_status hp_assembly_add(hp_assembly *a, const char *path, uint32_t run);
/* Add an open store (HP_READ); the caller keeps it and closes it after hp_assembly_free. Same policy. */
HP_API hp_status hp_assembly_add_store(hp_assembly *a, hp_store *s, uint32_t run);

/* How process `pid` ended, as the parent that waited for it saw it (the CLI for the application it ran and
 * the descendants it reaped): its exit code, or the signal that ended it (exit_code -1). The process rows
 * with that pid get it, overriding what the collector said; the warning about a process that did not close
 * its log names the signal. Call before hp_assembly_write. */
HP_API hp_status hp_assembly_set_exit(hp_assembly *a, int64_t pid, int64_t exit_code, int64_t exit_signal);

/* Stream every input, transformed, into `out` (an open HP_CREATE store) in one pass: nodes, agents, kernels
 * … de-duplicated and ids remapped as hp_merge does; multiplexed inputs gain their imputed values; later
 * replay runs' counter values are attached to the first run's dispatches with their pass. `out` is left
 * for the caller to commit or abort; on failure hp_assembly_error (and hp_store_error(out)) explain.
 * `stats` may be NULL. Call once per assembly. */
HP_API hp_status hp_assembly_write(hp_assembly *a, hp_store *out, hp_assemble_stats *stats);

/* One line naming the input (or output) and the problem of the last failure, or "". */
HP_API const char *hp_assembly_error(const hp_assembly *a);

/* Release the assembly and the stores it opened. Accepts NULL. */
HP_API void hp_assembly_free(hp_assembly *a);

#ifdef __cplusplus
}
#endif
#endif /* HUBPROF_ASSEMBLE_H */
