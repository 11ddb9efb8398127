/* The collector's environment contract: every HUBPROF_* variable it reads, parsed once into hpc_env.
 * Nothing else in the collector calls getenv; the CLI talks to the collector only through these. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_ENV_H
#define HUBPROF_COLLECTOR_ENV_H

#include <stddef.h>

#include "../common/hu_launch.h"

typedef struct hpc_env {
  const char *output_dir; /* HUBPROF_OUTPUT_DIR, NULL when unset or empty: collector disabled */
  const char *mode;       /* HUBPROF_MODE, "trace" when unset, or "profile" */
  int profile;            /* 1 when mode is "profile" (kernel replay, or one pass of application replay) */
  const char *plan;       /* HUBPROF_PLAN (profile): passes separated by ';', counters by ',' */
  long pass;              /* HUBPROF_PASS (profile): 0 = kernel replay of every pass of the plan; k > 0 = this
                             run is pass k of an application replay (the plan then holds that pass only;
                             with per-device plans the whole plan, each device measuring its k-th pass) */
  const char *provider;   /* HUBPROF_PROVIDER (profile): counter provider, "perf" */
  int shadow_device;      /* HUBPROF_SHADOW (profile): 0 = "host" (default), 1 = "device" */
  long fail_pass;         /* HUBPROF_TEST_FAIL_PASS: k >= 2 = pass k fails to enqueue (test hook) */
  int skip_restore;       /* HUBPROF_TEST_SKIP_RESTORE: 1 = never restore between passes (test hook) */
  int debug;              /* HUBPROF_DEBUG: 1 = diagnostics on stderr */
  int start_paused;       /* HUBPROF_START_PAUSED: 1 = collection off until hubprof_start() */
  size_t pending;         /* HUBPROF_PENDING: most pending dispatches per thread (power of two); the ring
                             starts smaller and doubles up to this */
  unsigned harvest_ms;    /* HUBPROF_HARVEST_MS: period of the background harvester (trace mode), 1..1000 */
  int harvester;          /* HUBPROF_HARVESTER: HPC_HARVEST_AUTO (default), _THREAD or _SYNC */
  long rank;              /* MPI rank from the launcher (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
                             SLURM_PROCID, first one set), -1 when none */
  int multiplex; /* HUBPROF_MULTIPLEX (profile): HPC_MUX_OFF, or iteration multiplexing (each dispatch
                    runs once, measuring one pass, rotating per kernel or per launch): HPC_MUX_* */
  /* HUBPROF_KERNEL, _KERNEL_EXCLUDE, HUBPROF_DISPATCH_RANGE, HUBPROF_REGION: the dispatch selection, items
     one per line, NULL when unset (select.c parses them) */
  const char *select_kernel, *select_exclude, *select_range, *select_region;
  hu_launch launch; /* rank, job size, local rank, job id and host name (HUBPROF_HOSTNAME) of this process */
  int api;  /* HUBPROF_API: 1 = also record the OpenCL calls and transfer commands (prov_opencl_api.c) */
  int code; /* HUBPROF_CODE: which program code the store keeps, HPC_CODE_* */
} hpc_env;

/* HUBPROF_CODE: a program's identity and code_object rows always; its sources (as the application gave
 * them, for `analyze --by line`) from HPC_CODE_SOURCE; its binaries too at HPC_CODE_ALL, asked from the
 * runtime (PoCL then compiles each kernel once more, in a variant that never runs). */
enum { HPC_CODE_NONE = 0, HPC_CODE_SOURCE = 1, HPC_CODE_ALL = 2 };

/* When the background harvester runs (docs/collector.md, "Harvest: when a dispatch reaches the log"). */
enum { HPC_HARVEST_AUTO = 0, HPC_HARVEST_THREAD = 1, HPC_HARVEST_SYNC = 2 };

enum { HPC_MUX_OFF = 0, HPC_MUX_KERNEL = 1, HPC_MUX_LAUNCH = 2 };

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
