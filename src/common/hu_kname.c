/* Kernel names disambiguated by their program's identity where names clash (hu_kname.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_kname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kn_ctx {
  char *recs;
  size_t stride, name_off, prog_off;
} kn_ctx;

static char **name_at(const kn_ctx *c, size_t i) { return (char **)(c->recs + i * c->stride + c->name_off); }
static const char *prog_of(const kn_ctx *c, size_t i) {
  const char *p = *(char **)(c->recs + i * c->stride + c->prog_off);
  return p ? p : "";
}

static int by_name_prog(const void *a, const void *b, void *ctx) {
  const kn_ctx *c = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int r = strcmp(*name_at(c, x), *name_at(c, y));
  return r ? r : strcmp(prog_of(c, x), prog_of(c, y));
}

/* Digits of the identities in ord[i..j) (sorted by identity) that tell every two distinct ones apart. */
static size_t digits_needed(const kn_ctx *c, const size_t *ord, size_t i, size_t j) {
  size_t d = HU_KNAME_DIGITS;
  for (size_t k = i + 1; k < j; k++) {
    const char *p = prog_of(c, ord[k - 1]), *q = prog_of(c, ord[k]);
    if (!strcmp(p, q)) continue;
    size_t same = 0;
    while (p[same] && p[same] == q[same])
      same++;
    if (same + 1 > d) d = same + 1;
  }
  return d;
}

int hu_kname_disambiguate(void *recs, size_t n, size_t stride, size_t name_off, size_t prog_off) {
  if (n < 2) return 0;
  size_t *ord = malloc(n * sizeof *ord);
  if (!ord) return -1;
  for (size_t i = 0; i < n; i++)
    ord[i] = i;
  kn_ctx c = {recs, stride, name_off, prog_off};
  qsort_r(ord, n, sizeof *ord, by_name_prog, &c);
  int rc = 0;
  for (size_t i = 0, j; i < n && rc == 0; i = j) {
    size_t distinct = 1;
    for (j = i + 1; j < n && !strcmp(*name_at(&c, ord[i]), *name_at(&c, ord[j])); j++)
      distinct += strcmp(prog_of(&c, ord[j - 1]), prog_of(&c, ord[j])) != 0;
    if (distinct < 2) continue;
    size_t d = digits_needed(&c, ord, i, j);
    for (size_t k = i; k < j && rc == 0; k++) {
      const char *p = prog_of(&c, ord[k]);
      if (!*p) continue; /* unknown program: the bare name */
      char **name = name_at(&c, ord[k]);
      size_t len = strlen(*name) + d + 2;
      char *nn = malloc(len);
      if (!nn) {
        rc = -1;
        break;
      }
      snprintf(nn, len, "%s#%.*s", *name, (int)d, p);
      free(*name);
      *name = nn;
    }
  }
  free(ord);
  return rc;
}
