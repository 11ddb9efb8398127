/* Reading a stored code object for attribution: its ELF symbols (functions), instructions (capstone) with
 * the basic blocks they form, and source lines (DWARF through libdw). Any input is accepted: bytes that are
 * not a readable ELF, or DWARF that libdw refuses, leave the parts that could be read and say why. */
/* SPDX-License-Identifier: MIT */
#include "code_read.h"

#include <capstone/capstone.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_addr(const void *a, const void *b) { /* then by name: duplicates side by side */
  const cr_func *x = a, *y = b;
  return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : strcmp(x->name, y->name);
}

static int by_insn(const void *a, const void *b) {
  const cr_insn *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void reason(cr_code *c, const char *why) {
  if (!c->why[0]) snprintf(c->why, sizeof c->why, "%s", why);
}

/* Function symbols of .symtab (or .dynsym). */
static void read_symbols(cr_code *c, Elf *e) {
  Elf_Scn *scn = NULL;
  size_t cap = 0;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
      continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d) continue;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n && i < 1000000; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value) continue;
      const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
      if (!name || !*name) continue;
      if (c->nfuncs == cap) { /* doubling: large symbol tables in linear time */
        size_t nc = cap ? 2 * cap : 64;
        cr_func *nf = realloc(c->funcs, nc * sizeof *nf);
        if (!nf) break;
        c->funcs = nf;
        cap = nc;
      }
      cr_func *f = &c->funcs[c->nfuncs];
      f->lo = sym.st_value;
      f->hi = sym.st_value + (sym.st_size ? sym.st_size : 1);
      f->name = strdup(name);
      if (f->name) c->nfuncs++;
    }
  }
  if (!c->nfuncs) return;
  qsort(c->funcs, c->nfuncs, sizeof *c->funcs, by_addr);
  size_t u = 0; /* one of each (address, name): .symtab and .dynsym repeat each other */
  for (size_t i = 0; i < c->nfuncs; i++) {
    if (u && c->funcs[u - 1].lo == c->funcs[i].lo && !strcmp(c->funcs[u - 1].name, c->funcs[i].name)) {
      free(c->funcs[i].name);
      continue;
    }
    c->funcs[u++] = c->funcs[i];
  }
  c->nfuncs = u;
}

/* Room for one more instruction (doubling); NULL when out of memory. */
static cr_insn *next_insn(cr_code *c, size_t *cap) {
  if (c->ninsns == *cap) {
    size_t nc = *cap ? 2 * *cap : 1024;
    cr_insn *ni = realloc(c->insns, nc * sizeof *ni);
    if (!ni) return NULL;
    c->insns = ni;
    *cap = nc;
  }
  cr_insn *x = &c->insns[c->ninsns];
  memset(x, 0, sizeof *x);
  return x;
}

/* The first function start after addr (the end when none): where decoding starts again after bytes that
 * no disassembler could decode. */
static uint64_t next_func(const cr_code *c, uint64_t addr, uint64_t end) {
  for (size_t i = 0; i < c->nfuncs; i++) /* sorted by address */
    if (c->funcs[i].lo > addr && c->funcs[i].lo < end) return c->funcs[i].lo;
  return end;
}

/* Every instruction of the executable sections, one at a time (a stop at one undecodable instruction never
 * loses the rest), with the blocks' leaders marked. Capstone first; what it cannot decode (capstone 4 stops
 * at AVX-512 instructions newer than its tables: VNNI, BF16, FP16, ...) goes to LLVM's disassembler when the
 * LLVM library is there (code_llvm.c); bytes neither decodes become one row "(not decoded ...)" up to the
 * next function, so an instruction column is never blank without a reason. */
