/* The map of per-device plans (hu_devplan.h): checked once, then a device's entry found by its index, name or
 * model. No allocation: the collector resolves a device with it on a dispatch path. */
/* SPDX-License-Identifier: MIT */
#include "hu_devplan.h"

#include "hu_pattern.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line of the map at p: its range and selector (sel, NUL-terminated, HU_PATTERN_MAX + 1 bytes); the
 * next line in *next (NULL after the last). 0, or -1 when the line is malformed. */
static int entry(const char *p, unsigned long *a, unsigned long *b, char *sel, const char **next) {
  const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
  int used = 0;
  if (sscanf(p, "%lu-%lu:%n", a, b, &used) != 2 || !used || p + used > end ||
      (size_t)(end - p - used) > HU_PATTERN_MAX || *a > *b || (!*a && *b))
    return -1;
  memcpy(sel, p + used, (size_t)(end - p - used));
  sel[end - p - used] = 0;
  *next = nl ? nl + 1 : NULL;
  return 0;
}

int hu_devplan_check(const char *map, size_t npasses, size_t max_entries, const char **why) {
  char sel[HU_PATTERN_MAX + 1];
  size_t k = 0;
  const char *p = map, *next = map;
  sel[0] = 1;
  for (; next && *p; k++, p = next) {
    unsigned long a, b;
    if (k == max_entries || entry(p, &a, &b, sel, &next) || b > npasses) {
      *why = "not a list of FIRST-LAST:DEVICE lines over the passes of the plan";
      return -1;
    }
  }
  if (!k || sel[0]) {
    *why = "its last entry must be that of every other device (no selector)";
    return -1;
  }
  return 0;
}

static int matches(const char *sel, const char *name, const char *model, int32_t index) {
  if (!sel[0]) return 1;
  char *end;
  long i = strtol(sel, &end, 10);
  if (!*end) return i == index;
  return fnmatch(sel, name, 0) == 0 || fnmatch(sel, model, 0) == 0;
}

long hu_devplan_find(const char *map, const char *name, const char *model, int32_t index, size_t *first,
                     size_t *n) {
  char sel[HU_PATTERN_MAX + 1];
  const char *next = map;
  for (long k = 0; next && *next; k++) {
    unsigned long a, b;
    if (entry(next, &a, &b, sel, &next)) return -1;
    if (!matches(sel, name, model, index)) continue;
    *first = a ? a - 1 : 0;
    *n = a ? b - a + 1 : 0;
    return k;
  }
  return -1;
}
