/* Device descriptions: the data files in share/hubprof/devices (NAME.device) that give a device's
 * per-pass limits and counter catalogue — found on a search path, parsed with errors naming file and
 * line — and the providers opened from them (hc_device_open, hc_limits_load, hc_devices_list). */
/* SPDX-License-Identifier: MIT */
#include "counters_internal.h"
#include "metrics.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEV_EXT ".device"
#define MAX_DIRS 16 /* as hc_data_dirs returns at most */

/* ---- the search path ---- */

/* $HUBPROF_DEVICES, then share/hubprof/devices beside the executable or the library, then the system's. */
static size_t device_dirs(char dirs[][PATH_MAX]) { return hc_data_dirs("HUBPROF_DEVICES", "devices", dirs); }

hc_status hc_devices_list(char ***paths, size_t *n) {
  return hc_data_files("HUBPROF_DEVICES", "devices", DEV_EXT, paths, n);
}

void hc_devices_free(char **paths) { hc_metrics_files_free(paths); }

/* Resolve a name (search path) or a path (it has a '/' or ends in .device) to a file. */
static hc_status find_file(const char *name_or_path, hc_desc *d) {
  char *out = d->path, *err = d->error;
  const size_t outlen = sizeof d->path, emax = sizeof d->error;
  size_t len = strlen(name_or_path), el = strlen(DEV_EXT);
  if (!len) {
    snprintf(err, emax, "empty device name");
    return HC_ERR_INVALID;
  }
  if (strchr(name_or_path, '/') || (len > el && strcmp(name_or_path + len - el, DEV_EXT) == 0)) {
    if (access(name_or_path, R_OK) != 0) {
      snprintf(err, emax, "%s: %s", name_or_path, strerror(errno));
      return errno == ENOENT ? HC_ERR_UNKNOWN : HC_ERR_IO;
    }
    snprintf(out, outlen, "%s", name_or_path);
    return HC_OK;
  }
  char dirs[MAX_DIRS][PATH_MAX];
  size_t nd = device_dirs(dirs);
  for (size_t i = 0; i < nd; i++) {
    snprintf(out, outlen, "%s/%s%s", dirs[i], name_or_path, DEV_EXT);
    if (access(out, R_OK) == 0) return HC_OK;
  }
  /* name the devices there are */
  char **paths = NULL;
  size_t n = 0;
  int w = snprintf(err, emax, "unknown device '%s'", name_or_path);
  if (hc_devices_list(&paths, &n) == HC_OK && n) {
    for (size_t i = 0; i < n && w > 0 && (size_t)w < emax; i++) {
      const char *b = strrchr(paths[i], '/') + 1;
      w += snprintf(err + w, emax - (size_t)w, "%s%.*s", i ? ", " : " (devices: ", (int)(strlen(b) - el), b);
    }
    if (w > 0 && (size_t)w < emax) snprintf(err + w, emax - (size_t)w, ")");
  } else if (w > 0 && (size_t)w < emax) {
    snprintf(err + w, emax - (size_t)w, " (no device descriptions found; set HUBPROF_DEVICES)");
  }
  hc_devices_free(paths);
  return HC_ERR_UNKNOWN;
}

/* ---- parsing ---- */

void hc_desc_free(hc_desc *d) {
  for (size_t i = 0; i < d->n; i++) {
    free(d->counters[i].name);
    free(d->counters[i].block);
    free(d->counters[i].unit);
    free(d->counters[i].description);
  }
  free(d->counters);
  d->counters = NULL;
  d->n = 0;
}

/* A word: letters, digits and "_-.:" (no ',' or ';', which the plan string uses). */
static int valid_word(const char *s, size_t max) {
  size_t n = 0;
  for (; s[n]; n++)
    if (!isalnum((unsigned char)s[n]) && !strchr("_-.:", s[n])) return 0;
  return n > 0 && n < max;
}

