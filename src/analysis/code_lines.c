/* Source lines for functions of a code object that has none for them (PoCL's work-group functions of a
 * program built with -g alone): its stored IR is compiled again by the LLVM plugin (llvm_regen.c, dlopened
 * in a child process, so that no LLVM error can end the caller), and the new object's line rows are used
 * for each function whose code is byte-identical to what ran (bytes under relocations masked). */
/* SPDX-License-Identifier: MIT */
#include "code_lines.h"

#include "llvm_regen.h"

#include "../common/hu_part.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OBJ (256u << 20)

static int write_all(int fd, const void *p, size_t n) {
  for (size_t at = 0; at < n;) {
    ssize_t w = write(fd, (const char *)p + at, n - at);
    if (w <= 0) return -1;
    at += (size_t)w;
  }
  return 0;
}

/* The child: regenerate and send [int rc][uint64 n][n bytes of object or reason]. LLVM writes some messages
 * straight to stderr (the verifier's, when the bitcode reader upgrades debug information it finds broken:
 * "function definition may only have a distinct !dbg attachment"): the child's stderr goes to `err`, never
 * the user's terminal; the parent names its last line only when the plugin crashed. */
static void child(int fd, int err, const void *ir, size_t n) {
  if (err >= 0) dup2(err, STDERR_FILENO);
  char path[PATH_MAX + 32], why[HL_WHY] = "";
  /* $HUBPROF_LLVM_PLUGIN, else libhubprof_llvm.so where it is built or installed beside this code */
  hu_part_path(path, sizeof path, "HUBPROF_LLVM_PLUGIN", "libhubprof_llvm.so");
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  hl_regenerate_fn *fn = h ? (hl_regenerate_fn *)dlsym(h, "hl_regenerate") : NULL;
  void *obj = NULL;
  size_t on = 0;
  int rc = -1;
  if (!fn) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "lines need LLVM 15: %s", e ? e : "no hl_regenerate in the plugin");
  } else {
    rc = fn(ir, n, &obj, &on, why);
  }
  uint64_t len = rc == 0 ? on : strlen(why);
  if (write_all(fd, &rc, sizeof rc) || write_all(fd, &len, sizeof len) ||
      write_all(fd, rc == 0 ? obj : (void *)why, (size_t)len))
    _exit(1);
  _exit(0);
}

