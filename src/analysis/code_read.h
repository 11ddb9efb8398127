/* Reading a stored code object (ELF bytes) for the attribution groupings of ha_run (attribution.c):
 * functions, instructions and basic blocks (capstone), source lines (libdw). Internal; prefix cr_. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_CODE_READ_H
#define HUBPROF_ANALYSIS_CODE_READ_H

#include <stddef.h>
#include <stdint.h>

typedef struct cr_func {
  uint64_t lo, hi;
  char *name;
} cr_func;

typedef struct cr_insn {
  uint64_t addr, target; /* target: a jump's destination, 0 when none or not a constant */
  uint16_t size;
  uint8_t ends_block, leader;
  char text[96]; /* "mnemonic operands" */
} cr_insn;

typedef struct cr_line {
  uint64_t addr;
  int line;
  int end; /* end of a sequence: no line from here */
  char file[64];
} cr_line;

typedef struct cr_code {
  cr_func *funcs;
  size_t nfuncs;
  cr_insn *insns; /* sorted by address */
  size_t ninsns;
  cr_line *lines;
  size_t nlines, caplines;
  char why[256];        /* why instructions are missing, "" when they were read */
  const char *no_lines; /* why lines are missing, NULL when there are lines */
  int bad_dwarf;        /* it has DWARF sections that libdw could not read (no_lines says so) */
  size_t llvm_insns;    /* instructions capstone could not decode that LLVM's disassembler did */
  size_t undecoded;     /* bytes neither decoded (rows "(not decoded: ...)") */
} cr_code;

/* Read n bytes (any bytes). 0 when instructions were read; -1 otherwise (c->why says why). Free with
 * cr_free in every case. */
int cr_read(const void *bytes, size_t n, cr_code *c);
void cr_free(cr_code *c);
/* CUDA cubins (code_sass.c): instructions and lines from nvdisasm, at byte offsets of the cubin (a kernel's
 * .text section offset + its pc). cr_read calls cr_read_sass for an ELF of machine EM_CUDA. */
struct Elf;
int cr_read_sass(cr_code *c, struct Elf *e, const void *bytes, size_t n);
void cr_sass_parse(cr_code *c, const char *text);              /* nvdisasm's text, functions already read */
int cr_sass_find(char *out, size_t n, char *why, size_t whyn); /* nvdisasm's path: 0, or -1 and why */
/* LLVM's disassembler (code_llvm.c), for the instructions capstone does not know: the LLVM library loaded
 * with dlopen (libLLVM-15, the one PoCL runs, or another release), never linked. open: NULL when there is no
 * LLVM library or no disassembler for the ELF machine; insn: the length of the instruction at bytes (its
 * text in Intel syntax into text), 0 when it cannot be decoded. */
typedef struct cr_llvm cr_llvm;
cr_llvm *cr_llvm_open(int elf_machine);
size_t cr_llvm_insn(cr_llvm *d, const uint8_t *bytes, size_t n, uint64_t addr, char *text, size_t textn);
void cr_llvm_close(cr_llvm *d);
/* The instruction / function / line row / basic block (its first instruction) holding addr, or NULL. */
const cr_insn *cr_insn_at(const cr_code *c, uint64_t addr);
const cr_func *cr_func_at(const cr_code *c, uint64_t addr);
const cr_line *cr_line_at(const cr_code *c, uint64_t addr);
const cr_insn *cr_block_of(const cr_code *c, uint64_t addr);

#endif