static char *next_word(char **p) {
  char *s = *p;
  while (*s == ' ' || *s == '\t')
    s++;
  if (!*s) {
    *p = s;
    return NULL;
  }
  char *w = s;
  while (*s && *s != ' ' && *s != '\t')
    s++;
  if (*s) *s++ = 0;
  *p = s;
  return w;
}

static char *rest_of_line(char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  size_t n = strlen(p);
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
    p[--n] = 0;
  return p;
}

/* A limit: a count up to 100000, or "unlimited" (HC_UNLIMITED for blocks, 0 for the total). */
static int parse_limit(const char *w, unsigned unlimited, unsigned *out) {
  if (strcmp(w, "unlimited") == 0) {
    *out = unlimited;
    return 0;
  }
  if (!*w || strlen(w) > 6) return -1;
  unsigned v = 0;
  for (const char *c = w; *c; c++) {
    if (*c < '0' || *c > '9') return -1;
    v = v * 10 + (unsigned)(*c - '0');
  }
  if (v > 100000) return -1;
  *out = v;
  return 0;
}

static const hc_block_limit *find_block(const hc_limits *l, const char *b);

static int parse_uint(const char **s, unsigned *out) {
  unsigned long v = 0;
  const char *c = *s;
  if (*c < '0' || *c > '9') return -1;
  for (; *c >= '0' && *c <= '9'; c++)
    if ((v = v * 10 + (unsigned long)(*c - '0')) > 1000000) return -1;
  *s = c;
  *out = (unsigned)v;
  return 0;
}

int hc_parse_range(const char *s, unsigned ninst, unsigned *first, unsigned *last, char *why, size_t wl) {
  if (strcmp(s, "*]") == 0) {
    *first = 0;
    *last = ninst - 1;
    return 0;
  }
  const char *c = s;
  if (parse_uint(&c, first)) goto bad;
  *last = *first;
  if (c[0] == '.' && c[1] == '.') {
    c += 2;
    if (parse_uint(&c, last)) goto bad;
  }
  if (strcmp(c, "]")) goto bad;
  if (*last < *first) {
    snprintf(why, wl, "the range runs backwards (%u..%u)", *first, *last);
    return -1;
  }
  if (*last >= ninst) {
    snprintf(why, wl, "instance %u is beyond the device, which has %u (0..%u)", *last, ninst, ninst - 1);
    return -1;
  }
  return 0;
bad:
  snprintf(why, wl, "an instance is N, FIRST..LAST or * between [ and ]");
  return -1;
}

/* A count of instances: 1..HC_MAX_INSTANCES. */
static int parse_count(const char *w, unsigned *out) {
  unsigned v;
  if (parse_limit(w, 0, &v) || v < 1 || v > HC_MAX_INSTANCES) return -1;
  *out = v;
  return 0;
}

/* Linear, over at most HC_DESC_COUNTERS_MAX counters (parse_file refuses more). */
static long find_counter(const hc_desc *d, const char *name) {
  for (size_t i = 0; i < d->n; i++)
    if (strcmp(d->counters[i].name, name) == 0) return (long)i;
  return -1;
}

static int add_counter(hc_desc *d, size_t *cap, const char *name, const char *block, const char *unit,
                       const char *descr, size_t line) {
  if (d->n == *cap) {
    size_t nc = *cap ? 2 * *cap : 64;
    hc_desc_counter *nv = realloc(d->counters, nc * sizeof *nv);
    if (!nv) return -1;
    d->counters = nv;
    *cap = nc;
  }
  hc_desc_counter *c = &d->counters[d->n];
  memset(c, 0, sizeof *c);
  c->name = strdup(name);
  c->block = strdup(block);
  c->unit = strdup(unit);
  c->description = strdup(descr);
  c->base = (long)d->n;
  c->accumulator = -1;
  c->line = line;
  d->n++;
  return !c->name || !c->block || !c->unit || !c->description ? -1 : 0;
}

