/* The roofline of a store (roofline_place.h): the latest ceilings of each device, and its kernels' FLOPs and
 * DRAM bytes from the counters that give them, summed over the kernel's dispatches, with the device time. */
/* SPDX-License-Identifier: MIT */
#include "roofline_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a counter is for the roofline: per precision (0 fp64, 1 fp32, 2 fp16) NVIDIA's add, mul, fma thread
 * instructions, AMD's VALU add, mul, trans, fma instructions and MFMA operations (MOPS); the DRAM bytes. */
enum { NV_ADD, NV_MUL, NV_FMA, NV_PER };                    /* NVIDIA, per precision */
enum { AM_ADD, AM_MUL, AM_TRANS, AM_FMA, AM_MFMA, AM_PER }; /* AMD, per precision */
enum {
  R_NV = 0,                      /* 3 x NV_PER */
  R_AM = R_NV + 3 * NV_PER,      /* 3 x AM_PER */
  R_NV_DRAM = R_AM + 3 * AM_PER, /* dram__bytes */
  R_NV_RD,                       /* dram__bytes_read */
  R_NV_WR,                       /* dram__bytes_write */
  R_TCC_RD,                      /* TCC_EA0_RDREQ */
  R_TCC_RD32,                    /* TCC_EA0_RDREQ_32B */
  R_TCC_BUBBLE,                  /* TCC_BUBBLE */
  R_TCC_WR,                      /* TCC_EA0_WRREQ */
  R_TCC_WR64,                    /* TCC_EA0_WRREQ_64B */
  R_COUNT
};
static const char *const prec_name[3] = {"fp64", "fp32", "fp16"};
static const char nv_letter[3] = {'d', 'f', 'h'};
static const char *const nv_op[NV_PER] = {"add", "mul", "fma"};
static const char *const am_op[AM_PER] = {"ADD", "MUL", "TRANS", "FMA", "MFMA_MOPS"};
static const char *const am_bits[3] = {"F64", "F32", "F16"};
static const char *const byte_names[] = {"dram__bytes",   "dram__bytes_read",  "dram__bytes_write",
                                         "TCC_EA0_RDREQ", "TCC_EA0_RDREQ_32B", "TCC_BUBBLE",
                                         "TCC_EA0_WRREQ", "TCC_EA0_WRREQ_64B"};

/* NVIDIA's counter name of role r (with ".sum"), AMD's (with "_sum"), into buf. */
static void role_name(int r, char *buf, size_t len) {
  if (r < R_AM)
    snprintf(buf, len, "smsp__sass_thread_inst_executed_op_%c%s_pred_on.sum", nv_letter[r / NV_PER],
             nv_op[r % NV_PER]);
  else if (r < R_NV_DRAM)
    snprintf(buf, len, "SQ_INSTS_VALU_%s_%s", am_op[(r - R_AM) % AM_PER], am_bits[(r - R_AM) / AM_PER]);
  else
    snprintf(buf, len, "%s%s", byte_names[r - R_NV_DRAM], r < R_TCC_RD ? ".sum" : "_sum");
}

/* The role of a counter name, -1 when it has none: the names above, NVIDIA's also without ".sum", AMD's
 * TCC counters also without "_sum" (one instance's raw counter is not the device's total: only _sum). */
static int role_of(const char *name) {
  char buf[96];
  for (int r = 0; r < R_COUNT; r++) {
    role_name(r, buf, sizeof buf);
    if (strcmp(name, buf) == 0) return r;
    size_t n = strlen(buf);
    if ((r < R_AM || (r >= R_NV_DRAM && r < R_TCC_RD)) && n > 4 && strncmp(name, buf, n - 4) == 0 &&
        name[n - 4] == 0)
      return r;
  }
  return -1;
}

typedef struct group {
  uint64_t kernel_id, agent_id;
  double time_ns;
  double sum[R_COUNT];
  uint32_t has; /* bit per role seen (R_COUNT <= 32) */
} group;

typedef struct rd {
  hp_store *s;
  hu_idmap agent_name;   /* agent id -> string index + 1 */
  hu_idmap agent_family; /* agent id -> 1 NVIDIA, 2 AMD, 3 neither */
  hu_idmap kernel_name;  /* kernel id -> string index + 1 */
  hu_idmap counter_role; /* counter id -> role + 1 */
  hu_idmap disp_group;   /* dispatch row id -> group index + 1 */
  hu_idmap group_of;     /* (kernel id, agent id) hashed -> group index + 1: see group_key */
  group *g;
  size_t ng, capg;
} rd;

static const char *str(rf_roofline *r, long i) { return i >= 0 ? hu_strmap_str(&r->strs, (size_t)i) : ""; }
static long intern(rf_roofline *r, const char *s) { return hu_strmap_intern(&r->strs, s ? s : "", NULL); }

