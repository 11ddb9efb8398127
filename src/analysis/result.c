/* The result table of every analysis (ha_result): its columns, rows, cells, notes and error, the builder
 * the other analysis files fill it through (hai_*), the accessors of the public API, and the hand-out. */
/* SPDX-License-Identifier: MIT */
#include "ha_result.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record why the call failed on its result (the first reason wins); returns st. */
static hp_status res_verr(ha_result *r, hp_status st, const char *fmt, va_list ap) {
  if (r && !r->error[0]) vsnprintf(r->error, sizeof r->error, fmt, ap);
  return st;
}
hp_status hai_error_out(ha_result **out, hp_status st, const char *fmt, ...) {
  if (!out) return st;
  *out = calloc(1, sizeof **out);
  if (*out) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf((*out)->error, sizeof(*out)->error, fmt, ap);
    va_end(ap);
  }
  return st;
}

const char *ha_result_error(const ha_result *r) { return r ? r->error : "no result (out of memory)"; }

const char *hai_intern(ha_result *r, const char *s) {
  long i = hu_strmap_intern(&r->strs, s ? s : "", NULL);
  return i < 0 ? NULL : hu_strmap_str(&r->strs, (size_t)i);
}

static int add_col(ha_result *r, const char *name, ha_col_kind kind, ha_col_role role, const char *unit) {
  assert(r->nrows == 0); /* columns come before rows: a row's cells are ncols wide */
  if (r->ncols == r->capcols) {
    size_t nc = r->capcols ? 2 * r->capcols : 32;
    rcol *n = realloc(r->cols, nc * sizeof *n);
    if (!n) return -1;
    r->cols = n;
    r->capcols = nc;
  }
  rcol *c = &r->cols[r->ncols];
  c->name = strdup(name);
  c->unit = strdup(unit ? unit : "");
  c->kind = kind;
  c->role = role;
  if (!c->name || !c->unit) {
    free(c->name);
    free(c->unit);
    return -1;
  }
  r->ncols++;
  return 0;
}

/* A new row of zeroes (text ""), or NULL when out of memory. */
cell *hai_add_row(ha_result *r, uint8_t **flags) {
  if (r->nrows == r->cap) {
    size_t nc = r->cap ? 2 * r->cap : 64;
    cell *n = realloc(r->cells, nc * r->ncols * sizeof *n);
    if (!n) return NULL;
    r->cells = n;
    uint8_t *f = realloc(r->flags, nc * r->ncols);
    if (!f) return NULL;
    r->flags = f;
    r->cap = nc;
  }
  assert(r->nrows < r->cap); /* room for the row after growth (columns are fixed before the first row) */
  cell *row = &r->cells[r->nrows * r->ncols];
  memset(row, 0, r->ncols * sizeof *row);
  *flags = &r->flags[r->nrows * r->ncols];
  memset(*flags, 0, r->ncols);
  r->nrows++;
  return row;
}

