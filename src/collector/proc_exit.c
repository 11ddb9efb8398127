/* How the process ends, as the exit shim (shim/exit_shim.c, preloaded by hubprof) reports it: the code given
 * to exit(), for the process row. */
/* SPDX-License-Identifier: MIT */
#include "collector.h"

_Atomic int64_t hpc_exit_code = -1; /* the code given to exit/_exit, -1 until one is */

/* code: what the process passed to exit(). Called in the exiting process itself (the shim skips vfork
 * children and signal handlers), before atexit handlers run: the process row written at exit carries it. */
HPC_EXPORT void hubprof_collector_exit(int code) {
  int64_t expect = -1;
  atomic_compare_exchange_strong(&hpc_exit_code, &expect, (int64_t)(code & 0xff));
}
