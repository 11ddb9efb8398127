/* Growable byte buffer with a sticky out-of-memory flag (a run of puts is checked once), and the growth of
 * plain arrays (doubling, overflow-checked). Used by the Parquet writer, the JSON writer and reader, … */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_BUF_H
#define HUBPROF_HU_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct hu_buf {
  unsigned char *p; /* bytes */
  size_t n;         /* bytes used */
  size_t cap;       /* bytes allocated */
  int oom;          /* an allocation failed: the content is incomplete */
} hu_buf;

/* Room for `extra` more bytes: 0, or -1 when out of memory (sets oom; every later put is a no-op). */
int hu_buf_reserve(hu_buf *b, size_t extra);
void hu_buf_put(hu_buf *b, const void *p, size_t n);
void hu_buf_byte(hu_buf *b, unsigned v);
void hu_buf_str(hu_buf *b, const char *s); /* without its NUL */
void hu_buf_le32(hu_buf *b, uint32_t v);
void hu_buf_le64(hu_buf *b, uint64_t v);
void hu_buf_varint(hu_buf *b, uint64_t v); /* LEB128 (hu_varint.h) */
void hu_buf_printf(hu_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* NUL-terminate (the NUL is not counted in n) and return the text; NULL when out of memory. */
char *hu_buf_cstr(hu_buf *b);
void hu_buf_free(hu_buf *b);

/* Make *v (an array of `elem`-byte items, *cap of them) hold at least `need` items: the capacity doubles
 * from 16. 0, or -1 when out of memory or when the size would overflow (*v and *cap then unchanged). */
int hu_grow(void **v, size_t *cap, size_t need, size_t elem);

#endif
