/* The sample views of ha_run: a kernel's PC samples grouped on its code (read back from the store with
 * code_read.c) per instruction with its disassembly, source line, function or basic block, the annotated
 * source, and one dispatch's counter samples (the timeline), as result tables for the CLI and Python. */
/* SPDX-License-Identifier: MIT */
#include "code_plugin.h"
#include "ha_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_map.h"
#include "../common/hu_pattern.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hit {
  uint64_t co, off, n;
  uint64_t r; /* stall reason: index + 1 in attr.reasons, 0 none */
} hit;

typedef struct group {
  char key[160]; /* what the row is (an address, a function, file:line) */
  uint64_t sort, n;
  int line;       /* a source line, 0 when none */
  char text[200]; /* disassembly, source text, block extent */
  char line_at[80], func[96];
  uint64_t
      *rc; /* samples per stall reason (index + 1 as in hit.r; [0]: none), when the samples have reasons */
} group;

typedef struct cobj {
  uint64_t id; /* 0: only kept for its source */
  char *hash, *uri, *source;
  cr_code code;
  int readable;     /* cr_read succeeded */
  char *ir_hash;    /* its IR in code_blob, "" when none was kept */
  char ir_why[200]; /* why its IR gave no lines ("" when it gave them or was not needed) */
} cobj;

typedef struct attr {
  hu_idmap kids, dids;
  hit *hits;
  size_t nhits, caphits, nco, nnames, ng;
  cobj *cos;
  char **names;
  char *
      *bare; /* each kernel's display name less its parameters and scope (CUDA: "chase" of a mangled name) */
  group *g;
  uint64_t total;
  /* dispatches without an end time (running when their process ended or died): their samples count too */
  uint64_t ninc, inc_first, inc_samples;
  hu_strmap reasons; /* the stall reasons of the samples (GPU PC sampling), none on the CPU */
  uint64_t *rc;      /* the groups' per-reason counts, reasons.n + 1 per group */
} attr;

static const char *const by_name[] = {"instruction", "line", "function", "basic-block", "source"};

