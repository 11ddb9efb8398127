/* Growable byte buffer and array growth (hu_buf.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_buf.h"

#include "hu_varint.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hu_buf_reserve(hu_buf *b, size_t extra) {
  assert(b->n <= b->cap && (b->p || !b->cap)); /* invariant: the bytes in use fit the allocation */
  if (b->oom) return -1;
  if (extra <= b->cap - b->n) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->n < extra) {
    if (cap > SIZE_MAX / 2) {
      b->oom = 1;
      return -1;
    }
    cap *= 2;
  }
  unsigned char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  assert(b->cap - b->n >= extra); /* the growth made the room asked for */
  return 0;
}

void hu_buf_put(hu_buf *b, const void *p, size_t n) {
  if (!n || hu_buf_reserve(b, n)) return;
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

void hu_buf_byte(hu_buf *b, unsigned v) {
  if (hu_buf_reserve(b, 1)) return;
  b->p[b->n++] = (unsigned char)v;
}

void hu_buf_str(hu_buf *b, const char *s) { hu_buf_put(b, s, strlen(s)); }

void hu_buf_le32(hu_buf *b, uint32_t v) {
  if (hu_buf_reserve(b, 4)) return;
  hu_put_le32(b->p + b->n, v);
  b->n += 4;
}

void hu_buf_le64(hu_buf *b, uint64_t v) {
  if (hu_buf_reserve(b, 8)) return;
  hu_put_le64(b->p + b->n, v);
  b->n += 8;
}

void hu_buf_varint(hu_buf *b, uint64_t v) {
  if (hu_buf_reserve(b, HU_VARINT_ROOM)) return;
  b->n = (size_t)(hu_varint_put(b->p + b->n, v) - b->p);
}

void hu_buf_printf(hu_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    hu_buf_put(b, tmp, (size_t)n);
    return;
  }
  if (hu_buf_reserve(b, (size_t)n + 1)) return;
  va_start(ap, fmt);
  vsnprintf((char *)b->p + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

char *hu_buf_cstr(hu_buf *b) {
  if (hu_buf_reserve(b, 1)) return NULL;
  b->p[b->n] = 0;
  return (char *)b->p;
}

void hu_buf_free(hu_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

int hu_grow(void **v, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  if (!elem) return -1;
  size_t nc = *cap ? *cap : 16;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) return -1;
    nc *= 2;
  }
  if (nc > SIZE_MAX / elem) return -1;
  void *n = realloc(*v, nc * elem);
  if (!n) return -1;
  *v = n;
  *cap = nc;
  return 0;
}
