/* The analysis library's entry (ha_run): checks a query and hands it to the file of its grouping (kernels.c,
 * regions.c, ranks.c, api.c, attribution.c). The groupings give result tables (result.c) shared by the CLI
 * and Python; ha_diff (diff.c) compares two stores. Knows no format. */
/* SPDX-License-Identifier: MIT */
#include "ha_result.h"

#include <stdint.h>

hp_status ha_run(hp_store *s, const ha_query *q, ha_result **out) {
  if (out) *out = NULL;
  if (!s || !q || !out || q->size < sizeof(uint32_t) + sizeof(int32_t))
    return hai_error_out(out, HP_ERR_INVALID, "bad arguments");
  int group = q->group;
  if (group == HA_BY_REGION || group == HA_BY_REGION_TREE)
    return hai_regions(s, q, group == HA_BY_REGION_TREE, out);
  if (group >= HA_BY_INSTRUCTION && group <= HA_BY_SOURCE) return hai_attribution(s, q, out);
  if (group == HA_TIMELINE) return hai_timeline(s, q, out);
  if (group == HA_BY_RANK || group == HA_BY_RANK_IMBALANCE)
    return hai_ranks(s, q, group == HA_BY_RANK_IMBALANCE, out);
  if (group == HA_BY_API) return hai_api(s, q, out);
  if (group == HA_BY_COPY) return hai_copies(s, q, out);
  if (group != HA_BY_KERNEL && group != HA_BY_DISPATCH && group != HA_BY_KERNEL_GRID)
    return hai_error_out(out, HP_ERR_INVALID, "unknown grouping %d", group);
  return hai_kernels(s, q, out);
}
