/* The sample views of the analysis library on real machine code with damaged DWARF: this test program's own
 * ELF (built with -g) read by the code-object reader, then with its line table or all its DWARF overwritten:
 * instructions still, no lines, the reason; and through ha_run on a store holding those bytes as a kernel's
 * code object: rows by instruction and line, exactly one "warning: " note, never a crash. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include "../src/analysis/code_read.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *b = NULL;
  size_t cap = 0;
  *n = 0;
  for (;;) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 1 << 20;
      unsigned char *nb = realloc(b, cap);
      if (!nb) break;
      b = nb;
    }
    size_t r = fread(b + *n, 1, cap - *n, f);
    if (!r) break;
    *n += r;
  }
  fclose(f);
  return b;
}

/* Overwrite the sections .debug_<names> of the ELF in b with 0xff; returns how many were found. */
static int damage(unsigned char *b, size_t n, const char *const *names, size_t nn) {
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)b, n);
  size_t shstr;
  int found = 0;
  if (!e || elf_getshdrstrndx(e, &shstr) != 0) return 0;
  struct {
    size_t off, size;
  } hit[8];
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(e, scn)) && found < 8) {
    GElf_Shdr sh;
    const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
    for (size_t i = 0; name && i < nn; i++)
      if (!strncmp(name, ".debug_", 7) && !strcmp(name + 7, names[i]) && sh.sh_offset + sh.sh_size <= n)
        hit[found].off = sh.sh_offset, hit[found++].size = sh.sh_size;
  }
  elf_end(e);
  for (int i = 0; i < found; i++)
    memset(b + hit[i].off, 0xff, hit[i].size);
  return found;
}

/* A log store whose kernel "k" has 5 samples at the address of main in these bytes. */
static void make_store(const char *path, const unsigned char *b, size_t n, uint64_t off) {
  hp_store *s;
  CHECK(hp_store_open(path, "log", HP_CREATE, &s) == HP_OK);
  hp_process p = {.size = sizeof p, .id = 1, .pid = 7, .command = "app"};
  hp_write_process(s, &p);
  char hash[65];
  CHECK(hp_write_code_bytes(s, b, n, hash) == HP_OK);
  hp_code_object co = {.size = sizeof co,
                       .id = 3,
                       .process_id = 1,
                       .uri = "file:///k.so",
                       .hash = hash,
                       .code_size = n,
                       .build_options = "",
                       .source = ""};
  hp_write_code_object(s, &co);
  hp_kernel_symbol k = {.size = sizeof k, .id = 2, .name = "k"};
  hp_write_kernel_symbol(s, &k);
  hp_dispatch d = {.size = sizeof d,
                   .id = 1,
                   .dispatch_id = 1,
                   .process_id = 1,
                   .kernel_id = 2,
                   .start_ns = 10,
                   .end_ns = 1000};
  hp_write_dispatch(s, &d);
  for (uint64_t i = 0; i < 5; i++) {
    hp_pc_sample ps = {sizeof ps, i + 1, 1, 3, off, 100 + (int64_t)i, 0, 1000, "", 0};
    CHECK(hp_write_pc_sample(s, &ps) == HP_OK);
  }
  CHECK(hp_store_close(s) == HP_OK);
}

static size_t warnings(const ha_result *r) {
  size_t w = 0;
  for (size_t i = 0; i < ha_result_nnotes(r); i++)
    w += !strncmp(ha_result_note(r, i), "warning: ", 9);
  return w;
}

/* ha_run by instruction and by line on the store; want_lines: a real line is expected. */
static void views(const char *path, int want_lines, size_t want_warnings) {
  hp_store *s;
  CHECK(hp_store_open(path, NULL, HP_READ, &s) == HP_OK);
  const char *kernels[] = {"k"};
  for (int by = HA_BY_INSTRUCTION; by <= HA_BY_LINE; by++) {
    ha_query q = {.size = sizeof q, .group = by, .kernels = kernels, .nkernels = 1};
    ha_result *r;
    CHECK_MSG(ha_run(s, &q, &r) == HP_OK, "%s", ha_result_error(r));
    CHECK(ha_result_nrows(r) == 1 && ha_result_int(r, 0, 0) == 5);
    CHECK_MSG(warnings(r) == want_warnings, "%zu warnings", warnings(r));
    if (by == HA_BY_INSTRUCTION) /* the instruction at main: decoded either way */
      CHECK_MSG(strlen(ha_result_text(r, 0, 3)) > 0, "no disassembly at %s", ha_result_text(r, 0, 2));
    if (by == HA_BY_LINE)
      CHECK_MSG(want_lines == (strcmp(ha_result_text(r, 0, 2), "?") != 0), "line %s: %s",
                ha_result_text(r, 0, 2), ha_result_text(r, 0, 3));
    ha_result_free(r);
  }
  hp_store_close(s);
}

