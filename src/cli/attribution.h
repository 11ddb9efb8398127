/* Sample attribution views of `hubprof analyze` (attribution.c): hot code of a kernel, counter timelines. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_ATTRIBUTION_H
#define HUBPROF_CLI_ATTRIBUTION_H

#include "hubprof/hub.h"

#include <stddef.h>
#include <stdint.h>

enum { CLI_ATTR_INSTRUCTION, CLI_ATTR_LINE, CLI_ATTR_FUNCTION, CLI_ATTR_BLOCK };
static const char *const cli_attr_names[] = {"instruction", "line", "function", "basic-block", NULL};

/* PC samples of the kernels matching the globs, grouped `by`; printed as fmt (report_fmt), at most limit rows
 * (0: all). Returns the CLI exit code. */
int cli_attribution(hp_store *s, int by, const char *const *kernels, size_t nk, int fmt, long limit);
/* The counter samples of the dispatch with the collector's id `dispatch`. Returns the CLI exit code. */
int cli_timeline(hp_store *s, uint64_t dispatch, int fmt);

#endif
