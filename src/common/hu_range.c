/* The dispatch-range grammar shared by the CLI and the collector (see hu_range.h). No allocation, no
 * output: the collector calls it inside the application. */
/* SPDX-License-Identifier: MIT */
#include "hu_range.h"

#include <string.h>

#define RANGE_MAX ((uint64_t)INT64_MAX)

/* Digits in s[0..len): the number in *v; the reason on failure. */
static int number(const char *s, size_t len, uint64_t *v, const char **why) {
  if (!len) {
    *why = "a number is missing (write A-B, A-, -B or N)";
    return -1;
  }
  uint64_t x = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') {
      *why = s[i] == '-' ? "a negative number or a '-' too many (write A-B, A-, -B or N)"
                         : "not a whole number (write A-B, A-, -B or N with decimal numbers)";
      return -1;
    }
    unsigned d = (unsigned)(s[i] - '0');
    if (x > (RANGE_MAX - d) / 10) {
      *why = "a number too large (at most 9223372036854775807)";
      return -1;
    }
    x = x * 10 + d;
  }
  if (!x) {
    *why = "dispatches are numbered from 1: 0 is not a dispatch";
    return -1;
  }
  *v = x;
  return 0;
}

hu_status hu_range_parse(const char *s, size_t len, hu_range *r, const char **why) {
  static const char pk[] = "kernel:";
  if (len == (size_t)-1) len = strlen(s);
  r->per_kernel = 0;
  if (len >= sizeof pk - 1 && !memcmp(s, pk, sizeof pk - 1)) {
    r->per_kernel = 1;
    s += sizeof pk - 1;
    len -= sizeof pk - 1;
  }
  if (!len) {
    *why = "empty (write A-B, A-, -B or N)";
    return HU_ERR_INVALID;
  }
  const char *dash = memchr(s, '-', len);
  if (!dash) { /* "N": that dispatch alone */
    if (number(s, len, &r->first, why)) return HU_ERR_INVALID;
    r->last = r->first;
    return HU_OK;
  }
  size_t a = (size_t)(dash - s), b = len - a - 1;
  r->first = 1;
  r->last = UINT64_MAX;
  if (!a && !b) {
    *why = "both ends are missing (write A-B, A-, -B or N)";
    return HU_ERR_INVALID;
  }
  if (a && number(s, a, &r->first, why)) return HU_ERR_INVALID;
  if (b && number(dash + 1, b, &r->last, why)) return HU_ERR_INVALID;
  if (r->first > r->last) {
    *why = "the start is after the end";
    return HU_ERR_INVALID;
  }
  return HU_OK;
}