/* nvdisasm's text (--print-code --print-line-info) of two kernels parsed without nvdisasm: instructions at
 * their .text section's offset + pc, lines from "//## File", leaders after jumps and at labels, each
 * function's lines ending with it; and garbage lines ignored. */
static void sass_text(void) {
  static const char text[] = "\t.section\t.text._Z1kPi,\"ax\",@progbits\n"
                             "_Z1kPi:\n"
                             "\t//## File \"/src/k.cu\", line 3\n"
                             "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
                             "        /*0010*/              @!P0 BRA `(.L_x_0) ;\n"
                             "\t//## File \"/src/k.cu\", line 5 inlined at \"/src/k.cu\", line 9\n"
                             "        /*0020*/                   LDG.E R7, desc[UR4][R6.64] ;\n"
                             ".L_x_0:\n"
                             "        /*0030*/                   EXIT ;\n"
                             "        /*zz*/ not an instruction\n"
                             "\t.section\t.text._Z1jv,\"ax\",@progbits\n"
                             "        /*0000*/                   NOP ;\n"
                             "\t.section\t.nv.constant0._Z1jv,\"a\",@progbits\n"
                             "        /*0000*/ .word 0x0\n";
  cr_code c;
  memset(&c, 0, sizeof c);
  c.funcs = calloc(2, sizeof *c.funcs);
  if (!c.funcs) return;
  c.funcs[0] = (cr_func){0x400, 0x440, strdup("_Z1kPi")};
  c.funcs[1] = (cr_func){0x500, 0x580, strdup("_Z1jv")};
  c.nfuncs = 2;
  cr_sass_parse(&c, text);
  CHECK_MSG(c.ninsns == 5, "%zu SASS instructions", c.ninsns);
  const cr_insn *x = cr_insn_at(&c, 0x428);
  CHECK(x && x->addr == 0x420 && !strcmp(x->text, "LDG.E R7, desc[UR4][R6.64]") && x->leader);
  x = cr_insn_at(&c, 0x410);
  CHECK(x && !strcmp(x->text, "@!P0 BRA `(.L_x_0)") && x->ends_block && !x->leader);
  CHECK(cr_insn_at(&c, 0x430) && cr_insn_at(&c, 0x430)->leader && cr_insn_at(&c, 0x400)->leader);
  CHECK(cr_insn_at(&c, 0x500) && !strcmp(cr_insn_at(&c, 0x500)->text, "NOP"));
  const cr_line *l = cr_line_at(&c, 0x410);
  CHECK(l && l->line == 3 && !strcmp(l->file, "k.cu"));
  l = cr_line_at(&c, 0x430);
  CHECK(l && l->line == 5);
  CHECK(!cr_line_at(&c, 0x500)); /* the second kernel has no line: the first's end there */
  CHECK(cr_func_at(&c, 0x420) && !strcmp(cr_func_at(&c, 0x420)->name, "_Z1kPi"));
  cr_free(&c);
}

/* A function of AVX-512 instructions (never called: the CPU need not have them) between ordinary ones: VNNI,
 * BF16 and FP16 are newer than capstone 4's tables, which stopped the whole section's disassembly there. */
__asm__(".text\n.globl hp_test_avx512\n.type hp_test_avx512, @function\nhp_test_avx512:\n"
        "  vaddps %zmm2, %zmm1, %zmm0\n"         /* AVX-512F */
        "  vpdpbusd %zmm2, %zmm1, %zmm0\n"       /* AVX-512 VNNI */
        "  vcvtne2ps2bf16 %zmm2, %zmm1, %zmm0\n" /* AVX-512 BF16 */
        "  vaddph %zmm2, %zmm1, %zmm0\n"         /* AVX-512 FP16 */
        "  addq $1, %rax\n  ret\n.size hp_test_avx512, .-hp_test_avx512\n"
        ".globl hp_test_after\n.type hp_test_after, @function\nhp_test_after:\n  xorl %eax, %eax\n  ret\n"
        ".size hp_test_after, .-hp_test_after\n.previous\n");

/* Every instruction of hp_test_avx512 decoded (by capstone, or LLVM where the library is there), and the code
 * after it too: before, the first instruction capstone did not know ended the section's instructions. */