#define FAIL(...)                                                                                            \
  do {                                                                                                       \
    snprintf(d->error, sizeof d->error, "%.700s:%zu: ", d->path, line);                                      \
    size_t used_ = strlen(d->error);                                                                         \
    snprintf(d->error + used_, sizeof d->error - used_, __VA_ARGS__);                                        \
    st = HC_ERR_PARSE;                                                                                       \
    goto out;                                                                                                \
  } while (0)

static hc_status parse_file(FILE *f, hc_desc *d) {
  char *err = d->error;
  const size_t emax = sizeof d->error;
  char buf[1100];
  size_t line = 0, cap = 0;
  hc_status st = HC_OK;
  int have_total = 0, have_provider = 0, have_device = 0, have_descr = 0;
  while (fgets(buf, sizeof buf, f)) {
    line++;
    size_t len = strlen(buf);
    if (len == sizeof buf - 1 && buf[len - 1] != '\n') FAIL("line longer than 1024 characters");
    if (len && buf[len - 1] == '\n') buf[--len] = 0;
    if (len && buf[len - 1] == '\r') buf[--len] = 0;
    if (memchr(buf, 0, len)) FAIL("NUL byte in the line");
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char *p = buf, *key = next_word(&p);
    if (!key) continue;
    if (d->n == HC_DESC_COUNTERS_MAX &&
        (strcmp(key, "counter") == 0 || strcmp(key, "sum") == 0 || strcmp(key, "accumulate") == 0))
      FAIL("more than %d counters, the limit of a description (docs/counters.md)", HC_DESC_COUNTERS_MAX);
    if (strcmp(key, "device") == 0) {
      char *w = next_word(&p);
      if (have_device) FAIL("'device' given twice");
      if (!w || !valid_word(w, sizeof d->lim.device)) FAIL("'device' needs one name (letters, digits, _-.:)");
      if (next_word(&p)) FAIL("'device' takes one name");
      snprintf(d->lim.device, sizeof d->lim.device, "%s", w);
      have_device = 1;
    } else if (strcmp(key, "description") == 0) {
      if (have_descr) FAIL("'description' given twice");
      snprintf(d->description, sizeof d->description, "%s", rest_of_line(p));
      have_descr = 1;
    } else if (strcmp(key, "provider") == 0) {
      char *w = next_word(&p);
      if (have_provider) FAIL("'provider' given twice");
      if (!w || !valid_word(w, sizeof d->provider) || next_word(&p)) FAIL("'provider' needs one name");
      snprintf(d->provider, sizeof d->provider, "%s", w);
      have_provider = 1;
    } else if (strcmp(key, "max-per-pass") == 0) {
      char *w = next_word(&p);
      if (have_total) FAIL("'max-per-pass' given twice");
      if (!w || parse_limit(w, 0, &d->lim.max_per_pass) || next_word(&p))
        FAIL("'max-per-pass' needs a count (0-100000) or 'unlimited'");
      have_total = 1;
    } else if (strcmp(key, "block") == 0) {
      char *name = next_word(&p), *lim = next_word(&p);
      if (!name || !valid_word(name, sizeof d->lim.blocks[0].block))
        FAIL("'block' needs a name (letters, digits, _-.:, at most 31) and a limit");
      for (size_t i = 0; i < d->lim.nblocks; i++)
        if (strcmp(d->lim.blocks[i].block, name) == 0) FAIL("block '%s' given twice", name);
      if (d->lim.nblocks == sizeof d->lim.blocks / sizeof d->lim.blocks[0])
        FAIL("too many blocks (at most %zu)", sizeof d->lim.blocks / sizeof d->lim.blocks[0]);
      hc_block_limit *b = &d->lim.blocks[d->lim.nblocks];
      if (!lim || parse_limit(lim, HC_UNLIMITED, &b->max))
        FAIL("block '%s' needs a limit: a count (1-100000) or 'unlimited'", name);
      if (b->max == 0)
        FAIL("block '%s' has a limit of 0: no counter of it could be measured (leave the block out)", name);
      char *kw = next_word(&p);
      b->instances = 1;
      if (kw) {
        char *cnt = next_word(&p);
        if (strcmp(kw, "instances") || !cnt || parse_count(cnt, &b->instances) || next_word(&p))
          FAIL("'block' takes a name, a limit and optionally 'instances N' (1-%u)", HC_MAX_INSTANCES);
      }
      snprintf(b->block, sizeof b->block, "%s", name);
      d->lim.nblocks++;
    } else if (strcmp(key, "counter") == 0) {
      char *name = next_word(&p), *block = next_word(&p), *unit = next_word(&p);
      if (!name || !block || !unit) FAIL("'counter' needs NAME BLOCK UNIT [DESCRIPTION]");
      if (!valid_word(name, 128)) FAIL("bad counter name '%s' (letters, digits, _-.:, at most 127)", name);
      if (!valid_word(unit, 32)) FAIL("bad unit '%s'", unit);
      size_t b = 0;
      while (b < d->lim.nblocks && strcmp(d->lim.blocks[b].block, block))
        b++;
      if (b == d->lim.nblocks)
        FAIL("counter '%s' names block '%s', which no 'block' line above declares", name, block);
      long dup = find_counter(d, name);
      if (dup >= 0 && strcmp(d->counters[dup].block, block))
        FAIL("counter '%s' in block '%s' is already in block '%s' (line %zu): a counter belongs to one block",
             name, block, d->counters[dup].block, d->counters[dup].line);
      if (dup >= 0) FAIL("counter '%s' given twice (line %zu)", name, d->counters[dup].line);
      if (add_counter(d, &cap, name, block, unit, rest_of_line(p), line)) {
        st = HC_ERR_NOMEM;
        goto out;
      }
    } else if (strcmp(key, "sum") == 0 || strcmp(key, "accumulate") == 0) {
      int sum = key[0] == 's';
      char *name = next_word(&p), *of = next_word(&p);
      if (!name || !of)
        FAIL(sum ? "'sum' needs NAME BASE[RANGE] [DESCRIPTION]"
                 : "'accumulate' needs NAME LEVEL [DESCRIPTION]");
      if (!valid_word(name, 128)) FAIL("bad counter name '%s' (letters, digits, _-.:, at most 127)", name);
      long dup = find_counter(d, name);
      if (dup >= 0) FAIL("counter '%s' given twice (line %zu)", name, d->counters[dup].line);
      unsigned first = 0, last = 0;
      char *br = strchr(of, '[');
      if (br) {
        if (!sum) FAIL("'accumulate' takes a LEVEL counter, not a channel range");
        *br = 0;
      } else if (sum) {
        FAIL("'sum' needs the instances it adds up: %s[*] or %s[FIRST..LAST]", of, of);
      }
      long b = find_counter(d, of);
      if (b < 0 || d->counters[b].kind != HC_DC_PLAIN)
        FAIL("'%s' names '%s', which no 'counter' line above declares", key, of);
      const hc_block_limit *bl = find_block(&d->lim, d->counters[b].block);
      if (sum) {
        unsigned ninst = bl->instances > 1 ? bl->instances : 1;
        char why[160];
        if (hc_parse_range(br + 1, ninst, &first, &last, why, sizeof why))
          FAIL("'sum %s': %s[%s: %s", name, of, br + 1, why);
      } else if (d->counters[b].accumulator < 0) {
        FAIL("'accumulate %s' names '%s', which no 'level' line above declares a LEVEL counter", name, of);
      }
      if (add_counter(d, &cap, name, d->counters[b].block, sum ? d->counters[b].unit : "count",
                      rest_of_line(p), line)) {
        st = HC_ERR_NOMEM;
        goto out;
      }
      hc_desc_counter *c = &d->counters[d->n - 1];
      c->kind = sum ? HC_DC_SUM : HC_DC_ACCUMULATE;
      c->base = b;
      c->first = first;
      c->last = last;
    } else if (strcmp(key, "level") == 0) {
      char *name = next_word(&p), *acc = next_word(&p);
      if (!name) FAIL("'level' needs a LEVEL counter and its accumulator: level NAME ACCUMULATOR");
      long l = find_counter(d, name);
      if (l < 0 || d->counters[l].kind != HC_DC_PLAIN)
        FAIL("'level' names '%s', which no 'counter' line above declares", name);
      if (!acc)
        FAIL("LEVEL counter '%s' has no accumulator: level %s ACCUMULATOR (the counter that sums it)", name,
             name);
      if (next_word(&p)) FAIL("'level' takes a LEVEL counter and its accumulator");
      long a = find_counter(d, acc);
      if (a < 0 || d->counters[a].kind != HC_DC_PLAIN)
        FAIL("'level %s' names accumulator '%s', which no 'counter' line above declares", name, acc);
      if (a == l) FAIL("'level %s' names itself as its accumulator", name);
      if (d->counters[l].accumulator >= 0) FAIL("'level %s' given twice", name);
      if (d->counters[l].is_accumulator || d->counters[a].accumulator >= 0)
        FAIL("'level %s %s': a counter cannot be both a LEVEL counter and an accumulator", name, acc);
      d->counters[l].accumulator = a;
      d->counters[a].is_accumulator = 1;
    } else if (strcmp(key, "alone") == 0) {
      char *name = next_word(&p);
      long c = name ? find_counter(d, name) : -1;
      if (!name || next_word(&p)) FAIL("'alone' takes one counter");
      if (c < 0) FAIL("'alone' names '%s', which no counter line above declares", name);
      d->counters[c].alone = 1;
    } else if (strcmp(key, "variant") == 0) {
      char *name = next_word(&p), *block = next_word(&p), *cnt = next_word(&p);
      unsigned n = 0;
      if (!name || !block || !cnt || !valid_word(name, 32) || next_word(&p))
        FAIL("'variant' needs NAME BLOCK INSTANCES (a product with another number of block instances)");
      const hc_block_limit *bl = find_block(&d->lim, block);
      if (!bl) FAIL("variant '%s' names block '%s', which no 'block' line above declares", name, block);
      if (parse_count(cnt, &n))
        FAIL("variant '%s': instances of %s must be 1-%u", name, block, HC_MAX_INSTANCES);
      if (d->variant[0] && strcmp(d->variant, name) == 0) {
        ((hc_block_limit *)bl)->instances = n;
        d->variant_found = 1;
      }
      d->variant_known = 1;
    } else {
      FAIL("unknown keyword '%s' (device, description, provider, max-per-pass, block, counter, sum, "
           "level, accumulate, alone, variant)",
           key);
    }
  }
  if (ferror(f)) {
    snprintf(err, emax, "%.700s: %s", d->path, strerror(errno));
    st = HC_ERR_IO;
    goto out;
  }
  for (size_t i = 0; i < d->n; i++) /* unit 'level' promises a 'level' line */
    if (d->counters[i].kind == HC_DC_PLAIN && strcmp(d->counters[i].unit, "level") == 0 &&
        d->counters[i].accumulator < 0) {
      line = d->counters[i].line;
      FAIL("LEVEL counter '%s' (unit 'level') has no accumulator: add 'level %s ACCUMULATOR'",
           d->counters[i].name, d->counters[i].name);
    }
  if (d->variant[0] && !d->variant_found) {
    snprintf(err, emax, "%.700s: no variant '%s'%s", d->path, d->variant,
             d->variant_known ? " (see its 'variant' lines)" : " (it declares no 'variant' lines)");
    st = HC_ERR_UNKNOWN;
    goto out;
  }
  if (have_provider && d->n) {
    snprintf(err, emax,
             "%.700s: 'counter' lines and 'provider' exclude each other (the provider lists its counters)",
             d->path);
    st = HC_ERR_PARSE;
  } else if (!have_provider && !d->n) {
    snprintf(err, emax, "%.700s: describes no counters ('counter' lines) and names no 'provider'", d->path);
    st = HC_ERR_PARSE;
  }
out:
  return st;
}
#undef FAIL

