/* CUDA PC sampling and PM sampling into the hub's rows: CUPTI's parsed PC data to pc_sample rows with stall
 * reasons, a cubin kernel's code offset, PM intervals to counter_sample rows. Pure: no CUPTI, no allocation.
 */
/* SPDX-License-Identifier: MIT */
#include "cupti_pc.h"

#include <string.h>

static const char *reason_name(const hpc_cupti_reasons *r, uint32_t index) {
  for (size_t i = 0; r && i < r->n; i++)
    if (r->index[i] == index) return r->names[i] ? r->names[i] : "";
  return "";
}

size_t hpc_cupti_pc_rows(const hpc_cupti_pc_data *d, const hpc_cupti_reasons *reasons,
                         hpc_cupti_where_fn where, void *ctx, int64_t time_ns, uint64_t thread_id,
                         uint64_t weight, uint64_t *next_id, hpc_cupti_pc_cursor *cur, hp_pc_sample *out,
                         size_t max) {
  size_t n = 0, npc = d && d->pPcData ? d->totalNumPcs : 0;
  for (; cur->pc < npc && n < max; cur->pc++, cur->reason = 0) {
    const hpc_cupti_pc *pc = &d->pPcData[cur->pc];
    uint64_t did = 0, co = 0, off = 0;
    int placed = where && where(ctx, pc, &did, &co, &off) == 0;
    for (; pc->stallReason && cur->reason < pc->stallReasonCount && n < max; cur->reason++) {
      const hpc_cupti_stall *st = &pc->stallReason[cur->reason];
      if (!st->samples) continue;
      if (!placed) {
        cur->unplaced += st->samples;
        continue;
      }
      hp_pc_sample *r = &out[n++];
      memset(r, 0, sizeof *r);
      r->size = sizeof *r;
      r->id = ++*next_id;
      r->dispatch_id = did;
      r->code_object_id = co;
      r->offset = off;
      r->timestamp_ns = time_ns;
      r->thread_id = thread_id;
      r->weight = weight;
      r->stall_reason = reason_name(reasons, st->pcSamplingStallReasonIndex);
      r->samples = st->samples;
    }
    if (pc->stallReason && cur->reason < pc->stallReasonCount) break; /* out is full inside this PC */
  }
  return n;
}

static uint64_t rd(const unsigned char *p, size_t k) { /* little-endian, k bytes */
  uint64_t v = 0;
  for (size_t i = k; i-- > 0;)
    v = v << 8 | p[i];
  return v;
}

int hpc_cubin_func_offset(const void *cubin, size_t n, const char *function, uint64_t *off) {
  const unsigned char *b = cubin;
  if (!b || !function || n < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2 || b[5] != 1) return -1;
  uint64_t shoff = rd(b + 0x28, 8), entsize = rd(b + 0x3A, 2), shnum = rd(b + 0x3C, 2),
           shstr = rd(b + 0x3E, 2);
  if (entsize < 64 || shstr >= shnum || shoff > n || shnum > (n - shoff) / entsize) return -1;
  const unsigned char *ss = b + shoff + shstr * entsize;
  uint64_t stroff = rd(ss + 0x18, 8), strsize = rd(ss + 0x20, 8);
  if (stroff > n || strsize > n - stroff) return -1;
  size_t flen = strlen(function);
  for (uint64_t i = 0; i < shnum; i++) {
    const unsigned char *sh = b + shoff + i * entsize;
    uint64_t name = rd(sh, 4), type = rd(sh + 4, 4), o = rd(sh + 0x18, 8), size = rd(sh + 0x20, 8);
    if (type != 1 /* SHT_PROGBITS */ || name >= strsize || strsize - name < 6 + flen + 1) continue;
    const char *nm = (const char *)b + stroff + name;
    if (memcmp(nm, ".text.", 6) || memcmp(nm + 6, function, flen) || nm[6 + flen]) continue;
    if (o > n || size > n - o) return -1;
    *off = o;
    return 0;
  }
  return -1;
}

size_t hpc_pm_rows(const hpc_pm_interval *iv, size_t niv, const uint64_t *counter_ids, size_t ncounters,
                   const hpc_pm_window *w, size_t nw, double *acc, uint64_t *last_dispatch, uint64_t *next_id,
                   uint64_t *outside, hp_counter_sample *out, size_t max, size_t *nrows) {
  size_t i = 0, n = 0;
  for (; i < niv; i++) {
    const hpc_pm_window *in = NULL;
    for (size_t k = 0; k < nw && !in; k++)
      if (iv[i].end_ns > w[k].start_ns && iv[i].end_ns <= w[k].end_ns) in = &w[k];
    if (!in) {
      ++*outside;
      continue;
    }
    if (max - n < ncounters) break;
    if (in->dispatch_id != *last_dispatch) {
      for (size_t c = 0; c < ncounters; c++)
        acc[c] = 0;
      *last_dispatch = in->dispatch_id;
    }
    for (size_t c = 0; c < ncounters; c++) {
      acc[c] += iv[i].values[c];
      hp_counter_sample *r = &out[n++];
      memset(r, 0, sizeof *r);
      r->size = sizeof *r;
      r->id = ++*next_id;
      r->dispatch_id = in->dispatch_id;
      r->counter_id = counter_ids[c];
      r->timestamp_ns = iv[i].end_ns;
      r->value = acc[c];
    }
  }
  *nrows = n;
  return i;
}

static int in_window(int64_t t, const hpc_pm_window *w, size_t nw) {
  for (size_t k = 0; k < nw; k++)
    if (t > w[k].start_ns && t <= w[k].end_ns) return 1;
  return 0;
}

int64_t hpc_pm_shift(const hpc_pm_interval *iv, const hpc_pm_window *w, size_t nw, int64_t alt) {
  if (in_window(iv->end_ns, w, nw)) return 0;
  return alt && in_window(iv->end_ns - alt, w, nw) ? alt : 0;
}
