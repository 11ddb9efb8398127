/* `hubprof trace|profile --kernel, --kernel-exclude, --dispatch-range, --region`: the option rows both
 * subcommands list, their checks (before the application starts), and the values joined for the collector's
 * environment (HUBPROF_KERNEL, HUBPROF_KERNEL_EXCLUDE, HUBPROF_DISPATCH_RANGE, HUBPROF_REGION). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_SELECT_ARGS_H
#define HUBPROF_CLI_SELECT_ARGS_H

#include "options.h"

#define CLI_SELECT_MAX 64 /* values per option: the collector's limit (HPC_SELECT_MAX in select.h) */

extern const cli_opt cli_opts_dispatch_select[]; /* trace, profile */

/* The values of each option joined by newlines (malloc'd), NULL when the option was not given. */
typedef struct cli_selection {
  char *kernel, *exclude, *range, *region;
} cli_selection;

/* Fill *s from the parsed options of `cmd` ("trace", "profile"). CLI_OK; CLI_USAGE (an option given more
 * than CLI_SELECT_MAX times) or CLI_FAIL (out of memory), the error printed. */
int cli_selection_get(const cli_args *a, const char *cmd, cli_selection *s);
void cli_selection_free(cli_selection *s);

#endif