hc_status hc_desc_load(const char *name_or_path, hc_desc *d) {
  memset(d, 0, sizeof *d);
  if (!name_or_path) {
    snprintf(d->error, sizeof d->error, "no device name");
    return HC_ERR_INVALID;
  }
  char base[512];
  const char *colon = strrchr(name_or_path, ':');
  if (colon && !strchr(colon, '/') && colon[1] && (size_t)(colon - name_or_path) < sizeof base) {
    /* NAME:VARIANT, a product of the device (gfx942:mi300a) */
    memcpy(base, name_or_path, (size_t)(colon - name_or_path));
    base[colon - name_or_path] = 0;
    snprintf(d->variant, sizeof d->variant, "%s", colon + 1);
    name_or_path = base;
  }
  hc_status st = find_file(name_or_path, d);
  if (st != HC_OK) return st;
  FILE *f = fopen(d->path, "r");
  if (!f) {
    snprintf(d->error, sizeof d->error, "%.700s: %s", d->path, strerror(errno));
    return HC_ERR_IO;
  }
  struct stat sb; /* read whole into the description: bounded before reading */
  if (fstat(fileno(f), &sb) == 0 && (!S_ISREG(sb.st_mode) || (uintmax_t)sb.st_size > HC_DESC_FILE_MAX)) {
    snprintf(d->error, sizeof d->error, "%.700s: %s", d->path,
             S_ISREG(sb.st_mode)
                 ? "larger than 1048576 bytes, the limit of a device description (docs/counters.md)"
                 : "not a regular file");
    fclose(f);
    return HC_ERR_PARSE;
  }
  st = parse_file(f, d);
  fclose(f);
  if (st == HC_OK && !d->lim.device[0]) { /* the name defaults to the file's, less .device */
    const char *b = strrchr(d->path, '/');
    b = b ? b + 1 : d->path;
    size_t len = strlen(b), el = strlen(DEV_EXT);
    if (len > el && strcmp(b + len - el, DEV_EXT) == 0) len -= el;
    if (len >= sizeof d->lim.device) len = sizeof d->lim.device - 1;
    memcpy(d->lim.device, b, len);
    d->lim.device[len] = 0;
  }
  if (st != HC_OK) hc_desc_free(d);
  return st;
}

