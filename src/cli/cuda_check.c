/* Before a run: a CUDA program on a machine without the CUDA driver never loads the collector (the driver
 * loads it, through CUDA_INJECTION64_PATH), so hubprof itself says in one line that its CUDA work is not
 * recorded. A CUDA program: an ELF file with a .nv_fatbin section (nvcc's output) or that needs libcudart or
 * libcuda. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "run_app.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file execvp would run for prog, into path; 0 when found. */
static int resolve(const char *prog, char *path, size_t len) {
  if (strchr(prog, '/')) {
    snprintf(path, len, "%s", prog);
    return access(path, X_OK);
  }
  const char *p = getenv("PATH");
  for (p = p ? p : "/usr/bin:/bin"; *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(path, len, "%.*s/%s", (int)n, n ? p : ".", prog);
    if (access(path, X_OK) == 0) return 0;
    p += n + (e ? 1 : 0);
  }
  return -1;
}

/* 1 when the ELF image m (n bytes) has a .nv_fatbin section or needs libcudart / libcuda. */
static int is_cuda_elf(const unsigned char *m, size_t n) {
  if (n < sizeof(Elf64_Ehdr) || memcmp(m, ELFMAG, SELFMAG) != 0 || m[EI_CLASS] != ELFCLASS64) return 0;
  const Elf64_Ehdr *eh = (const void *)m;
  if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > n ||
      (n - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum)
    return 0;
  const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
  const Elf64_Shdr *names = &sh[eh->e_shstrndx];
  if (names->sh_offset > n || names->sh_size > n - names->sh_offset) return 0;
  for (size_t i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_name < names->sh_size) {
      const char *nm = (const char *)m + names->sh_offset + sh[i].sh_name;
      if (strncmp(nm, ".nv_fatbin", names->sh_size - sh[i].sh_name) == 0) return 1;
    }
    if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    if (sh[i].sh_offset > n || sh[i].sh_size > n - sh[i].sh_offset || str->sh_offset > n ||
        str->sh_size > n - str->sh_offset)
      continue;
    const Elf64_Dyn *d = (const void *)(m + sh[i].sh_offset);
    for (size_t k = 0; k < sh[i].sh_size / sizeof *d && d[k].d_tag != DT_NULL; k++)
      if (d[k].d_tag == DT_NEEDED && d[k].d_un.d_val < str->sh_size) {
        const char *lib = (const char *)m + str->sh_offset + d[k].d_un.d_val;
        size_t max = str->sh_size - d[k].d_un.d_val;
        if (strncmp(lib, "libcudart.so", max < 12 ? max : 12) == 0 ||
            strncmp(lib, "libcuda.so", max < 10 ? max : 10) == 0)
          return 1;
      }
  }
  return 0;
}

int cli_cuda_warned;

void cli_cuda_check(const char *prog) {
  char path[PATH_MAX];
  if (!prog || resolve(prog, path, sizeof path) != 0) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return;
  int cuda = is_cuda_elf(m, (size_t)st.st_size);
  munmap(m, (size_t)st.st_size);
  if (!cuda) return;
  void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (drv) {
    dlclose(drv);
    return;
  }
  cli_cuda_warned = 1;
  cli_warn("%s is a CUDA program and there is no CUDA driver here (libcuda.so.1 not found): its CUDA work is "
           "not recorded",
           prog);
}
