/* Reading a stored CUDA cubin for attribution: SASS instructions and source lines from nvdisasm (run as a
 * subprocess on the bytes), mapped to byte offsets in the cubin (a kernel's .text section offset + pc). */
/* SPDX-License-Identifier: MIT */
#include "code_read.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define SASS_MAX_OUT (256u << 20) /* nvdisasm's text of one cubin at most */
#define SASS_SECONDS 60           /* nvdisasm's time on one cubin at most, unless HUBPROF_NVDISASM_TIMEOUT */

static void why(cr_code *c, const char *fmt, const char *arg) {
  if (!c->why[0]) snprintf(c->why, sizeof c->why, fmt, arg);
}

static int executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* The first match of a glob pattern that is executable, into out. */
static int glob_exe(const char *pat, char *out, size_t n) {
  glob_t g;
  int found = 0;
  if (glob(pat, 0, NULL, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc && !found; i++)
      if (executable(g.gl_pathv[i])) found = snprintf(out, n, "%s", g.gl_pathv[i]) < (int)n;
  globfree(&g);
  return found;
}

/* nvdisasm: HUBPROF_NVDISASM; else on PATH; else beside the toolkit (CUDA_HOME, CUDA_PATH, /usr/local/cuda);
 * else the pip package nvidia-cuda-nvdisasm (nvidia/cu*\/bin/ in a site-packages of a Python on PATH, of
 * pyenv, or of the user). 0 and the path, -1 when none (c->why says so). */
int cr_sass_find(char *out, size_t n, char *whyb, size_t whyn) {
  const char *env = getenv("HUBPROF_NVDISASM");
  if (env && *env) {
    if (executable(env)) return snprintf(out, n, "%s", env) < (int)n ? 0 : -1;
    snprintf(whyb, whyn, "HUBPROF_NVDISASM=%.80s is not an executable file", env);
    return -1;
  }
  char pat[PATH_MAX];
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    size_t len = strcspn(p, ":");
    if (len && len < 1024) {
      snprintf(pat, sizeof pat, "%.*s/nvdisasm", (int)len, p);
      if (executable(pat)) return snprintf(out, n, "%s", pat) < (int)n ? 0 : -1;
    }
    p += len + (p[len] == ':');
  }
  static const char *const homes[] = {"CUDA_HOME", "CUDA_PATH"};
  for (size_t i = 0; i < 2; i++) {
    const char *h = getenv(homes[i]);
    if (h && *h && strlen(h) < 1024) {
      snprintf(pat, sizeof pat, "%s/bin/nvdisasm", h);
      if (executable(pat)) return snprintf(out, n, "%s", pat) < (int)n ? 0 : -1;
    }
  }
  if (executable("/usr/local/cuda/bin/nvdisasm"))
    return snprintf(out, n, "/usr/local/cuda/bin/nvdisasm") < (int)n ? 0 : -1;
  for (const char *p = path ? path : ""; *p;) { /* a Python's prefix: DIR/../lib/python3.* */
    size_t len = strcspn(p, ":");
    if (len && len < 1024) {
      snprintf(pat, sizeof pat, "%.*s/../lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm", (int)len, p);
      if (glob_exe(pat, out, n)) return 0;
    }
    p += len + (p[len] == ':');
  }
  const char *home = getenv("HOME");
  if (home && strlen(home) < 1024) {
    snprintf(pat, sizeof pat, "%s/.pyenv/versions/*/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm",
             home);
    if (glob_exe(pat, out, n)) return 0;
    snprintf(pat, sizeof pat, "%s/.local/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm", home);
    if (glob_exe(pat, out, n)) return 0;
  }
  if (glob_exe("/usr/local/lib/python3*/dist-packages/nvidia/cu*/bin/nvdisasm", out, n) ||
      glob_exe("/usr/lib/python3/dist-packages/nvidia/cu*/bin/nvdisasm", out, n))
    return 0;
  snprintf(whyb, whyn,
           "no SASS disassembler: nvdisasm not found (install the CUDA toolkit or the pip package "
           "nvidia-cuda-nvdisasm, or set HUBPROF_NVDISASM)");
  return -1;
}