hc_status hc_limits_load(const char *name_or_path, hc_limits *out) {
  if (!out) return HC_ERR_INVALID;
  memset(out, 0, sizeof *out);
  hc_desc *d = malloc(sizeof *d);
  if (!d) {
    snprintf(out->error, sizeof out->error, "out of memory");
    return HC_ERR_NOMEM;
  }
  hc_status st = hc_desc_load(name_or_path, d);
  if (st == HC_OK)
    *out = d->lim;
  else
    snprintf(out->error, sizeof out->error, "%s", d->error);
  hc_desc_free(d);
  free(d);
  return st;
}

static const hc_block_limit *find_block(const hc_limits *l, const char *b) {
  for (size_t i = 0; i < l->nblocks; i++)
    if (strcmp(l->blocks[i].block, b) == 0) return &l->blocks[i];
  return NULL;
}

const char *hc_limits_error(const hc_limits *l) { return l ? l->error : "out of memory"; }

/* hc_device_open's failure: a provider that only explains it (NULL when out of memory). */
static hc_provider *failed_provider(const char *msg) {
  hc_provider *p = hc_provider_alloc(HC_KIND_CATALOGUE, "catalogue");
  if (p) snprintf(p->error, sizeof p->error, "%s", msg[0] ? msg : "out of memory");
  return p;
}

