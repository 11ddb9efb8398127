/* The assembly's insides shared by its files: assemble.c (inputs, application replay, the merge's hooks,
 * write) and assemble_mux.c (iteration multiplexing's imputation). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ASSEMBLE_INTERNAL_H
#define HUBPROF_ASSEMBLE_INTERNAL_H

#include "hubprof/assemble.h"
#include "merge_internal.h"

#include "../common/hu_map.h"

#include <stddef.h>
#include <stdint.h>

/* One input of the assembly. */
typedef struct ainput {
  hp_store *s;
  int owned; /* opened by the assembly */
  uint32_t run;
  char *path;       /* an owned input's path: closed (s NULL) while not read, opened again by ain_open */
  hp_store *parked; /* ... or parked (hp_store_park: its file closed, what was read kept) while s is NULL */
} ainput;

typedef struct mproc mproc;
typedef struct plog plog;

struct hp_assembly {
  hp_assemble_opts o;
  char error[HP_ERRMSG_MAX];
  ainput *in;
  size_t n, cap;
  uint64_t skipped;
  int written;
  /* transforms, built by hp_assembly_write */
  hp_store **merged; /* the merge's inputs: every input, or the first run's */
  size_t nmerged;
  mproc **mux;      /* per merged input: its imputation, or NULL */
  char *mux_json;   /* multiplex_incomplete */
  char *mux_cold;   /* multiplex_cold_raw: the raw readings of cold dispatches replaced by warm estimates */
  char *mux_policy; /* multiplex_policy written */
  uint64_t mux_keys;
  uint32_t replay_runs; /* 0: no application replay */
  plog **runs;          /* runs[k][i]: process i of run k, in order of start */
  size_t *nprocs;
  char *replay_plan;   /* the whole plan: every run's pass_plan */
  int replay_devplans; /* per-device plans: each run has the whole plan, its values their own pass numbers */
  /* the extra-rows iterator of the hooks */
  size_t it_a, it_b;
  hp_cursor *it_c;
  int it_state;
  hp_merge_hooks *hooks;    /* while writing: where a failing hook leaves its error */
  hp_assemble_stats *stats; /* while writing */
  char num[2][32];          /* metadata values */
  /* processes that did not close their logs (end time 0): reported with the dispatches kept */
  struct unfinished {
    size_t ix;
    uint64_t id; /* the process row's id in input ix */
    int64_t pid;
    char *command;
    uint64_t kept;
    uint64_t incomplete; /* of kept: running when it died (a "dispatch begun" row only) */
    uint64_t launched;   /* of kept, in a run not sampled: launched and not seen to end (the launch file's) */
    int64_t exit_signal; /* as the input says (-1: unknown) */
  } * unf;
  /* per input of a sampled run: dispatch ids of "dispatch begun" rows → BEGUN_ONLY, BEGUN_ENDED (the
   * dispatch's own row is there too: the begun row is dropped) or BEGUN_KEPT (kept once, as incomplete) */
  hu_idmap *begun;
  size_t nunf;
  /* dispatches not selected (metadata dispatches_not_selected): summed over the processes, written once */
  int has_nsel;
  char nsel[32];
  struct pexit { /* how processes ended, as their waiting parent saw it (hp_assembly_set_exit) */
    int64_t pid, code, sig;
  } * exits;
  size_t nexits;
  /* kernels dispatched (hp_assemble_stats.kernels_dispatched): each kernel (name and program) once */
  hu_strmap kkeys;      /* "name\x1fprogram" -> its index */
  hu_idmap kof;         /* input << 40 | its kernel_symbol id -> index + 1 */
  unsigned char *kdone; /* per index: a dispatch of it was written */
  size_t capkdone;
};

/* A warning line through the caller's hook (none: dropped). */
void asm_warnf(hp_assembly *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record the failure's message (hp_assembly_error) and return st. */
hp_status asm_fail(hp_assembly *a, hp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Kernel names by id of store s, and in names[n + id] its program's identity: 0, or -1 out of memory. */
int asm_knames_load(hp_store *s, char ***names, size_t *n);
const char *asm_kname(char *const *names, size_t n, uint64_t id); /* "" when unknown */
const char *asm_kprog(char *const *names, size_t n, uint64_t id); /* "" when unknown */

/* ---- iteration multiplexing (assemble_mux.c) ---- */
/* Build the imputation of every merged input that asks for it (a->mux), the metadata JSON of incomplete keys
 * and of cold readings replaced, and the warnings; HP_OK or the failure (asm_fail). */
hp_status asm_mux_prepare(hp_assembly *a, hp_assemble_stats *stats);
void asm_mproc_free(mproc *p);
void asm_mux_mark_cold(const mproc *p, hp_dispatch *d); /* a dispatch row: its cold mark */
void asm_mux_warm_cold(const mproc *p,
                       hp_counter_value *v); /* a cold reading replaced by the warm estimate */
/* The next imputed value of input ix into *v (a->it_a/it_b walk its dispatches and counters): 1, or 0 when
 * there is no more. */
int asm_mux_extra(hp_assembly *a, size_t ix, hp_counter_value *v, hp_assemble_stats *stats);

#endif