static void read_insns(cr_code *c, Elf *e, const unsigned char *bytes, size_t n) {
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) return;
  cs_arch arch;
  cs_mode mode;
  if (eh.e_machine == EM_X86_64) {
    arch = CS_ARCH_X86, mode = CS_MODE_64;
  } else if (eh.e_machine == EM_386) {
    arch = CS_ARCH_X86, mode = CS_MODE_32;
  } else if (eh.e_machine == EM_AARCH64) {
    arch = CS_ARCH_ARM64, mode = CS_MODE_ARM;
  } else {
    reason(c, "no disassembler for this machine");
    return;
  }
  csh h;
  if (cs_open(arch, mode, &h) != CS_ERR_OK) {
    reason(c, "the disassembler cannot be opened");
    return;
  }
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn *in = cs_malloc(h);
  cr_llvm *llvm = NULL; /* opened at the first instruction capstone cannot decode */
  int llvm_tried = 0;
  size_t cap = 0;
  Elf_Scn *scn = NULL;
  while (in && (scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR)) continue;
    if (sh.sh_offset > n || sh.sh_size > n - sh.sh_offset) {
      reason(c, "an executable section lies outside the bytes");
      continue;
    }
    const uint8_t *code = bytes + sh.sh_offset;
    size_t left = sh.sh_size;
    uint64_t addr = sh.sh_addr, end = sh.sh_addr + sh.sh_size;
    while (left) {
      cr_insn *x = next_insn(c, &cap);
      if (!x) break;
      uint64_t at = addr;
      const uint8_t *p = code;
      if (cs_disasm_iter(h, &code, &left, &addr, in)) {
        x->addr = in->address;
        x->size = in->size;
        snprintf(x->text, sizeof x->text, "%.31s%s%.62s", in->mnemonic, in->op_str[0] ? " " : "", in->op_str);
        int jump = cs_insn_group(h, in, CS_GRP_JUMP) || cs_insn_group(h, in, CS_GRP_RET) ||
                   cs_insn_group(h, in, CS_GRP_IRET);
        x->ends_block = jump;
        if (jump && arch == CS_ARCH_X86 && in->detail && in->detail->x86.op_count == 1 &&
            in->detail->x86.operands[0].type == X86_OP_IMM)
          x->target = (uint64_t)in->detail->x86.operands[0].imm;
        if (jump && arch == CS_ARCH_ARM64 && in->detail)
          for (int o = 0; o < in->detail->arm64.op_count; o++)
            if (in->detail->arm64.operands[o].type == ARM64_OP_IMM)
              x->target = (uint64_t)in->detail->arm64.operands[o].imm;
        c->ninsns++;
        continue;
      }
      if (!llvm_tried) {
        llvm_tried = 1;
        llvm = cr_llvm_open(eh.e_machine);
      }
      size_t k = llvm ? cr_llvm_insn(llvm, p, left, at, x->text, sizeof x->text) : 0;
      if (k) { /* LLVM knows it: not a jump (capstone decodes every branch) */
        x->addr = at;
        x->size = (uint16_t)k;
        c->llvm_insns++;
      } else { /* neither: the bytes up to the next function (at most what one row can span) */
        uint64_t to = next_func(c, at, end);
        if (to - at > UINT16_MAX) to = at + UINT16_MAX;
        k = (size_t)(to - at);
        x->addr = at;
        x->size = (uint16_t)k;
        x->ends_block = 1;
        snprintf(x->text, sizeof x->text, "(not decoded: %s)",
                 llvm ? "unknown to capstone and LLVM" : "unknown to capstone; no LLVM library");
        c->undecoded += k;
      }
      c->ninsns++;
      code = p + k;
      left -= k;
      addr = at + k;
    }
  }
  if (in) cs_free(in, 1);
  cr_llvm_close(llvm);
  cs_close(&h);
  if (c->ninsns) qsort(c->insns, c->ninsns, sizeof *c->insns, by_insn);
  /* leaders: the first instruction, function starts, jump targets, instructions after a jump (functions
   * and instructions are both sorted: one walk) */
  size_t f = 0;
  for (size_t i = 0; i < c->ninsns; i++) {
    cr_insn *x = &c->insns[i];
    int crossed = 0; /* a function starts after the previous instruction, at or before this one */
    for (; f < c->nfuncs && c->funcs[f].lo <= x->addr; f++)
      crossed = 1;
    if (!i || c->insns[i - 1].ends_block || crossed) x->leader = 1;
    if (x->target) {
      const cr_insn *t = cr_insn_at(c, x->target);
      if (t && t->addr == x->target) ((cr_insn *)t)->leader = 1;
    }
  }
  if (!c->ninsns) reason(c, "no instructions could be decoded");
}

/* Whether the ELF has a section named .debug_<what> (its DWARF, readable or not). */
static int has_debug(Elf *e, const char *what) {
  size_t shstr;
  if (elf_getshdrstrndx(e, &shstr) != 0) return 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
    if (name && !strncmp(name, ".debug_", 7) && !strcmp(name + 7, what)) return 1;
  }
  return 0;
}

static void read_lines(cr_code *c, Elf *e) {
  int has_info = has_debug(e, "info"), has_line = has_debug(e, "line");
  Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
  if (!dw) {
    c->bad_dwarf = has_info || has_line;
    c->no_lines = c->bad_dwarf ? "its debug information (DWARF) cannot be read: damaged"
                               : "the code object has no debug information (build the program with -g)";
    return;
  }
  Dwarf_Off off = 0, next;
  size_t hsize;
  while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dw, off + hsize, &cu)) {
      Dwarf_Lines *lines;
      size_t nl;
      if (dwarf_getsrclines(&cu, &lines, &nl) == 0) {
        for (size_t i = 0; i < nl; i++) {
          Dwarf_Line *l = dwarf_onesrcline(lines, i);
          Dwarf_Addr a;
          int line;
          if (!l || dwarf_lineaddr(l, &a) != 0 || dwarf_lineno(l, &line) != 0) continue;
          const char *file = dwarf_linesrc(l, NULL, NULL);
          if (c->nlines == c->caplines) { /* doubling: large line tables in linear time */
            size_t cap = c->caplines ? 2 * c->caplines : 256;
            cr_line *nr = realloc(c->lines, cap * sizeof *nr);
            if (!nr) break;
            c->lines = nr;
            c->caplines = cap;
          }
          cr_line *r = &c->lines[c->nlines++];
          r->addr = a;
          r->line = line;
          bool end = 0;
          dwarf_lineendsequence(l, &end);
          r->end = end;
          const char *b = file ? strrchr(file, '/') : NULL;
          snprintf(r->file, sizeof r->file, "%s", b ? b + 1 : file ? file : "?");
        }
      }
    }
    off = next;
  }
  dwarf_end(dw);
  if (!c->nlines && has_line) {
    c->bad_dwarf = 1;
    c->no_lines = "its line table (DWARF .debug_line) cannot be read: damaged";
  } else if (!c->nlines) {
    c->no_lines = "the code object has no line table (build the program with -g)";
  }
}

int cr_read(const void *bytes, size_t n, cr_code *c) {
  memset(c, 0, sizeof *c);
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)bytes, n);
  if (!e || elf_kind(e) != ELF_K_ELF) {
    if (e) elf_end(e);
    reason(c, "the bytes are not an ELF object");
    c->no_lines = "no line information (the code object could not be read)";
    return -1;
  }
  GElf_Ehdr eh;
  if (gelf_getehdr(e, &eh) && eh.e_machine == EM_CUDA) { /* a cubin: SASS through nvdisasm */
    int rc = cr_read_sass(c, e, bytes, n);
    elf_end(e);
    return rc;
  }
  read_symbols(c, e);
  read_insns(c, e, bytes, n);
  read_lines(c, e);
  elf_end(e);
  return c->ninsns ? 0 : -1;
}
