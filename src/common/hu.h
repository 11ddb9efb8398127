/* hubprof's shared utilities (src/common, prefix hu_): the one status enum of the part. Every module may
 * use src/common; src/common uses nothing of hubprof. Headers: hu_buf.h, hu_hash.h, hu_varint.h, hu_json.h,
 * hu_map.h, hu_dir.h, hu_io.h, hu_text.h, hu_search.h. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_H
#define HUBPROF_HU_H

typedef enum hu_status {
  HU_OK = 0,
  HU_ERR_NOMEM = -1,   /* an allocation failed (or a size would overflow) */
  HU_ERR_INVALID = -2, /* the input is not what the function accepts */
} hu_status;

#endif