/* Run the plugin on ir in a child process: 0 and the object, or 1 (nothing to add) or -1 and why. */
static int regenerate(const void *ir, size_t n, unsigned char **obj, size_t *on, char *why, size_t whyn) {
  int p[2];
  *obj = NULL;
  *on = 0;
  if (pipe(p) != 0) return snprintf(why, whyn, "no pipe to the LLVM plugin"), -1;
  fflush(NULL);
  FILE *err = tmpfile(); /* the child's stderr (NULL: /dev/null) */
  int efd = err ? fileno(err) : open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]), close(p[1]);
    if (err)
      fclose(err);
    else if (efd >= 0)
      close(efd);
    return snprintf(why, whyn, "the LLVM plugin cannot be started (fork)"), -1;
  }
  if (pid == 0) {
    close(p[0]);
    child(p[1], efd, ir, n);
  }
  if (!err && efd >= 0) close(efd);
  close(p[1]);
  unsigned char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      size_t nc = cap ? 2 * cap : 65536;
      unsigned char *nb = nc <= MAX_OBJ ? realloc(buf, nc) : NULL;
      if (!nb) break;
      buf = nb, cap = nc;
    }
    ssize_t r = read(p[0], buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(p[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  int rc = -1;
  uint64_t m = 0;
  if (WIFSIGNALED(st)) {
    char last[200] = "";
    if (err && fseek(err, 0, SEEK_SET) == 0) /* its last line: LLVM's "LLVM ERROR: ..." before an abort */
      for (char l[200]; fgets(l, sizeof l, err);)
        if (l[strspn(l, " \t\r\n")]) snprintf(last, sizeof last, "%.*s", (int)strcspn(l, "\r\n"), l);
    snprintf(why, whyn, "the LLVM plugin crashed (signal %d)%s%s", WTERMSIG(st), *last ? ": " : "", last);
  } else if (len < sizeof rc + sizeof m ||
             (memcpy(&rc, buf, sizeof rc), memcpy(&m, buf + sizeof rc, sizeof m),
              m != len - sizeof rc - sizeof m)) {
    snprintf(why, whyn, "the LLVM plugin gave no answer (exit status %d)",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    rc = -1;
  } else if (rc != 0) {
    snprintf(why, whyn, "%.*s", (int)m, (const char *)buf + sizeof rc + sizeof m);
    rc = rc == 1 ? 1 : -1;
  } else {
    memmove(buf, buf + sizeof rc + sizeof m, (size_t)m);
    *obj = buf, *on = (size_t)m;
    rc = 0;
  }
  if (err) fclose(err);
  if (rc != 0) free(buf);
  return rc;
}

/* Apply the RELA relocations of the object's non-allocated sections (its DWARF) in place, so that libdw
 * reads addresses relative to the code section and names from the string sections. 0, or -1 when a
 * relocation is of a kind not handled here. */
static int relocate_debug(unsigned char *b, size_t n, Elf *e, int machine) {
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr rs, ts, ss;
    if (!gelf_getshdr(scn, &rs) || rs.sh_type != SHT_RELA) continue;
    Elf_Scn *tscn = elf_getscn(e, rs.sh_info), *sscn = elf_getscn(e, rs.sh_link);
    if (!tscn || !sscn || !gelf_getshdr(tscn, &ts) || !gelf_getshdr(sscn, &ss) || (ts.sh_flags & SHF_ALLOC))
      continue;
    Elf_Data *rd = elf_getdata(scn, NULL), *sd = elf_getdata(sscn, NULL);
    if (!rd || !sd || !rs.sh_entsize || ts.sh_offset > n || ts.sh_size > n - ts.sh_offset) return -1;
    for (size_t i = 0; i < rs.sh_size / rs.sh_entsize; i++) {
      GElf_Rela r;
      GElf_Sym sym;
      if (!gelf_getrela(rd, (int)i, &r) || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym)) return -1;
      unsigned t = GELF_R_TYPE(r.r_info), size = 0;
      if (machine == EM_X86_64)
        size = t == R_X86_64_64 ? 8 : t == R_X86_64_32 || t == R_X86_64_32S ? 4 : 0;
      else if (machine == EM_AARCH64)
        size = t == R_AARCH64_ABS64 ? 8 : t == R_AARCH64_ABS32 ? 4 : 0;
      if (!size || r.r_offset > ts.sh_size || size > ts.sh_size - r.r_offset) return -1;
      uint64_t v = sym.st_value + (uint64_t)r.r_addend;
      memcpy(b + ts.sh_offset + r.r_offset, &v, size); /* little-endian targets only (both above) */
    }
  }
  return 0;
}

/* Whether obj's function [at, at+size) of its code section equals the .so's bytes at so_off, bytes under
 * the code section's relocations left out. */
static int same_code(Elf *e, const unsigned char *obj, size_t on, size_t text_ix, uint64_t text_off,
                     uint64_t at, uint64_t size, const unsigned char *so, size_t sn, uint64_t so_off) {
  if (so_off > sn || size > sn - so_off || text_off > on || at > on - text_off || size > on - text_off - at)
    return 0;
  unsigned char *mask = calloc(size ? size : 1, 1);
  if (!mask) return 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr rs;
    if (!gelf_getshdr(scn, &rs) || rs.sh_type != SHT_RELA || rs.sh_info != text_ix || !rs.sh_entsize)
      continue;
    Elf_Data *rd = elf_getdata(scn, NULL);
    for (size_t i = 0; rd && i < rs.sh_size / rs.sh_entsize; i++) {
      GElf_Rela r;
      if (!gelf_getrela(rd, (int)i, &r)) break;
      unsigned t = GELF_R_TYPE(r.r_info), w = t == R_X86_64_64 ? 8 : 4;
      for (unsigned k = 0; k < w; k++)
        if (r.r_offset + k >= at && r.r_offset + k < at + size) mask[r.r_offset + k - at] = 1;
    }
  }
  int same = 1;
  for (uint64_t i = 0; i < size && same; i++)
    same = mask[i] || obj[text_off + at + i] == so[so_off + i];
  free(mask);
  return same;
}

/* The file offset of address a in the ELF e (its section holding it), or UINT64_MAX. */
static uint64_t file_off(Elf *e, uint64_t a) {
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) &&
        a >= sh.sh_addr && a < sh.sh_addr + sh.sh_size)
      return sh.sh_offset + (a - sh.sh_addr);
  }
  return UINT64_MAX;
}