/* An NVIDIA chip's name: two letters, then a digit ("GH100", "AD102", "GV11B"). */
static int looks_like_chip(const char *s) {
  return isalpha((unsigned char)s[0]) && isalpha((unsigned char)s[1]) && isdigit((unsigned char)s[2]);
}

hc_status hc_device_open(const char *name_or_path, hc_provider **out) {
  if (!out) return HC_ERR_INVALID;
  *out = NULL;
  hc_desc *d = malloc(sizeof *d);
  if (!d) return HC_ERR_NOMEM;
  hc_status st = hc_desc_load(name_or_path, d);
  if (st == HC_ERR_UNKNOWN && !strchr(name_or_path, '/') && !strstr(name_or_path, DEV_EXT)) {
    /* no description of that name: an NVIDIA chip CUPTI describes (cupti_host.c)? */
    hc_provider *c;
    hc_status cs = hc_cupti_device_open(name_or_path, &c);
    if (cs == HC_OK || cs == HC_ERR_NOMEM || looks_like_chip(name_or_path)) {
      if (c && cs != HC_OK && cs != HC_ERR_NOMEM) { /* say both: not a description, nor a CUPTI chip here */
        char msg[HC_ERROR_MAX];
        snprintf(msg, sizeof msg, "%.400s; for NVIDIA chips: %.600s", d->error, c->error);
        snprintf(c->error, sizeof c->error, "%s", msg);
      }
      *out = c;
      free(d);
      return cs == HC_ERR_UNAVAILABLE ? HC_ERR_UNKNOWN : cs;
    }
    hc_provider_close(c);
  }
  if (st != HC_OK) {
    *out = failed_provider(d->error);
    free(d);
    return st;
  }
  char *err = d->error; /* the message of a failure below */
  const size_t emax = sizeof d->error;
  hc_provider *p = NULL;
  if (d->provider[0]) {
    st = hc_provider_open(d->provider, &p);
    if (st == HC_ERR_UNKNOWN) {
      snprintf(err, emax, "%.700s: unknown provider '%s' (providers: perf)", d->path, d->provider);
      st = HC_ERR_PARSE;
    } else if (st != HC_OK) {
      snprintf(err, emax, "cannot open provider '%s': %s", d->provider, hc_status_str(st));
    }
    /* the description must limit every block the provider's counters live in */
    for (size_t i = 0; st == HC_OK && i < p->n; i++) {
      if (!find_block(&d->lim, p->counters[i].block)) {
        snprintf(err, emax,
                 "%.700s: provider '%s' has counters in block '%s', which no 'block' line declares", d->path,
                 d->provider, p->counters[i].block);
        st = HC_ERR_PARSE;
      }
    }
  } else {
    p = hc_provider_alloc(HC_KIND_CATALOGUE, "catalogue");
    if (!p || !(p->counters = calloc(d->n, sizeof *p->counters))) st = HC_ERR_NOMEM;
    char reason[160];
    snprintf(reason, sizeof reason, "no provider measures %s on this machine (description for planning only)",
             d->lim.device);
    const char *r = st == HC_OK ? hc_provider_own(p, reason) : NULL;
    if (!r) st = HC_ERR_NOMEM;
    for (size_t i = 0; st == HC_OK && i < d->n; i++) {
      hc_counter *c = &p->counters[i];
      c->name = hc_provider_own(p, d->counters[i].name);
      c->block = hc_provider_own(p, d->counters[i].block);
      c->unit = hc_provider_own(p, d->counters[i].unit);
      c->description = hc_provider_own(p, d->counters[i].description);
      c->available = 0;
      c->reason = r;
      p->n++;
      if (!c->name || !c->block || !c->unit || !c->description) st = HC_ERR_NOMEM;
    }
  }
  if (st == HC_OK && !d->provider[0] && !(p->rules = calloc(d->n ? d->n : 1, sizeof *p->rules)))
    st = HC_ERR_NOMEM;
  for (size_t i = 0; st == HC_OK && !d->provider[0] && i < d->n; i++) { /* the rules, without strings */
    p->rules[i] = d->counters[i];
    p->rules[i].name = p->rules[i].block = p->rules[i].unit = p->rules[i].description = NULL;
  }
  if (st == HC_OK) {
    p->has_limits = 1;
    p->limits = d->lim;
    snprintf(p->description, sizeof p->description, "%s", d->description);
    *out = p;
  } else {
    hc_provider_close(p);
    *out = failed_provider(err);
  }
  hc_desc_free(d);
  free(d);
  return st;
}

