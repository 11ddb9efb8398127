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

/* Every instruction of the executable sections, with the blocks' leaders marked. */
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
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR)) continue;
    if (sh.sh_offset > n || sh.sh_size > n - sh.sh_offset) {
      reason(c, "an executable section lies outside the bytes");
      continue;
    }
    cs_insn *in = NULL;
    size_t k = cs_disasm(h, bytes + sh.sh_offset, sh.sh_size, sh.sh_addr, 0, &in);
    cr_insn *ni = realloc(c->insns, (c->ninsns + k + 1) * sizeof *ni);
    if (!ni) {
      cs_free(in, k);
      break;
    }
    c->insns = ni;
    for (size_t i = 0; i < k; i++) {
      cr_insn *x = &c->insns[c->ninsns++];
      memset(x, 0, sizeof *x);
      x->addr = in[i].address;
      x->size = in[i].size;
      snprintf(x->text, sizeof x->text, "%.31s%s%.62s", in[i].mnemonic, in[i].op_str[0] ? " " : "",
               in[i].op_str);
      int jump = cs_insn_group(h, &in[i], CS_GRP_JUMP) || cs_insn_group(h, &in[i], CS_GRP_RET) ||
                 cs_insn_group(h, &in[i], CS_GRP_IRET);
      x->ends_block = jump;
      if (jump && arch == CS_ARCH_X86 && in[i].detail && in[i].detail->x86.op_count == 1 &&
          in[i].detail->x86.operands[0].type == X86_OP_IMM)
        x->target = (uint64_t)in[i].detail->x86.operands[0].imm;
      if (jump && arch == CS_ARCH_ARM64 && in[i].detail)
        for (int o = 0; o < in[i].detail->arm64.op_count; o++)
          if (in[i].detail->arm64.operands[o].type == ARM64_OP_IMM)
            x->target = (uint64_t)in[i].detail->arm64.operands[o].imm;
    }
    cs_free(in, k);
  }
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
