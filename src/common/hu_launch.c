/* The launcher's view of this process (hu_launch.h): rank, size, local rank, job id, host name. */
/* SPDX-License-Identifier: MIT */
#include "hu_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first variable of names[] that holds a number >= 0, or -1. */
static long first_number(const char *const *names) {
  for (; *names; names++) {
    const char *v = getenv(*names);
    if (!v || !*v) continue;
    char *end;
    long x = strtol(v, &end, 10);
    if (!*end && x >= 0) return x;
  }
  return -1;
}

int hu_launch_read(hu_launch *l) {
  static const char *const rank[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL};
  static const char *const size[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
  static const char *const local[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                                      "SLURM_LOCALID", NULL};
  static const char *const job[] = {
      "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", NULL};
  l->rank = first_number(rank);
  l->size = first_number(size);
  l->local_rank = first_number(local);
  l->job_id[0] = 0;
  for (const char *const *n = job; *n; n++) {
    const char *v = getenv(*n);
    if (v && *v) {
      snprintf(l->job_id, sizeof l->job_id, "%s", v);
      break;
    }
  }
  const char *h = getenv("HUBPROF_HOSTNAME");
  if (h && *h)
    snprintf(l->host, sizeof l->host, "%s", h);
  else if (gethostname(l->host, sizeof l->host - 1) != 0 || !l->host[0])
    snprintf(l->host, sizeof l->host, "localhost");
  l->host[sizeof l->host - 1] = 0;
  for (char *c = l->host; *c; c++)
    if (*c == '/') *c = '_';
  return l->rank >= 0;
}