/* ---- what one counter name takes ---- */

hc_status hc_provider_need(hc_provider *p, const char *name, hc_counter_need *o) {
  if (!p || !name || !o) return HC_ERR_INVALID;
  char *err = p->error;
  const size_t emax = sizeof p->error;
  err[0] = 0;
  memset(o, 0, sizeof *o);
  const char *br = strchr(name, '[');
  char base[128];
  size_t bl = br ? (size_t)(br - name) : strlen(name);
  if (bl >= sizeof base) return HC_ERR_UNKNOWN;
  memcpy(base, name, bl);
  base[bl] = 0;
  long i = hc_provider_find(p, base);
  if (i < 0) return HC_ERR_UNKNOWN;
  const hc_desc_counter *r = p->rules ? &p->rules[i] : NULL;
  const hc_counter *c = &p->counters[i];
  const hc_block_limit *b = p->has_limits ? find_block(&p->limits, c->block) : NULL;
  unsigned ninst = b && b->instances > 1 ? b->instances : 1;
  const char *dev = p->has_limits ? p->limits.device : p->name;
  o->block = c->block;
  o->base = c->name;
  o->last = ninst - 1;
  if (r && r->kind == HC_DC_SUM) {
    o->base = p->counters[r->base].name;
    o->first = r->first;
    o->last = r->last;
  } else if (r && r->kind == HC_DC_ACCUMULATE) {
    r = &p->rules[r->base];
    o->base = p->counters[r - p->rules].name;
  }
  if (br) {
    char why[160];
    if (r && r->kind != HC_DC_PLAIN) {
      snprintf(err, emax, "counter '%s': '%s' is derived, only a hardware counter takes instances", name,
               base);
      return HC_ERR_INVALID;
    }
    if (ninst == 1) {
      snprintf(err, emax, "counter '%s': block '%s' has one instance on %s (no [N] channels)", name, c->block,
               dev);
      return HC_ERR_IMPOSSIBLE;
    }
    if (hc_parse_range(br + 1, ninst, &o->first, &o->last, why, sizeof why)) {
      snprintf(err, emax, "counter '%s': %s", name, why);
      return strstr(why, "beyond") ? HC_ERR_IMPOSSIBLE : HC_ERR_INVALID;
    }
  }
  if (r) {
    o->accumulator = r->accumulator >= 0 ? p->counters[r->accumulator].name : NULL;
    o->accumulated = o->accumulator;
    for (size_t k = 0; o->accumulator && k < p->n; k++)
      if (p->rules[k].kind == HC_DC_ACCUMULATE && &p->rules[p->rules[k].base] == r) {
        o->accumulated = p->counters[k].name;
        break;
      }
    o->is_accumulator = r->is_accumulator;
    o->alone = r->alone;
  }
  return HC_OK;
}

const char *hc_provider_block_of(const char *counter, void *provider) {
  hc_counter_need nd;
  return hc_provider_need(provider, counter, &nd) == HC_OK ? nd.block : NULL;
}
