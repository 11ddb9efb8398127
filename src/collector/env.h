/* The collector's environment contract: every HUBPROF_* variable it reads, parsed once into hpc_env.
 * Nothing else in the collector calls getenv; the CLI talks to the collector only through these. */
#ifndef HUBPROF_COLLECTOR_ENV_H
#define HUBPROF_COLLECTOR_ENV_H

#include <stddef.h>

typedef struct hpc_env {
  const char *output_dir; /* HUBPROF_OUTPUT_DIR, NULL when unset or empty: collector disabled */
  const char *mode;       /* HUBPROF_MODE, "trace" when unset */
  int debug;              /* HUBPROF_DEBUG: 1 = diagnostics on stderr */
  size_t pending;         /* HUBPROF_PENDING: most pending dispatches per thread (power of two); the ring
                             starts smaller and doubles up to this */
  long rank;              /* MPI rank from the launcher (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
                             SLURM_PROCID, first one set), -1 when none */
} hpc_env;

/* One entry of the table of variables (env.c), for documentation and debug dumps. */
typedef struct hpc_env_var {
  const char *name;        /* "HUBPROF_OUTPUT_DIR" */
  const char *default_str; /* value when unset, NULL for "unset" */
  const char *help;        /* one line for docs/collector.md and HUBPROF_DEBUG */
} hpc_env_var;

extern const hpc_env_var hpc_env_vars[]; /* terminated by a NULL name */

/* Read every variable of the table into *e (getenv only; no allocation, no output). Returns 0 when
 * the values are usable, or -1 with a static one-line reason in *why (e.g. unknown HUBPROF_MODE). */
int hpc_env_load(hpc_env *e, const char **why);

#endif
