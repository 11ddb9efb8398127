/* `hubprof analyze --by instruction|line|function|basic-block --kernel K STORE` and `--timeline --dispatch
 * N`: a kernel's PC samples grouped on its code (read back from the store: code_read.c), with counts and
 * percentages and the disassembly or the source line; and one dispatch's counter samples as a table. */
/* SPDX-License-Identifier: MIT */
#include "attribution.h"

#include "code_read.h"
#include "report.h"

#include "../common/hu_map.h"
#include "hubprof/hub.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hit {
  uint64_t co, off, n;
} hit;

typedef struct group {
  char key[160]; /* what the row is (an address, a function, file:line) */
  uint64_t sort, n;
  char text[200]; /* disassembly, source text, block extent */
} group;

typedef struct cobj {
  uint64_t id;
  char *hash, *uri, *source;
  cr_code code;
  int readable; /* cr_read succeeded */
} cobj;

static int by_hit(const void *a, const void *b) {
  const hit *x = a, *y = b;
  return x->co != y->co ? (x->co < y->co ? -1 : 1) : x->off < y->off ? -1 : x->off > y->off;
}

static int by_count(const void *a, const void *b) {
  const group *x = a, *y = b;
  return x->n != y->n ? (x->n > y->n ? -1 : 1) : x->sort < y->sort ? -1 : x->sort > y->sort;
}

static int kernel_match(const char *name, const char *const *k, size_t nk) {
  for (size_t i = 0; i < nk; i++)
    if (!fnmatch(k[i], name, 0)) return 1;
  return 0;
}

/* Line `line` (1-based) of text, copied into out (trimmed of leading blanks). */
static void source_line(const char *text, int line, char *out, size_t n) {
  out[0] = 0;
  for (int l = 1; text && *text && l < line; l++) {
    const char *nl = strchr(text, '\n');
    if (!nl) return;
    text = nl + 1;
  }
  if (!text) return;
  text += strspn(text, " \t");
  size_t len = strcspn(text, "\n");
  snprintf(out, n, "%.*s", (int)len, text);
}

/* The kernels' code objects' sources: the source of a program code object naming the kernel. */
static const char *find_source(cobj *cos, size_t nco, const char *const *k, size_t nk, char **names,
                               size_t nnames) {
  for (size_t i = 0; i < nco; i++)
    for (size_t j = 0; j < nnames; j++)
      if (cos[i].source && *cos[i].source && kernel_match(names[j], k, nk) && strstr(cos[i].source, names[j]))
        return cos[i].source;
  return NULL;
}

static void free_cos(cobj *cos, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(cos[i].hash);
    free(cos[i].uri);
    free(cos[i].source);
    cr_free(&cos[i].code);
  }
  free(cos);
}

