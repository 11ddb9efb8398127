/* Binary search over a sorted array, one loop for every caller: the partition point, as a macro so that the
 * test is the caller's own expression (no call per step: Parquet's row lookup and the report's joins use it).
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_SEARCH_H
#define HUBPROF_HU_SEARCH_H

#include <stddef.h>

/* lo (a size_t lvalue) = the first index i in [0, n) for which `before`, an expression of the index named
 * mid, is false; n when it holds everywhere. `before` must hold for a leading run of indexes and no other
 * (the array sorted by what it tests): a lower bound with `a[mid].key < key`, an upper bound with `<=`. */
#define HU_PARTITION(lo, n, mid, before)                                                                     \
  do {                                                                                                       \
    size_t hu_hi_ = (n);                                                                                     \
    (lo) = 0;                                                                                                \
    while ((lo) < hu_hi_) {                                                                                  \
      size_t mid = (lo) + (hu_hi_ - (lo)) / 2;                                                               \
      if (before)                                                                                            \
        (lo) = mid + 1;                                                                                      \
      else                                                                                                   \
        hu_hi_ = mid;                                                                                        \
    }                                                                                                        \
  } while (0)

#endif