static int add_note(ha_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_note(ha_result *r, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **n = realloc(r->notes, (r->nnotes + 1) * sizeof *n);
  if (!n) return -1;
  r->notes = n;
  if (!(r->notes[r->nnotes] = strdup(buf))) return -1;
  r->nnotes++;
  return 0;
}

cell *hai_next_row(ha_result *r, uint8_t **flags, hp_status *st) {
  cell *row = hai_add_row(r, flags);
  if (!row) *st = HP_ERR_NOMEM;
  return row;
}

/* The builder for the library's other parts (ha_internal.h). */
ha_result *hai_new(void) { return calloc(1, sizeof(ha_result)); }
int hai_col(ha_result *r, const char *name, ha_col_kind kind, ha_col_role role, const char *unit) {
  return add_col(r, name, kind, role, unit);
}
int hai_cols(ha_result *r, const hai_coldef *defs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (add_col(r, defs[i].name, defs[i].kind, defs[i].role, defs[i].unit)) return -1;
  return 0;
}
long hai_row(ha_result *r) {
  uint8_t *fl;
  return hai_add_row(r, &fl) ? (long)r->nrows - 1 : -1;
}
int hai_text(ha_result *r, size_t row, size_t col, const char *text) {
  assert(row < r->nrows && col < r->ncols && r->cols[col].kind == HA_TEXT);
  const char *t = hai_intern(r, text);
  r->cells[row * r->ncols + col].text = t;
  return t ? 0 : -1;
}
void hai_int(ha_result *r, size_t row, size_t col, int64_t v) {
  assert(row < r->nrows && col < r->ncols && r->cols[col].kind == HA_INT);
  r->cells[row * r->ncols + col].i = v;
}
void hai_num(ha_result *r, size_t row, size_t col, double v) {
  assert(row < r->nrows && col < r->ncols && r->cols[col].kind == HA_REAL);
  r->cells[row * r->ncols + col].num = v;
}
int hai_note(ha_result *r, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return add_note(r, "%s", buf);
}
hp_status hai_fail(ha_result *r, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  res_verr(r, st, fmt, ap);
  va_end(ap);
  return st;
}

void ha_result_free(ha_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->ncols; i++) {
    free(r->cols[i].name);
    free(r->cols[i].unit);
  }
  for (size_t i = 0; i < r->nnotes; i++)
    free(r->notes[i]);
  hu_strmap_free(&r->strs);
  free(r->notes);
  free(r->cols);
  free(r->cells);
  free(r->flags);
  free(r);
}

size_t ha_result_ncols(const ha_result *r) { return r ? r->ncols : 0; }
size_t ha_result_nrows(const ha_result *r) { return r ? r->nrows : 0; }
const char *ha_result_col_name(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].name : "";
}
ha_col_kind ha_result_col_kind(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].kind : HA_TEXT;
}
ha_col_role ha_result_col_role(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].role : HA_ROLE_KEY;
}
const char *ha_result_col_unit(const ha_result *r, size_t c) {
  return r && c < r->ncols ? r->cols[c].unit : "";
}
long ha_result_col_find(const ha_result *r, const char *name) {
  for (size_t c = 0; r && name && c < r->ncols; c++)
    if (strcmp(r->cols[c].name, name) == 0) return (long)c;
  return -1;
}
uint64_t ha_result_lost_records(const ha_result *r) { return r ? r->lost : 0; }
size_t ha_result_nnotes(const ha_result *r) { return r ? r->nnotes : 0; }
const char *ha_result_note(const ha_result *r, size_t i) { return r && i < r->nnotes ? r->notes[i] : ""; }

static const cell *at(const ha_result *r, size_t row, size_t col) {
  return r && row < r->nrows && col < r->ncols ? &r->cells[row * r->ncols + col] : NULL;
}
const char *ha_result_text(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  return c && r->cols[col].kind == HA_TEXT && c->text ? c->text : "";
}
double ha_result_num(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  if (!c || r->cols[col].kind == HA_TEXT) return NAN;
  return r->cols[col].kind == HA_INT ? (double)c->i : c->num;
}
int64_t ha_result_int(const ha_result *r, size_t row, size_t col) {
  const cell *c = at(r, row, col);
  if (!c || r->cols[col].kind == HA_TEXT) return 0;
  if (r->cols[col].kind == HA_INT) return c->i;
  return is_nan(c->num) ? 0 : (int64_t)c->num;
}
unsigned ha_result_flags(const ha_result *r, size_t row, size_t col) {
  return at(r, row, col) ? r->flags[row * r->ncols + col] : 0;
}

hp_status hai_hand_out(hp_store *s, hp_status st, ha_result *res, ha_result **out) {
  if (st == HP_OK) {
    *out = res;
    return HP_OK;
  }
  if (st != HP_ERR_NOMEM && s && hp_store_error(s)[0]) hai_fail(res, st, "%s", hp_store_error(s));
  char why[sizeof res->error];
  snprintf(why, sizeof why, "%s",
           res && res->error[0] ? res->error
           : st == HP_ERR_NOMEM ? "out of memory"
                                : hp_status_str(st));
  ha_result_free(res);
  return hai_error_out(out, st, "%s", why);
}