static int by_hit(const void *a, const void *b) {
  const hit *x = a, *y = b;
  if (x->co != y->co) return x->co < y->co ? -1 : 1;
  if (x->off != y->off) return x->off < y->off ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

static int by_count(const void *a, const void *b) {
  const group *x = a, *y = b;
  return x->n != y->n ? (x->n > y->n ? -1 : 1) : x->sort < y->sort ? -1 : x->sort > y->sort;
}

static int kernel_match(const char *name, const char *const *k, size_t nk) {
  for (size_t i = 0; i < nk; i++)
    if (hu_pattern_match(k[i], HU_PAT_GLOB, name)) return 1; /* a glob, or "re:" a regex */
  return 0;
}

/* Line `line` (1-based) of text, copied into out; trimmed of leading blanks unless keep_indent. */
static void source_line(const char *text, int line, char *out, size_t n, int keep_indent) {
  out[0] = 0;
  for (int l = 1; text && *text && l < line; l++) {
    const char *nl = strchr(text, '\n');
    if (!nl) return;
    text = nl + 1;
  }
  if (!text) return;
  if (!keep_indent) text += strspn(text, " \t");
  size_t len = strcspn(text, "\r\n");
  snprintf(out, n, "%.*s", (int)len, text);
}

/* The source of a program code object naming one of the kernels. */
static const char *find_source(const attr *a, const char *const *k, size_t nk) {
  for (size_t i = 0; i < a->nco; i++)
    for (size_t j = 0; j < a->nnames; j++)
      if (a->cos[i].source && *a->cos[i].source && kernel_match(a->names[j], k, nk) &&
          (strstr(a->cos[i].source, a->names[j]) || (*a->bare[j] && strstr(a->cos[i].source, a->bare[j]))))
        return a->cos[i].source;
  return NULL;
}

static void attr_free(attr *a) {
  for (size_t i = 0; i < a->nco; i++) {
    free(a->cos[i].hash);
    free(a->cos[i].uri);
    free(a->cos[i].source);
    free(a->cos[i].ir_hash);
    cr_free(&a->cos[i].code);
  }
  free(a->cos);
  for (size_t i = 0; i < a->nnames; i++)
    free(a->names[i]), free(a->bare[i]);
  free(a->names);
  free(a->bare);
  free(a->hits);
  free(a->g);
  free(a->rc);
  hu_strmap_free(&a->reasons);
  hu_idmap_free(&a->kids);
  hu_idmap_free(&a->dids);
}

typedef struct hits_ctx { /* the kernel walk of read_hits */
  const ha_query *q;
  attr *a;
} hits_ctx;

/* One kernel symbol: kept when its name matches one of the query's kernels. */
static hp_status hit_kernel(const void *row, void *ctx) {
  const hp_kernel_symbol *k = row;
  const hits_ctx *h = ctx;
  attr *a = h->a;
  if (!kernel_match(k->name, h->q->kernels, h->q->nkernels)) return HP_OK;
  char **nn = realloc(a->names, (a->nnames + 1) * sizeof *nn), **nb = NULL;
  if (nn) a->names = nn;
  if (nn && (nb = realloc(a->bare, (a->nnames + 1) * sizeof *nb))) a->bare = nb;
  if (!nb || hu_idmap_put(&a->kids, k->id, 1) || !(nn[a->nnames] = strdup(k->name))) return HP_ERR_NOMEM;
  /* "void ns::chase(const unsigned*, ...)" -> "chase": how the program source names it */
  const char *dn = k->display_name ? k->display_name : "", *paren = strchr(dn, '('), *b = dn;
  size_t len = paren ? (size_t)(paren - dn) : strlen(dn);
  for (size_t i = 0; i < len; i++)
    if (dn[i] == ' ' || dn[i] == ':') b = dn + i + 1;
  if (!(nb[a->nnames] = strndup(b, len - (size_t)(b - dn)))) return free(nn[a->nnames]), HP_ERR_NOMEM;
  a->nnames++;
  return HP_OK;
}

/* One dispatch of a kept kernel: 1 in dids when complete, 2 without an end time. */
static hp_status hit_dispatch(const void *row, void *ctx) {
  const hp_dispatch *d = row;
  attr *a = ctx;
  if (!hu_idmap_get(&a->kids, d->kernel_id, NULL)) return HP_OK;
  if (hu_idmap_put(&a->dids, d->id, d->end_ns ? 1 : 2)) return HP_ERR_NOMEM;
  if (!d->end_ns && !a->ninc++) a->inc_first = d->dispatch_id;
  return HP_OK;
}

/* One PC sample of a kept dispatch: a hit. */
static hp_status hit_sample(const void *row, void *ctx) {
  const hp_pc_sample *ps = row;
  attr *a = ctx;
  uint64_t dv = 0;
  if (!hu_idmap_get(&a->dids, ps->dispatch_id, &dv)) return HP_OK;
  uint64_t n = ps->samples ? ps->samples : 1, r = 0; /* a row of CUPTI's stands for its count */
  if (ps->stall_reason && *ps->stall_reason) {
    long ix = hu_strmap_intern(&a->reasons, ps->stall_reason, NULL);
    if (ix < 0) return HP_ERR_NOMEM;
    r = (uint64_t)ix + 1;
  }
  a->inc_samples += dv == 2 ? n : 0;
  if (a->nhits == a->caphits && hu_grow((void **)&a->hits, &a->caphits, a->nhits + 1, sizeof *a->hits))
    return HP_ERR_NOMEM;
  a->hits[a->nhits++] = (hit){ps->code_object_id, ps->offset, n, r};
  a->total += n;
  return HP_OK;
}

/* The kernels, their dispatches and their samples (one hit per code object and offset). A read error of
 * any of these tables ends the call with that error (never a shorter answer). */
static hp_status read_hits(hp_store *s, const ha_query *q, attr *a) {
  hits_ctx h = {q, a};
  hp_kernel_symbol k = {.size = sizeof k};
  hp_status st = hai_each(s, HP_TABLE_KERNEL_SYMBOL, &k, hit_kernel, &h);
  if (st != HP_OK || !a->nnames) return st;
  hp_dispatch d = {.size = sizeof d};
  if ((st = hai_each(s, HP_TABLE_DISPATCH, &d, hit_dispatch, a)) != HP_OK) return st;
  hp_pc_sample ps = {.size = sizeof ps};
  st = hai_each(s, HP_TABLE_PC_SAMPLE, &ps, hit_sample, a);
  if (st != HP_OK || !a->nhits) return st;
  qsort(a->hits, a->nhits, sizeof *a->hits, by_hit);
  size_t u = 0;
  for (size_t i = 0; i < a->nhits; i++)
    if (u && a->hits[u - 1].co == a->hits[i].co && a->hits[u - 1].off == a->hits[i].off &&
        a->hits[u - 1].r == a->hits[i].r)
      a->hits[u - 1].n += a->hits[i].n;
    else
      a->hits[u++] = a->hits[i];
  a->nhits = u;
  return HP_OK;
}

/* One code object: kept when it has a source (for the source lines) or samples (id set, bytes read later). */
static hp_status keep_code(const void *row, void *ctx) {
  const hp_code_object *co = row;
  attr *a = ctx;
  int sampled = 0;
  for (size_t i = 0; i < a->nhits && !sampled; i++)
    sampled = a->hits[i].co == co->id;
  if (!sampled && !*co->source) return HP_OK;
  cobj *nc = realloc(a->cos, (a->nco + 1) * sizeof *nc);
  if (!nc) return HP_ERR_NOMEM;
  a->cos = nc;
  cobj *o = &a->cos[a->nco++];
  memset(o, 0, sizeof *o);
  o->id = sampled ? co->id : 0;
  o->hash = strdup(co->hash);
  o->uri = strdup(co->uri);
  o->source = strdup(co->source);
  o->ir_hash = strdup(co->ir_hash ? co->ir_hash : "");
  return !o->hash || !o->uri || !o->source || !o->ir_hash ? HP_ERR_NOMEM : HP_OK;
}

/* Whether a sample of o falls in a function without a line row (PoCL's work-group code of -g alone). */
static int needs_ir_lines(const attr *a, const cobj *o) {
  for (size_t i = 0; i < a->nhits; i++)
    if (a->hits[i].co == o->id && cr_func_at(&o->code, a->hits[i].off) &&
        !cr_line_at(&o->code, a->hits[i].off))
      return 1;
  return 0;
}

/* Lines from o's stored IR (code_lines.c, through the code plugin). o->ir_why says why when they are not all
 * there; 1 when that is worth a warning (there was an IR to try), else 0. */
static int ir_lines(const cp_api *cp, hp_store *s, cobj *o, const void *so, size_t n) {
  if (!*o->ir_hash) {
    snprintf(o->ir_why, sizeof o->ir_why,
             "its IR was not kept (--no-keep-ir, or a kernel PoCL had cached before: use an empty "
             "POCL_CACHE_DIR)");
    return 0; /* said on the rows, no warning */
  }
  void *ir = NULL;
  size_t irn = 0;
  hp_status rs = hp_read_code_bytes(s, o->ir_hash, &ir, &irn);
  if (rs != HP_OK)
    snprintf(o->ir_why, sizeof o->ir_why, "its IR is %s",
             rs == HP_ERR_NOT_FOUND ? "not in the store" : "damaged (its hash does not match)");
  int rc = rs == HP_OK ? cp->lines_from_ir(&o->code, so, n, ir, irn, o->ir_why, sizeof o->ir_why) : -1;
  free(ir);
  if (!rc) o->ir_why[0] = 0;
  return rc < 0;
}

/* The code objects: every one with a source (for the source lines), and the sampled ones' bytes, read
 * through the code plugin (code_plugin.h; without it, addresses only and a warning saying why). */
static hp_status read_code(hp_store *s, attr *a, ha_result *res) {
  hp_code_object co = {.size = sizeof co};
  hp_status st = hai_each(s, HP_TABLE_CODE_OBJECT, &co, keep_code, a);
  int warned = 0;
  char cp_why[sizeof a->cos->code.why] = "";
  const cp_api *cp = NULL;
  for (size_t i = 0; i < a->nco && !cp && !*cp_why; i++)
    if (a->cos[i].id) cp = cp_load(cp_why, sizeof cp_why);
  for (size_t i = 0; st == HP_OK && i < a->nco; i++) {
    cobj *o = &a->cos[i];
    if (!o->id) continue;
    void *bytes = NULL;
    size_t n = 0;
    hp_status rs = *o->hash ? hp_read_code_bytes(s, o->hash, &bytes, &n) : HP_ERR_NOT_FOUND;
    if (rs == HP_ERR_NOMEM) st = rs;
    if (rs == HP_OK && cp) o->readable = cp->read(bytes, n, &o->code) == 0;
    if (rs == HP_OK && !cp) snprintf(o->code.why, sizeof o->code.why, "%s", cp_why);
    if (o->readable && !o->code.no_lines && needs_ir_lines(a, o) && ir_lines(cp, s, o, bytes, n) &&
        !warned++ &&
        hai_note(res, "warning: code object %s: no source lines from its IR: %s", o->uri, o->ir_why))
      st = HP_ERR_NOMEM;
    free(bytes);
    if (o->readable && o->code.bad_dwarf && !warned++ &&
        hai_note(res, "warning: code object %s: %s; instructions without lines", o->uri, o->code.no_lines))
      st = HP_ERR_NOMEM;
    if (o->readable && o->code.undecoded &&
        hai_note(res,
                 "code object %s: %zu bytes no disassembler here could decode are shown as \"(not decoded: "
                 "...)\" rows (docs/sampling.md#instructions)",
                 o->uri, o->code.undecoded))
      st = HP_ERR_NOMEM;
    if (!o->readable && !warned++ &&
        hai_note(res, "warning: code object %s: %s; showing addresses only", o->uri,
                 rs == HP_ERR_NOT_FOUND ? "its bytes are not in the store"
                 : rs != HP_OK          ? "its bytes are damaged (their hash does not match)"
                                        : o->code.why))
      st = HP_ERR_NOMEM;
  }
  return st;
}

/* One group per hit, merged by key. */
static hp_status group_hits(attr *a, int by, const char *src, ha_result *res) {
  if (!(a->g = calloc(a->nhits, sizeof *a->g))) return HP_ERR_NOMEM;
  size_t nr = a->reasons.n + 1; /* per-reason counts only when a sample has a reason */
  if (a->reasons.n && !(a->rc = calloc(a->nhits * nr, sizeof *a->rc))) return HP_ERR_NOMEM;
  int nolines_said = 0;
  for (size_t i = 0; i < a->nhits; i++) {
    const hit *h = &a->hits[i];
    const cobj *o = NULL;
    for (size_t j = 0; j < a->nco && !o; j++)
      if (a->cos[j].id == h->co) o = &a->cos[j];
    const cr_code *cc = o && o->readable ? &o->code : NULL;
    group x;
    memset(&x, 0, sizeof x);
    x.n = h->n;
    x.sort = h->co << 40 | h->off;
    const cr_insn *in = cc ? cr_insn_at(cc, h->off) : NULL;
    const cr_func *fn = cc ? cr_func_at(cc, h->off) : NULL;
    const cr_line *ln = cc ? cr_line_at(cc, h->off) : NULL;
    if (cc && cc->no_lines && !nolines_said && by != HA_BY_INSTRUCTION && by != HA_BY_BLOCK) {
      nolines_said = 1;
      if (hai_note(res, "no source lines: %s", cc->no_lines)) return HP_ERR_NOMEM;
    }
    if (ln) {
      snprintf(x.line_at, sizeof x.line_at, "%s:%d", ln->file, ln->line);
      x.line = ln->line;
    }
    if (fn) snprintf(x.func, sizeof x.func, "%s", fn->name);
    switch (by) {
    case HA_BY_INSTRUCTION:
      snprintf(x.key, sizeof x.key, "0x%" PRIx64, h->off);
      if (in)
        snprintf(x.text, sizeof x.text, "%s", in->text);
      else if (cc)
        snprintf(x.text, sizeof x.text,
                 "(no instruction here: outside the code object's executable sections)");
      break;
    case HA_BY_FUNCTION:
      snprintf(x.key, sizeof x.key, "%s", fn ? fn->name : "?");
      x.sort = fn ? fn->lo : 0;
      break;
    case HA_BY_LINE:
    case HA_BY_SOURCE:
      if (ln) {
        snprintf(x.key, sizeof x.key, "%s", x.line_at);
        x.sort = (uint64_t)ln->line;
        source_line(src, ln->line, x.text, sizeof x.text, 0);
      } else {
        snprintf(x.key, sizeof x.key, "?");
        x.sort = UINT64_MAX;
        if (cc && !cc->no_lines && fn && strstr(fn->name, "_workgroup") && o->ir_why[0])
          snprintf(x.text, sizeof x.text,
                   "no line: PoCL's work-group function has no debug locations, and %.120s", o->ir_why);
        else
          snprintf(
              x.text, sizeof x.text, "%s",
              !cc            ? "no line information: the code object could not be read"
              : cc->no_lines ? cc->no_lines
              : fn && strstr(fn->name, "_workgroup")
                  ? "no line: PoCL optimises the kernel into its work-group function without debug "
                    "locations (only the unused kernel function has lines); build with -g -cl-opt-disable"
                  : "no line for this address (code the compiler made without a line)");
      }
      break;
    case HA_BY_BLOCK: {
      const cr_insn *b = cc ? cr_block_of(cc, h->off) : NULL;
      if (b) {
        const cr_insn *e = b;
        size_t ni = 1;
        while (e + 1 < cc->insns + cc->ninsns && !e[1].leader)
          e++, ni++;
        snprintf(x.key, sizeof x.key, "0x%" PRIx64 "-0x%" PRIx64, b->addr, e->addr + e->size);
        x.sort = b->addr;
        snprintf(x.text, sizeof x.text, "%zu instructions, %s", ni, fn ? fn->name : "?");
      } else {
        snprintf(x.key, sizeof x.key, "0x%" PRIx64, h->off);
      }
      break;
    }
    }
    size_t j = 0; /* merge with a group of the same key */
    while (j < a->ng && strcmp(a->g[j].key, x.key))
      j++;
    if (j < a->ng) {
      a->g[j].n += x.n;
    } else {
      x.rc = a->rc ? a->rc + a->ng * nr : NULL;
      a->g[a->ng++] = x;
    }
    if (a->g[j].rc) a->g[j].rc[h->r] += h->n;
  }
  return HP_OK;
}

static double pct(uint64_t n, uint64_t total) { return total ? 100.0 * (double)n / (double)total : 0; }

/* A stall reason as people read it: CUPTI's names less their common prefix
 * ("smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long_scoreboard"); other names as they are. */
static const char *reason_short(const char *name) {
  const char *p = strstr(name, "stalled_");
  return p && p[8] ? p + 8 : name;
}

/* A group's stall reasons, most samples first: the top one in `stall`, up to three with their share of the
 * group's samples in `list` ("long_scoreboard 93%, wait 4%, selected 2%"); the samples without a reason are
 * left out of both (their share is what the percentages leave). */
static void top_reasons(const attr *a, const group *g, char *stall, size_t sn, char *list, size_t ln) {
  stall[0] = list[0] = 0;
  size_t nr = a->reasons.n, used = 0, pos = 0;
  size_t picked[3] = {0};
  for (int k = 0; k < 3; k++) {
    size_t best = 0;
    for (size_t r = 1; r <= nr; r++) {
      int taken = 0;
      for (size_t q = 0; q < used; q++)
        taken |= picked[q] == r;
      if (!taken && g->rc[r] && (!best || g->rc[r] > g->rc[best])) best = r;
    }
    if (!best) break;
    picked[used++] = best;
    const char *nm = reason_short(hu_strmap_str(&a->reasons, best - 1));
    if (!k) snprintf(stall, sn, "%s", nm);
    int w = snprintf(list + pos, ln - pos, "%s%s %.0f%%", k ? ", " : "", nm, pct(g->rc[best], g->n));
    if (w < 0 || (size_t)w >= ln - pos) break;
    pos += (size_t)w;
  }
}

/* The rows of the grouped views (most samples first). */
static hp_status group_rows(const attr *a, int by, int64_t limit, ha_result *res) {
  for (size_t i = 0; i < a->ng && (limit <= 0 || (int64_t)i < limit); i++) {
    const group *g = &a->g[i];
    long r = hai_row(res);
    if (r < 0) return HP_ERR_NOMEM;
    hai_int(res, (size_t)r, 0, (int64_t)g->n);
    hai_num(res, (size_t)r, 1, pct(g->n, a->total));
    int e = hai_text(res, (size_t)r, 2, g->key);
    if (by != HA_BY_FUNCTION) e |= hai_text(res, (size_t)r, 3, g->text);
    if (by == HA_BY_INSTRUCTION)
      e |= hai_text(res, (size_t)r, 4, g->line_at) | hai_text(res, (size_t)r, 5, g->func);
    if (g->rc) { /* the last two columns (add_cols) */
      char stall[96], list[240];
      top_reasons(a, g, stall, sizeof stall, list, sizeof list);
      size_t nc = ha_result_ncols(res);
      e |= hai_text(res, (size_t)r, nc - 2, stall) | hai_text(res, (size_t)r, nc - 1, list);
    }
    if (e) return HP_ERR_NOMEM;
  }
  return HP_OK;
}

/* The annotated source: every line of src with the samples of its line number (lines of other files, such as
 * headers the compiler pulled in, are left out and counted in a note). */
static hp_status source_rows(const attr *a, const char *src, ha_result *res) {
  if (!src)
    return hai_note(res, "no program source in the store for this kernel (only programs created "
                         "from source have one)")
               ? HP_ERR_NOMEM
               : HP_OK;
  int nlines = 1;
  for (const char *p = src; *p; p++)
    nlines += *p == '\n' && p[1];
  uint64_t *per = calloc((size_t)nlines + 1, sizeof *per), elsewhere = 0, none = 0;
  if (!per) return HP_ERR_NOMEM;
  for (size_t i = 0; i < a->ng; i++) {
    if (!a->g[i].line)
      none += a->g[i].n;
    else if (a->g[i].line <= nlines)
      per[a->g[i].line] += a->g[i].n;
    else
      elsewhere += a->g[i].n;
  }
  hp_status st = HP_OK;
  for (int l = 1; l <= nlines && st == HP_OK; l++) {
    char text[200];
    source_line(src, l, text, sizeof text, 1);
    long r = hai_row(res);
    if (r < 0) {
      st = HP_ERR_NOMEM;
      break;
    }
    hai_int(res, (size_t)r, 0, l);
    hai_int(res, (size_t)r, 1, (int64_t)per[l]);
    hai_num(res, (size_t)r, 2, pct(per[l], a->total));
    if (hai_text(res, (size_t)r, 3, text)) st = HP_ERR_NOMEM;
  }
  free(per);
  if (st == HP_OK && (none || elsewhere) &&
      hai_note(res, "%" PRIu64 " sample%s no line of this source (%" PRIu64 " no line at all)",
               none + elsewhere, none + elsewhere == 1 ? " has" : "s have", none))
    st = HP_ERR_NOMEM;
  return st;
}

static hp_status add_cols(ha_result *res, int by, int reasons) {
  static const char *const key_name[] = {"offset", "line", "function", "block"};
  static const char *const text_name[] = {"instruction", "source", "", "what"};
  int e = 0;
  if (by == HA_BY_SOURCE) {
    e |= hai_col(res, "line", HA_INT, HA_ROLE_KEY, "");
    e |= hai_col(res, "samples", HA_INT, HA_ROLE_STAT, "");
    e |= hai_col(res, "percent", HA_REAL, HA_ROLE_STAT, "%");
    e |= hai_col(res, "source", HA_TEXT, HA_ROLE_KEY, "");
    return e ? HP_ERR_NOMEM : HP_OK;
  }
  int k = by - HA_BY_INSTRUCTION;
  e |= hai_col(res, "samples", HA_INT, HA_ROLE_STAT, "");
  e |= hai_col(res, "percent", HA_REAL, HA_ROLE_STAT, "%");
  e |= hai_col(res, key_name[k], HA_TEXT, HA_ROLE_KEY, "");
  if (by != HA_BY_FUNCTION) e |= hai_col(res, text_name[k], HA_TEXT, HA_ROLE_KEY, "");
  if (by == HA_BY_INSTRUCTION)
    e |= hai_col(res, "line", HA_TEXT, HA_ROLE_KEY, "") | hai_col(res, "function", HA_TEXT, HA_ROLE_KEY, "");
  if (reasons) /* samples with stall reasons (GPU PC sampling): the top one, and the top three with shares */
    e |= hai_col(res, "stall", HA_TEXT, HA_ROLE_KEY, "") |
         hai_col(res, "stall_reasons", HA_TEXT, HA_ROLE_KEY, "");
  return e ? HP_ERR_NOMEM : HP_OK;
}

/* A failed call: *out holds why (the store's message when it has one). */
static hp_status fail_out(hp_store *s, ha_result *res, hp_status st, ha_result **out) {
  if (!res) res = hai_new();
  if (res && st != HP_ERR_NOMEM && hp_store_error(s)[0]) hai_fail(res, st, "%s", hp_store_error(s));
  if (res) hai_fail(res, st, "%s", st == HP_ERR_NOMEM ? "out of memory" : hp_status_str(st));
  *out = res;
  return st;
}

hp_status hai_attribution(hp_store *s, const ha_query *q, ha_result **out) {
  int by = q->group;
  ha_result *res = hai_new();
  if (!res) return HP_ERR_NOMEM;
  int full = q->size >= offsetof(ha_query, nkernels) + sizeof q->nkernels;
  if (!full || !q->nkernels)
    return fail_out(s, res,
                    hai_fail(res, HP_ERR_INVALID,
                             "grouping by %s needs a kernel (whose samples to attribute)",
                             by_name[by - HA_BY_INSTRUCTION]),
                    out);
  attr a;
  memset(&a, 0, sizeof a);
  hp_status st = read_hits(s, q, &a);
  if (st == HP_OK) st = add_cols(res, by, a.reasons.n > 0);
  if (st == HP_OK && !a.nnames)
    st = hai_fail(res, HP_ERR_INVALID, "no kernel of %s matches %s", hp_store_path(s), q->kernels[0]);
  if (st == HP_OK && a.nhits) st = read_code(s, &a, res);
  const char *src = st == HP_OK ? find_source(&a, q->kernels, q->nkernels) : NULL;
  if (st == HP_OK && a.nhits) st = group_hits(&a, by, src, res);
  if (st == HP_OK && a.ng && by != HA_BY_SOURCE) qsort(a.g, a.ng, sizeof *a.g, by_count);
  if (st == HP_OK && by == HA_BY_SOURCE && a.nhits) st = source_rows(&a, src, res);
  if (st == HP_OK && by != HA_BY_SOURCE) st = group_rows(&a, by, q->limit, res);
  if (st == HP_OK &&
      (a.total ? hai_note(res, "kernel %s: %" PRIu64 " samples in %zu dispatch%s", a.names[0], a.total,
                          (size_t)a.dids.n, a.dids.n == 1 ? "" : "es")
               : hai_note(res, "no PC samples of kernel %s in %s (record them with 'hubprof sample')",
                          a.names[0], hp_store_path(s))))
    st = HP_ERR_NOMEM;
  if (st == HP_OK && a.inc_samples &&
      hai_note(res,
               "incomplete: %" PRIu64 " of these samples are of %s%" PRIu64 " dispatch%s without an end time "
               "(dispatch %" PRIu64 "%s: still running when its process ended or died)",
               a.inc_samples, a.ninc == 1 ? "" : "the ", a.ninc, a.ninc == 1 ? "" : "es", a.inc_first,
               a.ninc == 1 ? "" : " first"))
    st = HP_ERR_NOMEM;
  attr_free(&a);
  if (st != HP_OK) return fail_out(s, res, st, out);
  *out = res;
  return HP_OK;
}

typedef struct tl_ctx { /* the walks of hai_timeline */
  uint64_t dispatch;    /* the dispatch id asked for */
  uint64_t row, kid;    /* its row id and kernel, 0 until found */
  int64_t start;        /* the time its samples count from */
  int incomplete;       /* no end time */
  char kname[256];      /* its kernel's name */
  hu_idmap cix;         /* counter id -> index + 1 in cnames */
  hu_strmap cnames;
  ha_result *res;
  size_t nsets;         /* counter sets that rotated (metadata sample_counter_sets), 0: one set */
  hu_idmap dkern;       /* with sets: every dispatch row -> its kernel, for the kernel's coverage */
  uint32_t seen, kseen; /* sets seen in the timeline, and in any dispatch of its kernel (bits) */
  hu_idmap pids; /* the whole run: process row -> pid + 1 (a sample of no dispatch names its process) */
} tl_ctx;

/* The dispatch asked for (the walk ends there). */
static hp_status tl_dispatch(const void *row, void *ctx) {
  const hp_dispatch *d = row;
  tl_ctx *t = ctx;
  if (t->nsets && hu_idmap_put(&t->dkern, d->id, d->kernel_id + 1)) return HP_ERR_NOMEM;
  if (d->dispatch_id != t->dispatch) return HP_OK;
  t->row = d->id, t->start = d->start_ns, t->kid = d->kernel_id, t->incomplete = !d->end_ns;
  if (!t->start) t->start = d->enqueue_ns; /* no device times (incomplete): from its enqueue */
  return t->nsets ? HP_OK : HP_END;
}

/* The whole run: each process's pid. */
static hp_status tl_process(const void *row, void *ctx) {
  const hp_process *p = row;
  tl_ctx *t = ctx;
  return hu_idmap_put(&t->pids, p->id, (uint64_t)p->pid + 1) ? HP_ERR_NOMEM : HP_OK;
}

/* Its kernel's name. */
static hp_status tl_kernel(const void *row, void *ctx) {
  const hp_kernel_symbol *k = row;
  tl_ctx *t = ctx;
  if (k->id == t->kid) snprintf(t->kname, sizeof t->kname, "%s", k->name);
  return HP_OK;
}

/* The counters' names by id. */
static hp_status tl_counter(const void *row, void *ctx) {
  const hp_counter_info *ci = row;
  tl_ctx *t = ctx;
  long ix = hu_strmap_intern(&t->cnames, ci->name, NULL);
  return ix < 0 || hu_idmap_put(&t->cix, ci->id, (uint64_t)ix + 1) ? HP_ERR_NOMEM : HP_OK;
}

/* One counter sample of the dispatch: a row (time from the dispatch's start, counter, value). */
static hp_status tl_sample(const void *row, void *ctx) {
  const hp_counter_sample *cs = row;
  tl_ctx *t = ctx;
  uint64_t k = 0;
  uint32_t bit = cs->sample_set >= 1 && cs->sample_set <= 32 ? 1u << (cs->sample_set - 1) : 0;
  if (t->nsets && t->row && hu_idmap_get(&t->dkern, cs->dispatch_id, &k) && k == t->kid + 1) t->kseen |= bit;
  if (cs->dispatch_id != t->row) return HP_OK;
  t->seen |= bit;
  uint64_t ix = 0;
  char idbuf[40];
  const char *nm =
      hu_idmap_get(&t->cix, cs->counter_id, &ix) ? hu_strmap_str(&t->cnames, (size_t)(ix - 1)) : NULL;
  if (!nm) snprintf(idbuf, sizeof idbuf, "counter %" PRIu64, cs->counter_id), nm = idbuf;
  long r = hai_row(t->res);
  if (r < 0 || hai_text(t->res, (size_t)r, 1, nm)) return HP_ERR_NOMEM;
  hai_int(t->res, (size_t)r, 0, cs->timestamp_ns - t->start);
  hai_num(t->res, (size_t)r, 2, cs->value);
  if (t->nsets) hai_int(t->res, (size_t)r, 3, (int64_t)cs->sample_set); /* one set per row: never mixed */
  uint64_t pid = 0;
  if (!t->dispatch) /* the whole run: the process that took it (0: a store from before the column) */
    hai_int(t->res, (size_t)r, t->nsets ? 4 : 3,
            hu_idmap_get(&t->pids, cs->process_id, &pid) ? (int64_t)pid - 1 : 0);
  return HP_OK;
}

/* The sets' coverage (sampling beyond one pass): which of the rotating sets this timeline and its kernel's
 * dispatches hold samples of; a counter of a set never sampled has no timeline. */
static int coverage_note(ha_result *res, const tl_ctx *t) {
  char a[200] = "", b[200] = "";
  size_t na = 0, nb = 0;
  for (size_t i = 0; i < t->nsets; i++) {
    if (t->seen >> i & 1)
      na += (size_t)snprintf(a + na, sizeof a - na > 0 ? sizeof a - na : 0, "%s%zu", na ? ", " : "", i + 1);
    if (t->kseen >> i & 1)
      nb += (size_t)snprintf(b + nb, sizeof b - nb > 0 ? sizeof b - nb : 0, "%s%zu", nb ? ", " : "", i + 1);
    if (na >= sizeof a) na = sizeof a - 1;
    if (nb >= sizeof b) nb = sizeof b - 1;
  }
  int all = t->seen == (1u << t->nsets) - 1;
  if (!t->dispatch)
    return hai_note(res, "counter sets: %zu rotated by time slice; the whole run's samples cover set%s %s%s",
                    t->nsets, na > 1 ? "s" : "", na ? a : "none",
                    all ? " (every counter)" : ": the other sets' counters have no points here");
  return hai_note(res,
                  "counter sets: %zu rotated by time slice; this dispatch's samples cover %s%s; kernel %s's "
                  "dispatches cover %s",
                  t->nsets, na ? a : "none",
                  all ? " (every counter has a timeline)" : " (the other sets' counters have none here)",
                  t->kname, nb ? b : "none");
}

hp_status hai_timeline(hp_store *s, const ha_query *q, ha_result **out) {
  ha_result *res = hai_new();
  if (!res) return HP_ERR_NOMEM;
  int full = q->size >= offsetof(ha_query, dispatch_last) + sizeof q->dispatch_last;
  uint64_t dispatch = full ? q->dispatch_first : 0;
  if (q->dispatch_last && q->dispatch_last != dispatch)
    return fail_out(s, res, hai_fail(res, HP_ERR_INVALID, "the timeline needs one dispatch id"), out);
  /* no dispatch: the whole-run timeline ('sample --whole-run'): the samples of no dispatch, process totals
   * polled on a timer, at their own times (CLOCK_MONOTONIC_RAW, the dispatches' clock) */
  tl_ctx t = {.dispatch = dispatch};
  const char *ns = hp_store_metadata(s, "sample_counter_sets"); /* sampling beyond one pass */
  t.nsets = ns ? strtoul(ns, NULL, 10) : 0;
  if (t.nsets < 2 || t.nsets > 32) t.nsets = 0;
  hp_dispatch d = {.size = sizeof d};
  hp_process pr = {.size = sizeof pr};
  hp_status st = dispatch ? hai_each(s, HP_TABLE_DISPATCH, &d, tl_dispatch, &t)
                          : hai_each(s, HP_TABLE_PROCESS, &pr, tl_process, &t);
  if (st == HP_OK && !t.row && dispatch)
    st = hai_fail(res, HP_ERR_INVALID, "no dispatch %" PRIu64 " in %s", dispatch, hp_store_path(s));
  hp_kernel_symbol k = {.size = sizeof k};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_KERNEL_SYMBOL, &k, tl_kernel, &t);
  hp_counter_info ci = {.size = sizeof ci};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_COUNTER_INFO, &ci, tl_counter, &t);
  if (st == HP_OK && (hai_col(res, "time_ns", HA_INT, HA_ROLE_KEY, "ns") ||
                      hai_col(res, "counter", HA_TEXT, HA_ROLE_KEY, "") ||
                      hai_col(res, "value", HA_REAL, HA_ROLE_COUNTER, "") ||
                      (t.nsets && hai_col(res, "set", HA_INT, HA_ROLE_KEY, "")) ||
                      (!dispatch && hai_col(res, "pid", HA_INT, HA_ROLE_KEY, ""))))
    st = HP_ERR_NOMEM;
  t.res = res;
  hp_counter_sample cs = {.size = sizeof cs};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_COUNTER_SAMPLE, &cs, tl_sample, &t);
  size_t n = ha_result_nrows(res);
  if (st == HP_OK && !dispatch &&
      (n ? hai_note(res,
                    "the whole run: %zu counter samples of no dispatch (process totals since sampling "
                    "began), times on the dispatches' clock",
                    n)
         : hai_note(res, "no counter samples outside dispatches (record them with 'hubprof sample --counters "
                         "... --whole-run')")))
    st = HP_ERR_NOMEM;
  else if (st == HP_OK && dispatch &&
           (n ? hai_note(
                    res, "dispatch %" PRIu64 " (%s): %zu counter samples, times from the dispatch's %s",
                    dispatch, t.kname, n,
                    t.incomplete
                        ? "enqueue (incomplete: no end time, still running when its process ended or died)"
                        : "start")
              : hai_note(res,
                         "no counter samples of dispatch %" PRIu64 " (record them with 'hubprof sample "
                         "--counters ...')",
                         dispatch)))
    st = HP_ERR_NOMEM;
  if (st == HP_OK && t.nsets && coverage_note(res, &t)) st = HP_ERR_NOMEM;
  hu_idmap_free(&t.cix);
  hu_idmap_free(&t.dkern);
  hu_idmap_free(&t.pids);
  hu_strmap_free(&t.cnames);
  if (st != HP_OK) return fail_out(s, res, st, out);
  *out = res;
  return HP_OK;
}