static void avx512(const unsigned char *b, size_t n, int llvm) {
  cr_code c;
  CHECK(cr_read(b, n, &c) == 0);
  uint64_t lo = 0, after = 0;
  for (size_t i = 0; i < c.nfuncs; i++) {
    if (!strcmp(c.funcs[i].name, "hp_test_avx512")) lo = c.funcs[i].lo;
    if (!strcmp(c.funcs[i].name, "hp_test_after")) after = c.funcs[i].lo;
  }
  CHECK(lo && after > lo);
  static const char *const want[] = {"vaddps", "vpdpbusd", "vcvtne2ps2bf16", "vaddph", "add", "ret"};
  const cr_insn *x = cr_insn_at(&c, lo);
  if (llvm) { /* each of them, with its name */
    for (size_t i = 0; i < sizeof want / sizeof want[0] && x; i++) {
      CHECK_MSG(!strncmp(x->text, want[i], strlen(want[i])), "instruction %zu: '%s', want %s", i, x->text,
                want[i]);
      x = cr_insn_at(&c, x->addr + x->size);
    }
  } else { /* without LLVM: what capstone does not know is one row saying so, up to the next function */
    while (x && x->addr < after) {
      CHECK_MSG(strstr(x->text, "not decoded") || strncmp(x->text, "(", 1), "row '%s'", x->text);
      x = cr_insn_at(&c, x->addr + x->size);
    }
  }
  CHECK(x && x->addr == after && !strncmp(x->text, "xor", 3));
  x = cr_insn_at(&c, after);
  CHECK_MSG(x && !strncmp(x->text, "xor", 3), "the code after it: %s", x ? x->text : "(none)");
  if (llvm)
    CHECK_MSG(c.llvm_insns >= 1 && c.undecoded == 0, "llvm %zu, undecoded %zu", c.llvm_insns, c.undecoded);
  if (!llvm)
    CHECK_MSG(c.undecoded > 0, "capstone alone decoded every AVX-512 instruction: the test shows nothing");
  cr_free(&c);
}

int main(void) {
  sass_text();
  size_t n;
  unsigned char *b = slurp("/proc/self/exe", &n);
  CHECK(b && n > 0);
  if (!b) return 1;
  /* an address inside main (the ELF symbol), which has a line */
  cr_code c;
  CHECK(cr_read(b, n, &c) == 0 && c.ninsns > 0 && c.nlines > 0 && !c.bad_dwarf && !c.no_lines);
  uint64_t off = 0;
  for (size_t i = 0; i < c.nfuncs; i++)
    if (!strcmp(c.funcs[i].name, "main")) off = c.funcs[i].lo + 4;
  CHECK(off && cr_line_at(&c, off) != NULL);
  cr_free(&c);
  avx512(b, n, 1);
  setenv("HUBPROF_LIBLLVM", "none", 1); /* an analysing machine without the LLVM library */
  avx512(b, n, 0);
  unsetenv("HUBPROF_LIBLLVM");
  char dir[] = "/tmp/hubprof-coderead-XXXXXX", path[64];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/good.log", dir);
  make_store(path, b, n, off);
  views(path, 1, 0);
  /* the line table damaged, then every DWARF section */
  static const char *const line[] = {"line"}, *const all[] = {"info",     "abbrev",  "line",     "str",
                                                              "line_str", "aranges", "rnglists", "loclists"};
  const char *const *sets[] = {line, all};
  size_t nsets[] = {1, sizeof all / sizeof all[0]};
  for (int k = 0; k < 2; k++) {
    unsigned char *d = malloc(n);
    if (!d) return 1;
    memcpy(d, b, n);
    CHECK(damage(d, n, sets[k], nsets[k]) >= 1);
    CHECK(cr_read(d, n, &c) == 0 && c.ninsns > 0);
    CHECK_MSG(c.nlines == 0 || !cr_line_at(&c, off), "%zu lines after damage %d", c.nlines, k);
    CHECK_MSG(c.bad_dwarf && c.no_lines && strstr(c.no_lines, "damaged"), "reason: %s",
              c.no_lines ? c.no_lines : "(none)");
    cr_free(&c);
    snprintf(path, sizeof path, "%s/bad%d.log", dir, k);
    make_store(path, d, n, off);
    views(path, 0, 1);
    unlink(path);
    free(d);
  }
  snprintf(path, sizeof path, "%s/good.log", dir);
  unlink(path);
  rmdir(dir);
  free(b);
  printf("test_code_read: %d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