/* How long nvdisasm may take on one cubin: HUBPROF_NVDISASM_TIMEOUT seconds (1 to 86400), else SASS_SECONDS.
 */
static long sass_limit_ms(void) {
  const char *e = getenv("HUBPROF_NVDISASM_TIMEOUT");
  char *end;
  long s = e && *e ? strtol(e, &end, 10) : 0;
  return (s >= 1 && s <= 86400 && !*end ? s : SASS_SECONDS) * 1000L;
}

static long elapsed_ms(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* Run nvdisasm on the bytes (a private temporary file): its output (stdout and stderr), malloc'd and
 * NUL-terminated, or NULL with why. */
static char *run_nvdisasm(const char *exe, const void *bytes, size_t n, char *whyb, size_t whyn) {
  const char *tmp = getenv("TMPDIR");
  char file[PATH_MAX];
  snprintf(file, sizeof file, "%s/.hubprof-cubin-XXXXXX", tmp && *tmp && strlen(tmp) < 2048 ? tmp : "/tmp");
  int fd = mkstemp(file);
  if (fd < 0) return snprintf(whyb, whyn, "no temporary file for nvdisasm: %s", strerror(errno)), NULL;
  const char *b = bytes;
  size_t left = n;
  while (left) {
    ssize_t w = write(fd, b, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    b += w, left -= (size_t)w;
  }
  close(fd);
  int p[2];
  char *out = NULL;
  if (left || pipe(p) != 0) {
    unlink(file);
    return snprintf(whyb, whyn, "no temporary file for nvdisasm: %s", strerror(errno)), NULL;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  posix_spawn_file_actions_addclose(&fa, p[0]);
  posix_spawn_file_actions_addclose(&fa, p[1]);
  char *argv[] = {(char *)exe, "--print-code", "--print-line-info", file, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  size_t len = 0, cap = 0;
  int full = 0, late = 0;
  long limit_ms = sass_limit_ms();
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (; rc == 0;) {
    if (len + 1 >= cap) {
      size_t nc = cap ? 2 * cap : 1 << 16;
      char *nb = nc <= SASS_MAX_OUT ? realloc(out, nc) : NULL;
      if (!nb) {
        full = 1;
        break;
      }
      out = nb, cap = nc;
    }
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    long wait = limit_ms - elapsed_ms(&t0);
    int pr = wait > 0 ? poll(&pf, 1, wait > 1000 ? 1000 : (int)wait) : 0;
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0 && elapsed_ms(&t0) < limit_ms) continue;
    if (pr <= 0) { /* a damaged cubin can keep nvdisasm busy for ever: it is stopped, the cubin unread */
      late = pr == 0;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t r = read(p[0], out + len, cap - len - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  if (full && rc == 0) kill(pid, SIGKILL); /* not left writing into a pipe nobody reads */
  close(p[0]);
  int st = 0;
  if (rc == 0)
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
      ;
  unlink(file);
  if (out) out[len] = 0;
  if (rc != 0) {
    snprintf(whyb, whyn, "nvdisasm (%.60s) cannot be started: %s", exe, strerror(rc));
  } else if (full) {
    snprintf(whyb, whyn, "nvdisasm's output is too large");
  } else if (late) {
    snprintf(whyb, whyn,
             "nvdisasm ran longer than %ld s on the cubin and was stopped (HUBPROF_NVDISASM_TIMEOUT)",
             limit_ms / 1000);
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    size_t l = out ? strcspn(out, "\n") : 0;
    snprintf(whyb, whyn, "nvdisasm failed (%s %d)%s%.*s", WIFEXITED(st) ? "exit status" : "signal",
             WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), l ? ": " : "", (int)(l < 150 ? l : 150),
             out ? out : "");
  } else {
    return out;
  }
  free(out);
  return NULL;
}

/* The cubin's code sections (.text.<kernel>): their file offsets are what sample offsets count from. */
static void read_sections(cr_code *c, Elf *e) {
  size_t shstr;
  if (elf_getshdrstrndx(e, &shstr) != 0) return;
  Elf_Scn *scn = NULL;
  size_t cap = 0;
  while ((scn = elf_nextscn(e, scn))) {
    GElf_Shdr sh;
    const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
    if (!name || strncmp(name, ".text.", 6) || !name[6] || sh.sh_type != SHT_PROGBITS) continue;
    if (c->nfuncs == cap) {
      size_t nc = cap ? 2 * cap : 16;
      cr_func *nf = realloc(c->funcs, nc * sizeof *nf);
      if (!nf) return;
      c->funcs = nf, cap = nc;
    }
    cr_func *f = &c->funcs[c->nfuncs];
    f->lo = sh.sh_offset;
    f->hi = sh.sh_offset + (sh.sh_size ? sh.sh_size : 1);
    if ((f->name = strdup(name + 6))) c->nfuncs++;
  }
}

static const cr_func *func_named(const cr_code *c, const char *name, size_t len) {
  for (size_t i = 0; i < c->nfuncs; i++)
    if (strlen(c->funcs[i].name) == len && !strncmp(c->funcs[i].name, name, len)) return &c->funcs[i];
  return NULL;
}

static cr_line *add_line(cr_code *c) {
  if (c->nlines == c->caplines) {
    size_t cap = c->caplines ? 2 * c->caplines : 256;
    cr_line *nr = realloc(c->lines, cap * sizeof *nr);
    if (!nr) return NULL;
    c->lines = nr, c->caplines = cap;
  }
  cr_line *l = &c->lines[c->nlines++];
  memset(l, 0, sizeof *l);
  return l;
}

static int is_jump(const char *t) { /* t: the instruction, predicate included */
  if (*t == '@') t += strcspn(t, " ") + 1;
  static const char *const ends[] = {"BRA", "BRX", "JMP", "JMX", "RET", "EXIT", "BRK", "CALL", "BPT"};
  for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
    size_t k = strlen(ends[i]);
    if (!strncmp(t, ends[i], k) && (t[k] == ' ' || t[k] == '.' || t[k] == ';' || !t[k])) return 1;
  }
  return 0;
}

/* Parse nvdisasm's text (--print-code --print-line-info) into instructions and line rows at cubin offsets:
 * a section header names the function (whose .text section offset is the base), "//## File "F", line N"
 * gives the line of the instructions after it, "/\*0040*\/ TEXT ;" is an instruction, a label makes the next
 * instruction a block leader. Functions come from read_sections. Exposed for tests (code_read.h). */
void cr_sass_parse(cr_code *c, const char *text) {
  const cr_func *fn = NULL;
  char file[64] = "";
  int line = 0, pending = 0, leader = 1;
  size_t cap = 0;
  for (const char *p = text; p && *p;) {
    size_t len = strcspn(p, "\n");
    const char *s = p, *e = p + len;
    p = *e ? e + 1 : e;
    while (s < e && (*s == ' ' || *s == '\t'))
      s++;
    const char *h = NULL;
    if (!strncmp(s, ".section", 8)) { /* .section .text.NAME,"ax",@progbits; other sections hold no code */
      h = s + 8 + strspn(s + 8, " \t");
      fn = !strncmp(h, ".text.", 6) ? func_named(c, h + 6, strcspn(h + 6, ",\" \t\n")) : NULL;
      line = 0, pending = 0, leader = 1;
      continue;
    }
    if (!strncmp(s, "//## File \"", 11)) {
      const char *f = s + 11, *q = memchr(f, '"', (size_t)(e - f));
      const char *ln = q ? strstr(q, ", line ") : NULL;
      if (!q || !ln || ln > e) continue;
      const char *base = f;
      for (const char *x = f; x < q; x++)
        if (*x == '/') base = x + 1;
      snprintf(file, sizeof file, "%.*s", (int)(q - base), base);
      line = atoi(ln + 7);
      pending = 1;
      continue;
    }
    if (!fn) continue;
    if (*s == '.' && len && e[-1] == ':') { /* a label: a jump target */
      leader = 1;
      continue;
    }
    if (strncmp(s, "/*", 2)) continue;
    char *end;
    unsigned long long off = strtoull(s + 2, &end, 16);
    if (end == s + 2 || strncmp(end, "*/", 2)) continue;
    const char *t = end + 2;
    while (t < e && (*t == ' ' || *t == '\t'))
      t++;
    size_t tl = (size_t)(e - t);
    while (tl && (t[tl - 1] == ' ' || t[tl - 1] == ';' || t[tl - 1] == '\r'))
      tl--;
    const char *enc = tl ? strstr(t, "/*") : NULL; /* an encoding comment (-hex) is not the text */
    if (enc && enc < t + tl) {
      tl = (size_t)(enc - t);
      while (tl && (t[tl - 1] == ' ' || t[tl - 1] == ';'))
        tl--;
    }
    uint64_t addr = fn->lo + off;
    if (addr >= fn->hi) continue;
    if (c->ninsns == cap) {
      size_t nc = cap ? 2 * cap : 256;
      cr_insn *ni = realloc(c->insns, nc * sizeof *ni);
      if (!ni) return;
      c->insns = ni, cap = nc;
    }
    cr_insn *x = &c->insns[c->ninsns++];
    memset(x, 0, sizeof *x);
    x->addr = addr;
    x->size = 16; /* sm_70 and later; narrowed below to the next instruction */
    snprintf(x->text, sizeof x->text, "%.*s", (int)(tl < 95 ? tl : 95), t);
    x->leader = (uint8_t)leader;
    leader = 0;
    x->ends_block = (uint8_t)is_jump(x->text);
    if (x->ends_block) leader = 1;
    if (pending && line > 0) {
      cr_line *l = add_line(c);
      if (!l) return;
      l->addr = addr, l->line = line;
      snprintf(l->file, sizeof l->file, "%s", file);
      pending = 0;
    }
  }
  for (size_t i = 0; i + 1 < c->ninsns; i++) { /* sizes: up to the next instruction of the same function */
    uint64_t gap = c->insns[i + 1].addr - c->insns[i].addr;
    if (c->insns[i + 1].addr > c->insns[i].addr && gap < c->insns[i].size) c->insns[i].size = (uint16_t)gap;
  }
  for (size_t i = 0; c->nlines && i < c->nfuncs; i++) { /* a function's lines end with it */
    cr_line *l = add_line(c);
    if (!l) return;
    l->addr = c->funcs[i].hi, l->end = 1;
  }
}

int cr_read_sass(cr_code *c, Elf *e, const void *bytes, size_t n) {
  read_sections(c, e);
  char exe[PATH_MAX], whyb[sizeof c->why] = "";
  char *text = NULL;
  if (cr_sass_find(exe, sizeof exe, whyb, sizeof whyb) == 0)
    text = run_nvdisasm(exe, bytes, n, whyb, sizeof whyb);
  int ran = text != NULL;
  if (ran) cr_sass_parse(c, text);
  free(text);
  if (!ran) why(c, "%s", whyb);
  if (!c->ninsns) why(c, "%s", "nvdisasm gave no instructions");
  if (!c->nlines)
    c->no_lines = !ran ? "no SASS (nvdisasm) for the cubin's line information"
                       : "the cubin has no line information (build it with nvcc -lineinfo or -G)";
  return c->ninsns ? 0 : -1;
}
