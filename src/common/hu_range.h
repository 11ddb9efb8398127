/* Dispatch ranges as `hubprof trace|profile --dispatch-range` writes them ("A-B", "A-", "-B", "N", each
 * optionally prefixed "kernel:"), parsed the same way by the CLI (before the application starts) and by the
 * collector (from HUBPROF_DISPATCH_RANGE). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_RANGE_H
#define HUBPROF_HU_RANGE_H

#include "hu.h"

#include <stddef.h>
#include <stdint.h>

/* An inclusive range of 1-based dispatch numbers; last == UINT64_MAX for an open end ("A-"). */
typedef struct hu_range {
  uint64_t first, last;
  int per_kernel; /* "kernel:A-B": numbered per kernel name, else across the process */
} hu_range;

/* Parse one range of exactly `len` bytes of s (the whole string when len is (size_t)-1). Numbers are
 * decimal, from 1 to 2^63-1. HU_OK, or HU_ERR_INVALID with a static reason in *why ("the start 5 is after
 * the end 3", "not a number: 'x'", ...). */
hu_status hu_range_parse(const char *s, size_t len, hu_range *r, const char **why);

#endif
