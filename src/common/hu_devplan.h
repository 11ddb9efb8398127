/* The map of per-device plans (`profile --counters 'device=SEL:LIST'`: HUBPROF_DEVICE_PLANS, and metadata
 * device_plans of a store): which passes of the whole plan each device measures. Read by the collector at a
 * device's first dispatch and by the assembly (multiplexing's imputation per device). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_DEVPLAN_H
#define HUBPROF_HU_DEVPLAN_H

#include <stddef.h>
#include <stdint.h>

/* The map: one line per device list, "FIRST-LAST:SEL" — 1-based passes of the whole plan ("0-0" for none),
 * SEL a device index or a glob over its name or model; the last line has an empty SEL (every other
 * device). 0 when map is such a list over npasses passes with at most max_entries lines, else -1 with a
 * static reason in *why. */
int hu_devplan_check(const char *map, size_t npasses, size_t max_entries, const char **why);
/* The entry of the device (name, model, index) in a checked map: its 0-based index, the first of its
 * passes (0-based) in *first and their count in *n (0: it measures nothing). -1 when the map is not one. */
long hu_devplan_find(const char *map, const char *name, const char *model, int32_t index, size_t *first,
                     size_t *n);

#endif