int cli_attribution(hp_store *s, int by, const char *const *kernels, size_t nk, int fmt, long limit) {
  if (!nk) {
    fprintf(stderr, "hubprof: analyze: --by %s needs --kernel K (the kernel whose samples to attribute)\n",
            cli_attr_names[by]);
    return 2;
  }
  int rc = 1;
  hu_idmap kids = {0}, dids = {0};
  hit *hits = NULL;
  size_t nhits = 0, caphits = 0, nco = 0, nnames = 0;
  cobj *cos = NULL;
  char **names = NULL;
  group *g = NULL;
  size_t ng = 0;
  report *r = NULL;
  hp_cursor *c = NULL;
  /* the kernels, their dispatches, their samples */
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) != HP_OK) goto fail;
  hp_kernel_symbol k = {.size = sizeof k};
  while (hp_cursor_next(c, &k) == HP_OK)
    if (kernel_match(k.name, kernels, nk)) {
      hu_idmap_put(&kids, k.id, 1);
      char **nn = realloc(names, (nnames + 1) * sizeof *nn);
      if (!nn) goto fail;
      names = nn;
      if (!(names[nnames] = strdup(k.name))) goto fail;
      nnames++;
    }
  hp_cursor_close(c);
  c = NULL;
  if (!nnames) {
    fprintf(stderr, "hubprof: analyze: no kernel of %s matches --kernel %s\n", hp_store_path(s), kernels[0]);
    goto out;
  }
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) != HP_OK) goto fail;
  hp_dispatch d = {.size = sizeof d};
  while (hp_cursor_next(c, &d) == HP_OK)
    if (hu_idmap_get(&kids, d.kernel_id, NULL)) hu_idmap_put(&dids, d.id, 1);
  hp_cursor_close(c);
  c = NULL;
  if (hp_cursor_open(s, HP_TABLE_PC_SAMPLE, &c) != HP_OK) goto fail;
  hp_pc_sample ps = {.size = sizeof ps};
  uint64_t total = 0;
  while (hp_cursor_next(c, &ps) == HP_OK) {
    if (!hu_idmap_get(&dids, ps.dispatch_id, NULL)) continue;
    if (nhits == caphits) {
      caphits = caphits ? 2 * caphits : 4096;
      hit *nh = realloc(hits, caphits * sizeof *nh);
      if (!nh) goto fail;
      hits = nh;
    }
    hits[nhits++] = (hit){ps.code_object_id, ps.offset, 1};
    total++;
  }
  hp_cursor_close(c);
  c = NULL;
  if (!total) {
    printf("no PC samples of kernel %s in %s (record them with 'hubprof sample')\n", kernels[0],
           hp_store_path(s));
    rc = 0;
    goto out;
  }
  qsort(hits, nhits, sizeof *hits, by_hit);
  size_t u = 0; /* one hit per (code object, offset) */
  for (size_t i = 0; i < nhits; i++)
    if (u && hits[u - 1].co == hits[i].co && hits[u - 1].off == hits[i].off)
      hits[u - 1].n++;
    else
      hits[u++] = hits[i];
  nhits = u;
  /* the code objects: every one with a source (for the annotated lines), and the sampled ones' bytes */
  if (hp_cursor_open(s, HP_TABLE_CODE_OBJECT, &c) != HP_OK) goto fail;
  hp_code_object co = {.size = sizeof co};
  while (hp_cursor_next(c, &co) == HP_OK) {
    int sampled = 0;
    for (size_t i = 0; i < nhits && !sampled; i++)
      sampled = hits[i].co == co.id;
    if (!sampled && !*co.source) continue;
    cobj *nc = realloc(cos, (nco + 1) * sizeof *nc);
    if (!nc) goto fail;
    cos = nc;
    memset(&cos[nco], 0, sizeof cos[nco]);
    cos[nco].id = sampled ? co.id : 0;
    cos[nco].hash = strdup(co.hash);
    cos[nco].uri = strdup(co.uri);
    cos[nco].source = strdup(co.source);
    nco++;
  }
  hp_cursor_close(c);
  c = NULL;
  int warned = 0, nolines_said = 0;
  for (size_t i = 0; i < nco; i++) {
    if (!cos[i].id) continue;
    void *bytes = NULL;
    size_t n = 0;
    hp_status st = *cos[i].hash ? hp_read_code_bytes(s, cos[i].hash, &bytes, &n) : HP_ERR_NOT_FOUND;
    if (st == HP_OK) cos[i].readable = cr_read(bytes, n, &cos[i].code) == 0;
    free(bytes);
    if (!cos[i].readable && !warned++)
      fprintf(stderr, "hubprof: warning: code object %s: %s; showing addresses only\n", cos[i].uri,
              st == HP_ERR_NOT_FOUND ? "its bytes are not in the store"
              : st != HP_OK          ? "its bytes are damaged (their hash does not match)"
                                     : cos[i].code.why);
  }
  const char *src = find_source(cos, nco, kernels, nk, names, nnames);
  /* group the hits */
  g = calloc(nhits, sizeof *g);
  if (!g) goto fail;
  for (size_t i = 0; i < nhits; i++) {
    const cobj *o = NULL;
    for (size_t j = 0; j < nco && !o; j++)
      if (cos[j].id == hits[i].co) o = &cos[j];
    const cr_code *cc = o && o->readable ? &o->code : NULL;
    group x;
    memset(&x, 0, sizeof x);
    x.n = hits[i].n;
    x.sort = hits[i].co << 40 | hits[i].off;
    const cr_insn *in = cc ? cr_insn_at(cc, hits[i].off) : NULL;
    const cr_func *fn = cc ? cr_func_at(cc, hits[i].off) : NULL;
    const cr_line *ln = cc ? cr_line_at(cc, hits[i].off) : NULL;
    if (cc && cc->no_lines && !nolines_said && by != CLI_ATTR_INSTRUCTION && by != CLI_ATTR_BLOCK) {
      nolines_said = 1;
      fprintf(stderr, "hubprof: note: no source lines: %s\n", cc->no_lines);
    }
    switch (by) {
    case CLI_ATTR_INSTRUCTION:
      snprintf(x.key, sizeof x.key, "0x%" PRIx64, hits[i].off);
      if (in) snprintf(x.text, sizeof x.text, "%s", in->text);
      if (ln) snprintf(x.text + strlen(x.text), sizeof x.text - strlen(x.text), "  ; line %d", ln->line);
      break;
    case CLI_ATTR_FUNCTION:
      snprintf(x.key, sizeof x.key, "%s", fn ? fn->name : "?");
      x.sort = fn ? fn->lo : 0;
      break;
    case CLI_ATTR_LINE:
      if (ln) {
        snprintf(x.key, sizeof x.key, "%s:%d", ln->file, ln->line);
        x.sort = (uint64_t)ln->line;
        source_line(src, ln->line, x.text, sizeof x.text);
      } else {
        snprintf(x.key, sizeof x.key, "?");
        x.sort = UINT64_MAX;
        snprintf(x.text, sizeof x.text, "%s",
                 !cc ? "no line information: the code object could not be read"
                 : cc->no_lines
                     ? cc->no_lines
                     : "no line for this address (optimised work-group code carries none: build with "
                       "-g -cl-opt-disable)");
      }
      break;
    case CLI_ATTR_BLOCK: {
      const cr_insn *b = cc ? cr_block_of(cc, hits[i].off) : NULL;
      if (b) {
        const cr_insn *e = b;
        size_t ni = 1;
        while (e + 1 < cc->insns + cc->ninsns && !e[1].leader)
          e++, ni++;
        snprintf(x.key, sizeof x.key, "0x%" PRIx64 "-0x%" PRIx64, b->addr, e->addr + e->size);
        x.sort = b->addr;
        snprintf(x.text, sizeof x.text, "%zu instructions, %s", ni, fn ? fn->name : "?");
      } else {
        snprintf(x.key, sizeof x.key, "0x%" PRIx64, hits[i].off);
      }
      break;
    }
    }
    size_t j = 0; /* merge with a group of the same key */
    while (j < ng && strcmp(g[j].key, x.key))
      j++;
    if (j < ng)
      g[j].n += x.n;
    else
      g[ng++] = x;
  }
  if (ng) qsort(g, ng, sizeof *g, by_count);
  static const char *const key_name[] = {"offset", "line", "function", "block"};
  static const char *const text_name[] = {"instruction", "source", "", "what"};
  report_col cols[4] = {{"samples", 1, 0}, {"percent", 1, 0}, {key_name[by], 0, 0}, {text_name[by], 0, 1}};
  size_t ncols = by == CLI_ATTR_FUNCTION ? 3 : 4;
  r = report_new(cols, ncols);
  if (!r) goto fail;
  for (size_t i = 0; i < ng && (limit <= 0 || (long)i < limit); i++) {
    char n[32], pct[32];
    snprintf(n, sizeof n, "%" PRIu64, g[i].n);
    snprintf(pct, sizeof pct, "%.1f", 100.0 * (double)g[i].n / (double)total);
    const char *cells[4] = {n, pct, g[i].key, g[i].text};
    if (report_add(r, cells)) goto fail;
  }
  if (fmt == REPORT_TABLE)
    printf("kernel %s: %" PRIu64 " samples in %zu dispatch%s\n", names[0], total, (size_t)dids.n,
           dids.n == 1 ? "" : "es");
  report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  rc = 0;
  goto out;