static hp_status scan(hp_store *s, hp_table t, void *row, hp_cursor **c) {
  *(uint32_t *)row = (uint32_t)hp_table_describe(t)->row_size;
  return hp_cursor_open(s, t, c);
}

static hp_status read_small(rd *d, rf_roofline *out) {
  hp_cursor *c;
  hp_agent a;
  hp_status st = scan(d->s, HP_TABLE_AGENT, &a, &c);
  while (st == HP_OK && (st = hp_cursor_next(c, &a)) == HP_OK) {
    long i = intern(out, a.name);
    int fam = strncmp(a.name, "gfx", 3) == 0 ? 2 : strstr(a.vendor, "NVIDIA") ? 1 : 3;
    if (i < 0 || hu_idmap_put(&d->agent_name, a.id, (uint64_t)i + 1) ||
        hu_idmap_put(&d->agent_family, a.id, (uint64_t)fam))
      st = HP_ERR_NOMEM;
  }
  hp_cursor_close(c);
  if (st != HP_END) return st;
  hp_kernel_symbol k;
  st = scan(d->s, HP_TABLE_KERNEL_SYMBOL, &k, &c);
  while (st == HP_OK && (st = hp_cursor_next(c, &k)) == HP_OK) {
    long i = intern(out, k.display_name[0] ? k.display_name : k.name);
    if (i < 0 || hu_idmap_put(&d->kernel_name, k.id, (uint64_t)i + 1)) st = HP_ERR_NOMEM;
  }
  hp_cursor_close(c);
  if (st != HP_END) return st;
  hp_counter_info ci;
  st = scan(d->s, HP_TABLE_COUNTER_INFO, &ci, &c);
  while (st == HP_OK && (st = hp_cursor_next(c, &ci)) == HP_OK) {
    int r = role_of(ci.name);
    if (r >= 0 && hu_idmap_put(&d->counter_role, ci.id, (uint64_t)r + 1)) st = HP_ERR_NOMEM;
  }
  hp_cursor_close(c);
  if (st != HP_END) return st;
  /* ceilings: the latest measurement of each device and name, with a value */
  hp_ceiling ce;
  int64_t *when = NULL;
  st = scan(d->s, HP_TABLE_CEILING, &ce, &c);
  while (st == HP_OK && (st = hp_cursor_next(c, &ce)) == HP_OK) {
    if (!(ce.value >= 0)) continue;
    uint64_t an = 0;
    hu_idmap_get(&d->agent_name, ce.agent_id, &an);
    size_t k = 0;
    while (k < out->nceilings &&
           (out->ceilings[k].agent_id != ce.agent_id || strcmp(out->ceilings[k].name, ce.name) != 0))
      k++;
    if (k == out->nceilings) {
      rf_ceiling *nc = realloc(out->ceilings, (k + 1) * sizeof *nc);
      int64_t *nw = nc ? realloc(when, (k + 1) * sizeof *nw) : NULL;
      if (nc) out->ceilings = nc;
      if (!nw) {
        st = HP_ERR_NOMEM;
        break;
      }
      when = nw;
      out->nceilings++;
      when[k] = INT64_MIN;
    }
    if (ce.measured_ns >= when[k]) {
      long ni = intern(out, ce.name), ui = intern(out, ce.unit);
      if (ni < 0 || ui < 0) {
        st = HP_ERR_NOMEM;
        break;
      }
      when[k] = ce.measured_ns;
      out->ceilings[k] = (rf_ceiling){.agent_id = ce.agent_id,
                                      .device = an ? str(out, (long)an - 1) : "",
                                      .name = str(out, ni),
                                      .unit = str(out, ui),
                                      .value = ce.value};
    }
  }
  free(when);
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

static long group_index(rd *d, uint64_t kernel_id, uint64_t agent_id) {
  uint64_t key = (kernel_id * 0x9E3779B97F4A7C15ull) ^ (agent_id + 1), v;
  for (;; key++) { /* a collision of keys of different pairs goes to the next key */
    if (!key) continue;
    if (!hu_idmap_get(&d->group_of, key, &v)) break;
    if (d->g[v - 1].kernel_id == kernel_id && d->g[v - 1].agent_id == agent_id) return (long)v - 1;
  }
  if (d->ng == d->capg) {
    size_t cap = d->capg ? 2 * d->capg : 16;
    group *ng = realloc(d->g, cap * sizeof *ng);
    if (!ng) return -1;
    d->g = ng;
    d->capg = cap;
  }
  if (hu_idmap_put(&d->group_of, key, d->ng + 1)) return -1;
  d->g[d->ng] = (group){.kernel_id = kernel_id, .agent_id = agent_id};
  return (long)d->ng++;
}

static hp_status read_big(rd *d) {
  hp_cursor *c;
  hp_dispatch x;
  hp_status st = scan(d->s, HP_TABLE_DISPATCH, &x, &c);
  while (st == HP_OK && (st = hp_cursor_next(c, &x)) == HP_OK) {
    long gi = group_index(d, x.kernel_id, x.agent_id);
    if (gi < 0 || hu_idmap_put(&d->disp_group, x.id, (uint64_t)gi + 1)) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (x.end_ns > x.start_ns) d->g[gi].time_ns += (double)(x.end_ns - x.start_ns);
  }
  hp_cursor_close(c);
  if (st != HP_END) return st;
  if (!d->counter_role.n) return HP_OK; /* no counter of the roofline: no need to read the values */
  hp_counter_value v;
  st = scan(d->s, HP_TABLE_COUNTER_VALUE, &v, &c);
  while (st == HP_OK && (st = hp_cursor_next(c, &v)) == HP_OK) {
    uint64_t r, gi;
    if (hp_counter_value_is_host_part(&v) || !hu_idmap_get(&d->counter_role, v.counter_id, &r) ||
        !hu_idmap_get(&d->disp_group, v.dispatch_id, &gi))
      continue;
    group *g = &d->g[gi - 1];
    g->sum[r - 1] += v.value;
    g->has |= 1u << (r - 1);
  }
  hp_cursor_close(c);
  return st == HP_END ? HP_OK : st;
}

static void add_text(char *buf, size_t len, const char *s) {
  size_t n = strlen(buf);
  if (n < len) snprintf(buf + n, len - n, "%s", s);
}

/* The counters of roles lo..hi-1 that g lacks, as ", "-separated names after `lead`. */
static void list_missing(const group *g, int lo, int hi, char *buf, size_t len) {
  char name[96];
  int first = 1;
  for (int r = lo; r < hi; r++) {
    if (g->has & (1u << r)) continue;
    role_name(r, name, sizeof name);
    add_text(buf, len, first ? "" : ", ");
    add_text(buf, len, name);
    first = 0;
  }
}

/* The points of one group (kernel on a device): one per precision with FLOPs, or one saying what is missing.
 */
static int place(rd *d, rf_roofline *out, const group *g) {
  uint64_t kn = 0, an = 0, fam = 3;
  hu_idmap_get(&d->kernel_name, g->kernel_id, &kn);
  hu_idmap_get(&d->agent_name, g->agent_id, &an);
  hu_idmap_get(&d->agent_family, g->agent_id, &fam);
  uint32_t nv = ((1u << (3 * NV_PER)) - 1) << R_NV | 7u << R_NV_DRAM;
  uint32_t am = ((1u << (3 * AM_PER)) - 1) << R_AM | 31u << R_TCC_RD;
  if (g->has & nv)
    fam = 1;
  else if (g->has & am)
    fam = 2;
  rf_point p = {.agent_id = g->agent_id,
                .device = an ? str(out, (long)an - 1) : "",
                .kernel = kn ? str(out, (long)kn - 1) : "",
                .time_ns = g->time_ns,
                .bound = ""};
  /* DRAM bytes */
  int have_bytes = 0;
  double bytes = 0;
  if (fam == 1 && (g->has & (1u << R_NV_DRAM))) {
    have_bytes = 1;
    bytes = g->sum[R_NV_DRAM];
  } else if (fam == 1 && (g->has & (1u << R_NV_RD)) && (g->has & (1u << R_NV_WR))) {
    have_bytes = 1;
    bytes = g->sum[R_NV_RD] + g->sum[R_NV_WR];
  } else if (fam == 2 && ((g->has >> R_TCC_RD) & 31u) == 31u) { /* rocprofiler-compute's HBM bytes */
    have_bytes = 1;
    const double *s = g->sum;
    bytes = 128 * s[R_TCC_BUBBLE] + 64 * (s[R_TCC_RD] - s[R_TCC_BUBBLE] - s[R_TCC_RD32]) +
            32 * s[R_TCC_RD32] + 64 * s[R_TCC_WR64] + 32 * (s[R_TCC_WR] - s[R_TCC_WR64]);
  }
  /* FLOPs per precision: NVIDIA add + mul + 2 fma per thread; AMD 64 lanes x (add + mul + trans + 2 fma) per
   * wave instruction, plus 512 per MFMA MOPS when counted */
  double flop[3] = {0, 0, 0};
  int have[3] = {0, 0, 0}, any = 0, partial = -1;
  for (int k = 0; k < 3; k++) {
    if (fam == 1) {
      uint32_t need = 7u << (R_NV + k * NV_PER), got = g->has & need;
      have[k] = got == need;
      const double *s = g->sum + R_NV + k * NV_PER;
      if (have[k]) flop[k] = s[NV_ADD] + s[NV_MUL] + 2 * s[NV_FMA];
      if (got && !have[k]) partial = k;
    } else if (fam == 2) {
      uint32_t need = 15u << (R_AM + k * AM_PER), got = g->has & need;
      have[k] = got == need;
      const double *s = g->sum + R_AM + k * AM_PER;
      if (have[k])
        flop[k] = 64 * (s[AM_ADD] + s[AM_MUL] + s[AM_TRANS] + 2 * s[AM_FMA]) +
                  ((g->has >> (R_AM + k * AM_PER + AM_MFMA)) & 1u ? 512 * s[AM_MFMA] : 0);
      if (got && !have[k]) partial = k;
    }
    any |= have[k];
  }
  if (any && have_bytes) {
    int placed = 0;
    for (int k = 0; k < 3; k++) {
      if (!have[k] || (flop[k] <= 0 && !(k == 1 && !placed && flop[0] <= 0 && flop[2] <= 0))) continue;
      rf_point q = p;
      q.precision = prec_name[k];
      q.flop = flop[k];
      q.bytes = bytes;
      q.intensity = bytes > 0 ? flop[k] / bytes : 0;
      q.gflops = g->time_ns > 0 ? flop[k] / g->time_ns : 0;
      double roof_c = -1, roof_m = -1;
      for (size_t i = 0; i < out->nceilings; i++) {
        const rf_ceiling *c = &out->ceilings[i];
        if (c->agent_id != g->agent_id) continue;
        if (strcmp(c->name, q.precision) == 0) roof_c = c->value;
        if (strcmp(c->name, "dram") == 0) roof_m = c->value;
      }
      if (roof_c >= 0 && roof_m >= 0 && bytes > 0)
        q.bound = roof_m * q.intensity < roof_c ? "memory" : "compute";
      rf_point *np = realloc(out->points, (out->npoints + 1) * sizeof *np);
      if (!np) return -1;
      out->points = np;
      out->points[out->npoints++] = q;
      placed = 1;
    }
    return 0;
  }
  /* not placed: which counters would place it */
  char *m = p.missing;
  size_t ml = sizeof p.missing;
  if (fam == 3) {
    snprintf(
        m, ml,
        "the store has no FLOP or DRAM byte counters of this kernel (NVIDIA: "
        "smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum and dram__bytes.sum; gfx942: "
        "SQ_INSTS_VALU_{ADD,MUL,TRANS,FMA}_F{64,32,16} and TCC_EA0_{RDREQ,RDREQ_32B,WRREQ,WRREQ_64B}_sum, "
        "TCC_BUBBLE_sum)");
  } else {
    add_text(m, ml, "missing counters: ");
    if (!any) { /* the precision begun, else fp32 */
      int k = partial >= 0 ? partial : 1;
      if (fam == 1)
        list_missing(g, R_NV + k * NV_PER, R_NV + (k + 1) * NV_PER, m, ml);
      else
        list_missing(g, R_AM + k * AM_PER, R_AM + k * AM_PER + AM_MFMA, m, ml);
    }
    if (!have_bytes) {
      if (!any) add_text(m, ml, "; ");
      if (fam == 1)
        add_text(m, ml, "dram__bytes.sum (or dram__bytes_read.sum and dram__bytes_write.sum)");
      else
        list_missing(g, R_TCC_RD, R_COUNT, m, ml);
    }
  }
  rf_point *np = realloc(out->points, (out->npoints + 1) * sizeof *np);
  if (!np) return -1;
  out->points = np;
  out->points[out->npoints++] = p;
  return 0;
}

hp_status rf_read(hp_store *s, rf_roofline *out) {
  memset(out, 0, sizeof *out);
  rd d = {.s = s};
  hp_status st = read_small(&d, out);
  if (st == HP_OK) st = read_big(&d);
  for (size_t i = 0; st == HP_OK && i < d.ng; i++)
    if (place(&d, out, &d.g[i])) st = HP_ERR_NOMEM;
  hu_idmap_free(&d.agent_name);
  hu_idmap_free(&d.agent_family);
  hu_idmap_free(&d.kernel_name);
  hu_idmap_free(&d.counter_role);
  hu_idmap_free(&d.disp_group);
  hu_idmap_free(&d.group_of);
  free(d.g);
  if (st != HP_OK) rf_free(out);
  return st;
}

void rf_free(rf_roofline *r) {
  free(r->ceilings);
  free(r->points);
  hu_strmap_free(&r->strs);
  memset(r, 0, sizeof *r);
}
