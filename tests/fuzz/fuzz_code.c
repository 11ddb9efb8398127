/* libFuzzer target for the code-object reader of `hubprof analyze --by ...` (src/analysis/code_read.c): any
 * bytes as a stored code object (ELF, DWARF, machine code) must read or fail with a reason, and every lookup
 * must answer without a crash, leak or hang; the base64 decoder of the stored chunks takes any text too; the
 * same bytes as the object regenerated from a kernel's IR (code_lines.c: relocation, identity check, rows),
 * and as nvdisasm's text (code_sass.c's parser). A cubin-like input runs the real nvdisasm, bounded here to 2
 * s (HUBPROF_NVDISASM_TIMEOUT) so that libFuzzer's 10 s limit tests hubprof, not nvdisasm.
 */
/* SPDX-License-Identifier: MIT */
#include "../../src/analysis/code_lines.h"
#include "../../src/analysis/code_read.h"
#include "../../src/common/hu_bytes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  setenv("HUBPROF_NVDISASM_TIMEOUT", "2", 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text) { /* the bytes as nvdisasm's output */
    memcpy(text, data, size);
    text[size] = 0;
    cr_code s = {0};
    cr_sass_parse(&s, text);
    for (size_t i = 0; i < s.ninsns && i < 64; i++)
      cr_line_at(&s, s.insns[i].addr);
    cr_free(&s);
    free(text);
  }
  cr_code c;
  cr_read(data, size, &c);
  uint64_t probe[] = {0, 0x1000, 0x1040, 0x10c0, UINT64_MAX};
  for (size_t i = 0; i < c.ninsns && i < 64; i++) {
    cr_insn_at(&c, c.insns[i].addr);
    cr_block_of(&c, c.insns[i].addr + 1);
    cr_line_at(&c, c.insns[i].addr);
    cr_func_at(&c, c.insns[i].addr);
  }
  for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++) {
    cr_insn_at(&c, probe[i]);
    cr_block_of(&c, probe[i]);
    cr_line_at(&c, probe[i]);
    cr_func_at(&c, probe[i]);
  }
  unsigned char *obj = malloc(size ? size : 1); /* relocated in place: a copy */
  char why[256];
  if (obj) {
    memcpy(obj, data, size);
    if (cl_lines_from_object(&c, data, size, obj, size, why, sizeof why) != 0 && !why[0]) abort();
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++)
      cr_line_at(&c, probe[i]);
    free(obj);
  }
  cr_free(&c);
  unsigned char *out = malloc(size / 4 * 3 + 1);
  if (out) {
    long n = hu_base64_decode((const char *)data, size, out);
    if (n >= 0) { /* what decodes encodes back to the same text */
      char *text = malloc(hu_base64_len((size_t)n) + 1);
      if (text && hu_base64_encode(out, (size_t)n, text) != size) abort();
      free(text);
    }
    free(out);
  }
  return 0;
}