fail:
  fprintf(stderr, "hubprof: analyze: %s\n", hp_store_error(s)[0] ? hp_store_error(s) : "out of memory");
out:
  if (c) hp_cursor_close(c);
  report_free(r);
  free(g);
  free_cos(cos, nco);
  for (size_t i = 0; i < nnames; i++)
    free(names[i]);
  free(names);
  free(hits);
  hu_idmap_free(&kids);
  hu_idmap_free(&dids);
  return rc;
}

int cli_timeline(hp_store *s, uint64_t dispatch, int fmt) {
  hp_cursor *c;
  uint64_t row = 0;
  int64_t start = 0;
  char kname[128] = "";
  uint64_t kid = 0;
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    hp_dispatch d = {.size = sizeof d};
    while (hp_cursor_next(c, &d) == HP_OK)
      if (d.dispatch_id == dispatch) {
        row = d.id, start = d.start_ns, kid = d.kernel_id;
        break;
      }
    hp_cursor_close(c);
  }
  if (!row) {
    fprintf(stderr, "hubprof: analyze: no dispatch %" PRIu64 " in %s\n", dispatch, hp_store_path(s));
    return 1;
  }
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) == HP_OK) {
    hp_kernel_symbol k = {.size = sizeof k};
    while (hp_cursor_next(c, &k) == HP_OK)
      if (k.id == kid) snprintf(kname, sizeof kname, "%s", k.name);
    hp_cursor_close(c);
  }
  /* counter names by id */
  char names[64][64];
  uint64_t ids[64];
  size_t nn = 0;
  if (hp_cursor_open(s, HP_TABLE_COUNTER_INFO, &c) == HP_OK) {
    hp_counter_info ci = {.size = sizeof ci};
    while (hp_cursor_next(c, &ci) == HP_OK && nn < 64) {
      ids[nn] = ci.id;
      snprintf(names[nn++], sizeof names[0], "%s", ci.name);
    }
    hp_cursor_close(c);
  }
  report_col cols[3] = {{"time_ns", 1, 0}, {"counter", 0, 0}, {"value", 1, 0}};
  report *r = report_new(cols, 3);
  if (!r || hp_cursor_open(s, HP_TABLE_COUNTER_SAMPLE, &c) != HP_OK) {
    report_free(r);
    fprintf(stderr, "hubprof: analyze: %s\n", hp_store_error(s)[0] ? hp_store_error(s) : "out of memory");
    return 1;
  }
  hp_counter_sample cs = {.size = sizeof cs};
  while (hp_cursor_next(c, &cs) == HP_OK) {
    if (cs.dispatch_id != row) continue;
    char t[32], v[48], idbuf[32];
    const char *nm = NULL;
    for (size_t i = 0; i < nn && !nm; i++)
      if (ids[i] == cs.counter_id) nm = names[i];
    if (!nm) snprintf(idbuf, sizeof idbuf, "counter %" PRIu64, cs.counter_id), nm = idbuf;
    snprintf(t, sizeof t, "%" PRId64, cs.timestamp_ns - start);
    snprintf(v, sizeof v, "%.17g", cs.value);
    const char *cells[3] = {t, nm, v};
    report_add(r, cells);
  }
  hp_cursor_close(c);
  if (!report_rows(r)) {
    printf("no counter samples of dispatch %" PRIu64 " (record them with 'hubprof sample --counters ...')\n",
           dispatch);
  } else {
    if (fmt == REPORT_TABLE)
      printf("dispatch %" PRIu64 " (%s): %zu counter samples, times from the dispatch's start\n", dispatch,
             kname, report_rows(r));
    report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  }
  report_free(r);
  return 0;
}
