/* Parquet helper: the Thrift compact protocol (writer and bounded reader) used for Parquet page headers
 * and file metadata. Written from the Thrift compact protocol spec; the
 * reader trusts no length or count: every one is checked against the bytes left. */
/* SPDX-License-Identifier: MIT */
#include "parquet_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- compact writer ---- */
void tc_init(tc_writer *w, hu_buf *b) {
  memset(w, 0, sizeof *w);
  w->b = b;
}

static void field_header(tc_writer *w, int16_t id, int type) {
  int16_t delta = (int16_t)(id - w->last[w->depth]);
  if (delta > 0 && delta <= 15) {
    hu_buf_byte(w->b, (unsigned)(delta << 4 | type));
  } else {
    hu_buf_byte(w->b, (unsigned)type);
    hu_buf_varint(w->b, hu_zigzag(id));
  }
  w->last[w->depth] = id;
}

void tc_i32(tc_writer *w, int16_t id, int32_t v) {
  field_header(w, id, TC_I32);
  hu_buf_varint(w->b, hu_zigzag(v));
}

void tc_i64(tc_writer *w, int16_t id, int64_t v) {
  field_header(w, id, TC_I64);
  hu_buf_varint(w->b, hu_zigzag(v));
}

void tc_binary(tc_writer *w, int16_t id, const void *p, size_t n) {
  field_header(w, id, TC_BINARY);
  hu_buf_varint(w->b, n);
  hu_buf_put(w->b, p, n);
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
  hu_buf_byte(w->b, TC_STOP);
  if (w->depth > 0) w->depth--;
}

void tc_list_begin(tc_writer *w, int16_t id, int elem_type, size_t n) {
  field_header(w, id, TC_LIST);
  if (n < 15) {
    hu_buf_byte(w->b, (unsigned)(n << 4 | (unsigned)elem_type));
  } else {
    hu_buf_byte(w->b, 0xF0u | (unsigned)elem_type);
    hu_buf_varint(w->b, n);
  }
}

void tc_elem_i32(tc_writer *w, int32_t v) { hu_buf_varint(w->b, hu_zigzag(v)); }

void tc_elem_binary(tc_writer *w, const void *p, size_t n) {
  hu_buf_varint(w->b, n);
  hu_buf_put(w->b, p, n);
}

void tc_elem_struct_begin(tc_writer *w) { push(w); }

void tc_stop(tc_writer *w) { hu_buf_byte(w->b, TC_STOP); }

/* ---- compact reader ---- */
/* A varint, or 0 with r->err set when cut short or longer than 10 bytes. */
static uint64_t read_varint(tc_reader *r) {
  uint64_t v = 0;
  if (r->err || !hu_varint_get(&r->p, r->end, &v)) r->err = 1;
  return r->err ? 0 : v;
}

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
    int64_t v = hu_unzigzag(read_varint(r));
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
    int64_t v = hu_unzigzag(read_varint(r));
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
