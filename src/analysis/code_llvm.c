/* LLVM's disassembler for the instructions capstone does not decode (AVX-512 extensions newer than capstone
 * 4's tables, ...): the LLVM library is loaded with dlopen when the first such instruction is met, never
 * linked. */
/* SPDX-License-Identifier: MIT */
#include "code_read.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llvm-c/Disassembler.h, declared here: the library is optional at run time and its headers at build time */
typedef void *llvm_dis;
typedef int (*op_info_fn)(void *, uint64_t, uint64_t, uint64_t, uint64_t, int, void *);
typedef const char *(*sym_fn)(void *, uint64_t, uint64_t *, uint64_t, const char **);
#define LLVM_OPT_ASM_VARIANT 4 /* LLVMDisassembler_Option_AsmPrinterVariant: 1 is Intel syntax on x86 */

struct cr_llvm {
  void *lib;
  llvm_dis dc;
  size_t (*disasm)(llvm_dis, uint8_t *, uint64_t, uint64_t, char *, size_t);
  void (*dispose)(llvm_dis);
};

/* The LLVM releases tried, newest first after PoCL's own (15); $HUBPROF_LIBLLVM names another. */
static const char *const libs[] = {"libLLVM-15.so.1", "libLLVM-15.so",   "libLLVM.so.19.1", "libLLVM.so.18.1",
                                   "libLLVM-17.so.1", "libLLVM-16.so.1", "libLLVM-14.so.1", "libLLVM-14.so"};

cr_llvm *cr_llvm_open(int elf_machine) {
  const char *triple, *target;
  if (elf_machine == EM_X86_64)
    triple = "x86_64-unknown-linux-gnu", target = "X86";
  else if (elf_machine == EM_386)
    triple = "i386-unknown-linux-gnu", target = "X86";
  else if (elf_machine == EM_AARCH64)
    triple = "aarch64-unknown-linux-gnu", target = "AArch64";
  else
    return NULL;
  const char *env = getenv("HUBPROF_LIBLLVM");
  void *lib = NULL;
  if (env && *env) lib = dlopen(env, RTLD_LAZY | RTLD_LOCAL);
  for (size_t i = 0; !lib && !(env && *env) && i < sizeof libs / sizeof libs[0]; i++)
    lib = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return NULL;
  char name[64];
  void (*init[3])(void) = {0};
  static const char *const what[] = {"TargetInfo", "TargetMC", "Disassembler"};
  for (int i = 0; i < 3; i++) {
    snprintf(name, sizeof name, "LLVMInitialize%s%s", target, what[i]);
    *(void **)&init[i] = dlsym(lib, name);
  }
  cr_llvm *d = calloc(1, sizeof *d);
  llvm_dis (*create)(const char *, const char *, void *, int, op_info_fn, sym_fn) = NULL;
  int (*options)(llvm_dis, uint64_t) = NULL;
  *(void **)&create = dlsym(lib, "LLVMCreateDisasmCPU");
  *(void **)&options = dlsym(lib, "LLVMSetDisasmOptions");
  if (d) {
    *(void **)&d->disasm = dlsym(lib, "LLVMDisasmInstruction");
    *(void **)&d->dispose = dlsym(lib, "LLVMDisasmDispose");
  }
  if (!d || !init[0] || !init[1] || !init[2] || !create || !d->disasm || !d->dispose) {
    free(d);
    dlclose(lib);
    return NULL;
  }
  for (int i = 0; i < 3; i++)
    init[i]();
  d->dc = create(triple, "", NULL, 0, NULL, NULL);
  if (!d->dc) { /* initialised: the library stays (see cr_llvm_close) */
    free(d);
    return NULL;
  }
  if (options && elf_machine != EM_AARCH64) options(d->dc, LLVM_OPT_ASM_VARIANT);
  d->lib = lib;
  return d;
}

size_t cr_llvm_insn(cr_llvm *d, const uint8_t *bytes, size_t n, uint64_t addr, char *text, size_t textn) {
  if (!d || !n || textn < 2) return 0;
  char out[256] = "";
  size_t k = d->disasm(d->dc, (uint8_t *)bytes, n, addr, out, sizeof out);
  if (!k || k > n) return 0;
  /* "\tvpdpbusd\tzmm0, zmm1, zmm2": tabs to single spaces, no leading space */
  const char *p = out + strspn(out, " \t");
  size_t o = 0;
  for (; *p && o + 1 < textn; p++) {
    char ch = *p == '\t' ? ' ' : *p;
    if (ch == ' ' && (o == 0 || text[o - 1] == ' ')) continue;
    text[o++] = ch;
  }
  while (o && text[o - 1] == ' ')
    o--;
  text[o] = 0;
  return k;
}

void cr_llvm_close(cr_llvm *d) {
  if (!d) return;
  d->dispose(d->dc);
  /* the library stays loaded: LLVM registers static state (its command-line options) that a dlclose and a
   * later dlopen in the same process would register twice */
  free(d);
}