static int has_rows(const cr_code *c, uint64_t lo, uint64_t hi) {
  for (size_t i = 0; i < c->nlines; i++)
    if (c->lines[i].addr >= lo && c->lines[i].addr < hi && !c->lines[i].end) return 1;
  return 0;
}

static int add_row(cr_code *c, const cr_line *r) {
  if (c->nlines == c->caplines) {
    size_t cap = c->caplines ? 2 * c->caplines : 64;
    cr_line *nr = realloc(c->lines, cap * sizeof *nr);
    if (!nr) return -1;
    c->lines = nr, c->caplines = cap;
  }
  c->lines[c->nlines++] = *r;
  return 0;
}

/* Move the line rows of each identical function of the object into c; counts moved and differing ones. */
static void adopt_rows(cr_code *c, const unsigned char *so, size_t sn, unsigned char *obj, size_t on,
                       const cr_code *oc, int *moved, int *differ) {
  Elf *se = elf_memory((char *)so, sn), *e = elf_memory((char *)obj, on);
  Elf_Scn *scn = NULL;
  while (se && e && (scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize) continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Sym sym;
      GElf_Shdr ts;
      if (!gelf_getsym(d, (int)i, &sym)) break;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size) continue;
      Elf_Scn *tscn = elf_getscn(e, sym.st_shndx);
      const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
      if (!name || !tscn || !gelf_getshdr(tscn, &ts) || ts.sh_type != SHT_PROGBITS) continue;
      const cr_func *f = NULL;
      for (size_t k = 0; k < c->nfuncs && !f; k++)
        if (!strcmp(c->funcs[k].name, name)) f = &c->funcs[k];
      if (!f || has_rows(c, f->lo, f->hi)) continue; /* lines of its own: nothing to add */
      if (f->hi - f->lo != sym.st_size || !same_code(e, obj, on, sym.st_shndx, ts.sh_offset, sym.st_value,
                                                     sym.st_size, so, sn, file_off(se, f->lo))) {
        (*differ)++;
        continue;
      }
      size_t before = c->nlines;
      for (size_t k = 0; k < oc->nlines; k++) {
        const cr_line *r = &oc->lines[k];
        if (r->addr < sym.st_value || r->addr >= sym.st_value + sym.st_size || r->end) continue;
        cr_line x = *r;
        x.addr = r->addr - sym.st_value + f->lo;
        if (add_row(c, &x)) break;
      }
      cr_line end = {.addr = f->hi, .line = 0, .end = 1};
      if (c->nlines > before && !add_row(c, &end)) (*moved)++;
    }
  }
  if (e) elf_end(e);
  if (se) elf_end(se);
}

int cl_lines_from_object(cr_code *c, const void *so, size_t sn, unsigned char *obj, size_t on, char *why,
                         size_t whyn) {
  why[0] = 0;
  elf_version(EV_CURRENT);
  Elf *e = elf_memory((char *)obj, on);
  GElf_Ehdr eh;
  int rc = -1;
  if (!e || !gelf_getehdr(e, &eh) || eh.e_type != ET_REL) {
    snprintf(why, whyn, "the regenerated code is not an ELF object");
  } else if (relocate_debug(obj, on, e, eh.e_machine) != 0) {
    snprintf(why, whyn, "the regenerated object's debug information has relocations not handled here");
  } else {
    elf_end(e);
    e = NULL;
    cr_code oc;
    cr_read(obj, on, &oc);
    int moved = 0, differ = 0;
    size_t rows = oc.nlines;
    if (!rows)
      snprintf(why, whyn, "the regenerated object has no line table either");
    else
      adopt_rows(c, so, sn, obj, on, &oc, &moved, &differ);
    cr_free(&oc);
    if (!rows)
      ;
    else if (differ) /* the identical ones keep their rows */
      snprintf(why, whyn, "regenerated code differs from what ran (%d function%s)", differ,
               differ == 1 ? "" : "s");
    else if (!moved)
      snprintf(why, whyn, "the regenerated object has no lines for the functions without them");
    else
      rc = 0;
  }
  if (e) elf_end(e);
  return rc;
}

int cl_lines_from_ir(cr_code *c, const void *so, size_t sn, const void *ir, size_t irn, char *why,
                     size_t whyn) {
  unsigned char *obj;
  size_t on;
  why[0] = 0;
  int got = regenerate(ir, irn, &obj, &on, why, whyn);
  if (got != 0) return got;
  int rc = cl_lines_from_object(c, so, sn, obj, on, why, whyn);
  free(obj);
  return rc;
}
