/* Who launched this process in a cluster job: MPI rank, job size, node-local rank and job id from the
 * launchers' variables (Open MPI, MPICH/PMI, PMIx, Slurm), and the host name (HUBPROF_HOSTNAME overrides it).
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_LAUNCH_H
#define HUBPROF_HU_LAUNCH_H

typedef struct hu_launch {
  long rank;        /* OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID (first set); -1 when none */
  long size;        /* OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS; -1 when none */
  long local_rank;  /* OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, PMI_LOCAL_RANK, SLURM_LOCALID; -1 */
  char job_id[128]; /* SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid; "" */
  char host[256];   /* HUBPROF_HOSTNAME when set (tests, containers sharing a host name), else gethostname;
                       '/' replaced by '_' so it can be part of a file name */
} hu_launch;

/* Fill *l from the environment (getenv and gethostname only: no allocation, no output). Returns 1 when a
 * rank variable was set, else 0. */
int hu_launch_read(hu_launch *l);

#endif
