/* `--partition` of the commands that write a store: its option table, its check, and setting it on the
 * created store (partition.c). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_PARTITION_H
#define HUBPROF_CLI_PARTITION_H

#include "options.h"

#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

/* --partition auto|node,process|process|node|none (default auto). */
extern const cli_opt cli_opts_partition[];
/* Read the option after cli_parse: a partition asked of a non-Parquet `format` is one error line naming
 * cmd and CLI_USAGE; else 0. */
int cli_partition_choose(const char *cmd, const cli_args *a, const char *format);
/* Set the choice on the created store `out` (nothing for other formats): auto partitions by node,process
 * when inputs[0..n) (files or folders) hold at least cli_partition_auto_bytes(). 0, or CLI_FAIL with the
 * message printed. */
int cli_partition_apply(hp_store *out, char *const *inputs, size_t n);
/* 1 GiB, or $HUBPROF_PARTITION_AUTO_BYTES (for tests) when it is a number. */
uint64_t cli_partition_auto_bytes(void);

#endif
