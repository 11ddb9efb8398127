/* Finding things in a read code object (cr_code): the instruction, function, line row or basic block at an
 * address, and freeing it. No ELF library: part of libhubprof (attribution.c) and of the code plugin. */
/* SPDX-License-Identifier: MIT */
#include "code_read.h"

#include "../common/hu_search.h"

#include <stdlib.h>
#include <string.h>

void cr_free(cr_code *c) {
  for (size_t i = 0; i < c->nfuncs; i++)
    free(c->funcs[i].name);
  free(c->funcs);
  free(c->insns);
  free(c->lines);
  memset(c, 0, sizeof *c);
}

const cr_insn *cr_insn_at(const cr_code *c, uint64_t addr) {
  size_t lo; /* the last instruction starting at or before addr: lo - 1 */
  HU_PARTITION(lo, c->ninsns, mid, c->insns[mid].addr <= addr);
  if (!lo) return NULL;
  const cr_insn *x = &c->insns[lo - 1];
  return addr < x->addr + x->size ? x : NULL;
}

const cr_func *cr_func_at(const cr_code *c, uint64_t addr) {
  const cr_func *best = NULL;
  for (size_t i = 0; i < c->nfuncs; i++)
    if (c->funcs[i].lo <= addr && addr < c->funcs[i].hi) best = &c->funcs[i];
  if (best) return best;
  for (size_t i = 0; i < c->nfuncs; i++) /* symbols without sizes: the closest start below */
    if (c->funcs[i].lo <= addr) best = &c->funcs[i];
  return best;
}

const cr_line *cr_line_at(const cr_code *c, uint64_t addr) {
  const cr_line *best = NULL; /* the row with the highest address at or below addr, not an end of sequence */
  for (size_t i = 0; i < c->nlines; i++) {
    const cr_line *l = &c->lines[i];
    if (l->addr <= addr && (!best || l->addr > best->addr || (l->addr == best->addr && !l->end))) best = l;
  }
  return best && !best->end && best->line > 0 ? best : NULL;
}

const cr_insn *cr_block_of(const cr_code *c, uint64_t addr) {
  const cr_insn *x = cr_insn_at(c, addr);
  if (!x) return NULL;
  while (x > c->insns && !x->leader)
    x--;
  return x;
}
