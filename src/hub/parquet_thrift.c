/* Parquet helpers: growable byte buffers and the Thrift compact protocol (writer and bounded reader)
 * used for Parquet page headers and file metadata. Written from the Thrift compact protocol spec; the
 * reader trusts no length or count: every one is checked against the bytes left. */
#include "parquet_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- buffers ---- */
int pq_buf_reserve(pq_buf *b, size_t extra) {
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
  return 0;
}

void pq_buf_put(pq_buf *b, const void *p, size_t n) {
  if (!n || pq_buf_reserve(b, n)) return;
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

void pq_buf_byte(pq_buf *b, unsigned v) {
  if (pq_buf_reserve(b, 1)) return;
  b->p[b->n++] = (unsigned char)v;
}

void pq_buf_le32(pq_buf *b, uint32_t v) {
  unsigned char t[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  pq_buf_put(b, t, 4);
}

void pq_buf_le64(pq_buf *b, uint64_t v) {
  unsigned char t[8];
  for (int i = 0; i < 8; i++)
    t[i] = (unsigned char)(v >> (8 * i));
  pq_buf_put(b, t, 8);
}

void pq_buf_varint(pq_buf *b, uint64_t v) {
  unsigned char t[10];
  size_t n = 0;
  while (v >= 0x80) {
    t[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  t[n++] = (unsigned char)v;
  pq_buf_put(b, t, n);
}

void pq_buf_free(pq_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* ---- compact writer ---- */
static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

void tc_init(tc_writer *w, pq_buf *b) {
  memset(w, 0, sizeof *w);
  w->b = b;
}

static void field_header(tc_writer *w, int16_t id, int type) {
  int16_t delta = (int16_t)(id - w->last[w->depth]);
  if (delta > 0 && delta <= 15) {
    pq_buf_byte(w->b, (unsigned)(delta << 4 | type));
  } else {
    pq_buf_byte(w->b, (unsigned)type);
    pq_buf_varint(w->b, zigzag(id));
  }
  w->last[w->depth] = id;
}

void tc_i32(tc_writer *w, int16_t id, int32_t v) {
  field_header(w, id, TC_I32);
  pq_buf_varint(w->b, zigzag(v));
}

void tc_i64(tc_writer *w, int16_t id, int64_t v) {
  field_header(w, id, TC_I64);
  pq_buf_varint(w->b, zigzag(v));
}

void tc_i8(tc_writer *w, int16_t id, int8_t v) {
  field_header(w, id, TC_I8);
  pq_buf_byte(w->b, (unsigned char)v);
}

void tc_bool(tc_writer *w, int16_t id, int v) { field_header(w, id, v ? TC_TRUE : TC_FALSE); }

void tc_binary(tc_writer *w, int16_t id, const void *p, size_t n) {
  field_header(w, id, TC_BINARY);
  pq_buf_varint(w->b, n);
  pq_buf_put(w->b, p, n);
}

static void push(tc_writer *w) {
  if (w->depth + 1 >= PQ_MAX_THRIFT_DEPTH) {
    w->b->oom = 1; /* never with the fixed shapes written here */
    return;
  }
  w->last[++w->depth] = 0;
}

void tc_struct_begin(tc_writer *w, int16_t id) {
  field_header(w, id, TC_STRUCT);
  push(w);
}

void tc_struct_end(tc_writer *w) {
  pq_buf_byte(w->b, TC_STOP);
  if (w->depth > 0) w->depth--;
}

void tc_list_begin(tc_writer *w, int16_t id, int elem_type, size_t n) {
  field_header(w, id, TC_LIST);
  if (n < 15) {
    pq_buf_byte(w->b, (unsigned)(n << 4 | (unsigned)elem_type));
  } else {
    pq_buf_byte(w->b, 0xF0u | (unsigned)elem_type);
    pq_buf_varint(w->b, n);
  }
}

void tc_elem_i32(tc_writer *w, int32_t v) { pq_buf_varint(w->b, zigzag(v)); }

void tc_elem_binary(tc_writer *w, const void *p, size_t n) {
  pq_buf_varint(w->b, n);
  pq_buf_put(w->b, p, n);
}

void tc_elem_struct_begin(tc_writer *w) { push(w); }

void tc_stop(tc_writer *w) { pq_buf_byte(w->b, TC_STOP); }

/* ---- compact reader ---- */
static uint64_t read_varint(tc_reader *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->err || r->p >= r->end) {
      r->err = 1;
      return 0;
    }
    unsigned char c = *r->p++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  r->err = 1; /* more than 10 bytes */
  return 0;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

int tc_field(tc_reader *r, int16_t *last, int *type, int16_t *id) {
  if (r->err || r->p >= r->end) {
    r->err = 1;
    return 0;
  }
  unsigned char c = *r->p++;
  if (c == TC_STOP) return 0;
  *type = c & 0x0f;
  int delta = c >> 4;
  if (delta) {
    *id = (int16_t)(*last + delta);
  } else {
    int64_t v = unzigzag(read_varint(r));
    if (v < INT16_MIN || v > INT16_MAX) r->err = 1;
    *id = (int16_t)v;
  }
  *last = *id;
  if (*type < TC_TRUE || *type > TC_STRUCT) r->err = 1;
  return !r->err;
}

int64_t tc_read_int(tc_reader *r, int type) {
  switch (type) {
  case TC_I8:
    if (r->err || r->p >= r->end) {
      r->err = 1;
      return 0;
    }
    return (int8_t)*r->p++;
  case TC_I16:
  case TC_I32:
  case TC_I64: {
    int64_t v = unzigzag(read_varint(r));
    if (type == TC_I16 && (v < INT16_MIN || v > INT16_MAX)) r->err = 1;
    if (type == TC_I32 && (v < INT32_MIN || v > INT32_MAX)) r->err = 1;
    return r->err ? 0 : v;
  }
  default: r->err = 1; return 0;
  }
}

void tc_read_binary(tc_reader *r, const unsigned char **p, size_t *n) {
  uint64_t len = read_varint(r);
  if (r->err || len > (uint64_t)(r->end - r->p)) {
    r->err = 1;
    *p = NULL;
    *n = 0;
    return;
  }
  *p = r->p;
  *n = (size_t)len;
  r->p += len;
}

void tc_read_list(tc_reader *r, int *elem_type, size_t *n) {
  *n = 0;
  *elem_type = 0;
  if (r->err || r->p >= r->end) {
    r->err = 1;
    return;
  }
  unsigned char c = *r->p++;
  uint64_t count = c >> 4;
  if (count == 15) count = read_varint(r);
  *elem_type = c & 0x0f;
  /* every element takes at least one byte */
  if (r->err || count > (uint64_t)(r->end - r->p)) {
    r->err = 1;
    return;
  }
  *n = (size_t)count;
}

static void skip_depth(tc_reader *r, int type, int depth) {
  if (r->err) return;
  if (depth > PQ_MAX_THRIFT_DEPTH) {
    r->err = 1;
    return;
  }
  switch (type) {
  case TC_TRUE:
  case TC_FALSE: return; /* a struct field's value is in its header */
  case TC_I8:
  case TC_I16:
  case TC_I32:
  case TC_I64: tc_read_int(r, type); return;
  case TC_DOUBLE:
    if (r->end - r->p < 8)
      r->err = 1;
    else
      r->p += 8;
    return;
  case TC_BINARY: {
    const unsigned char *p;
    size_t n;
    tc_read_binary(r, &p, &n);
    return;
  }
  case TC_LIST:
  case TC_SET: {
    int et;
    size_t n;
    tc_read_list(r, &et, &n);
    for (size_t i = 0; i < n && !r->err; i++) {
      if (et == TC_TRUE || et == TC_FALSE) { /* booleans in a list take a byte each */
        if (r->p >= r->end)
          r->err = 1;
        else
          r->p++;
      } else {
        skip_depth(r, et, depth + 1);
      }
    }
    return;
  }
  case TC_MAP: {
    uint64_t n = read_varint(r);
    if (r->err || n == 0) return;
    if (r->p >= r->end || n > (uint64_t)(r->end - r->p)) {
      r->err = 1;
      return;
    }
    unsigned char kv = *r->p++;
    for (uint64_t i = 0; i < n && !r->err; i++) {
      skip_depth(r, kv >> 4, depth + 1);
      skip_depth(r, kv & 0x0f, depth + 1);
    }
    return;
  }
  case TC_STRUCT: {
    int16_t last = 0, id;
    int ft;
    while (tc_field(r, &last, &ft, &id))
      skip_depth(r, ft, depth + 1);
    return;
  }
  default: r->err = 1; return;
  }
}

void tc_skip(tc_reader *r, int type) { skip_depth(r, type, 0); }
