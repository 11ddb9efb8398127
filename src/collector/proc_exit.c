/* How the process ends, as the exit shim (shim/exit_shim.c, preloaded by hubprof) reports it: the exit code
 * for the process row, and for _exit() the log closed as exit() would have, so a forked child that ends with
 * _exit() (as it should) does not read as killed. */
/* SPDX-License-Identifier: MIT */
#include "collector.h"

_Atomic int64_t hpc_exit_code = -1; /* the code given to exit/_exit, -1 until one is */

/* code: what the process passed to exit/_exit/_Exit; quick: 1 for _exit/_Exit (no atexit handlers will run).
 * Called in the exiting process itself (the shim skips vfork children), never from inside the collector. */
HPC_EXPORT void hubprof_collector_exit(int code, int quick) {
  int64_t expect = -1;
  atomic_compare_exchange_strong(&hpc_exit_code, &expect, (int64_t)(code & 0xff));
  if (quick && !hpc_busy) hpc_exit_close();
}
