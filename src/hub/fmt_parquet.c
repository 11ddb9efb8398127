/* The "parquet" format: a store is a dataset folder with one sub-folder per table
 * (<table>/part-00000.parquet, part-00001, … when large; the Hive/Spark layout) and a manifest
 * (_hubprof.json) naming the files with their rows and bytes; store version 1 (flat <table>.parquet files) is
 * still read, and so is a folder of table sub-folders without a manifest (a dataset written back by Spark,
 * pandas, DuckDB). Created in a temporary directory that is renamed into place at commit. Readers check the
 * manifest and every file's footer at open; a damaged file is recorded as damage and its table reads without
 * it. Sections: tuning · directory helpers · layout · create / write / commit / abort · open / read · ops. */
/* SPDX-License-Identifier: MIT */
#include "parquet_fmt.h"
#include "../common/hu_dir.h"
#include "parquet_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_io.h"
#include "../common/hu_map.h"
#include "../common/hu_search.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- tuning ---- */
static pq_limits g_limits = {
    .rg_rows = 1u << 20,
    .rg_bytes = 64u << 20,
    .file_rgs = 64,
    .file_bytes = 512u << 20,
    .zstd_level = 3,
};

hp_status hp_parquet_set_defaults(uint64_t rg_rows, uint64_t rg_bytes, uint32_t file_rgs, uint64_t file_bytes,
                                  int zstd_level) {
  if (rg_rows > ((uint64_t)1 << 31) || (zstd_level && (zstd_level < 1 || zstd_level > 19)))
    return HP_ERR_INVALID;
  if (rg_rows) g_limits.rg_rows = rg_rows;
  if (rg_bytes) g_limits.rg_bytes = rg_bytes;
  if (file_rgs) g_limits.file_rgs = file_rgs;
  if (file_bytes) g_limits.file_bytes = file_bytes;
  if (zstd_level) g_limits.zstd_level = zstd_level;
  return HP_OK;
}

/* ---- state ---- */
typedef struct pq_rtable {
  pq_rfile *files;
  size_t nfiles;
  uint64_t rows; /* rows of the readable files */
} pq_rtable;

/* Partitioning of the streamed tables: a run of consecutive dispatch ids of one partition. */
typedef struct pq_drun {
  uint64_t first, last; /* dispatch ids */
  uint64_t node, proc;  /* the partition's node and process ids (0: unknown) */
} pq_drun;

typedef struct pq_part {
  unsigned keys;      /* HP_PARTITION_NODE | HP_PARTITION_PROCESS, 0 = not partitioned */
  hu_idmap proc_node; /* process id -> its node id */
  pq_drun *runs;      /* dispatch ids -> partition, in writing order */
  size_t nruns, capruns, hit;
  int unsorted; /* a dispatch id came below an earlier one: look runs up from the newest */
} pq_part;

typedef struct pq_store {
  /* writing */
  char *tmp;                      /* temporary directory being filled */
  char *target;                   /* s->path without trailing slashes: where the store goes */
  pq_twriter *tw[HP_TABLE_COUNT]; /* table writers, made on first use */
  pq_limits lim;
  pq_part part;
  /* appending (hp_parquet_set_append): the store at target keeps its streamed tables' files */
  int append;
  hu_json *old;                         /* its manifest */
  uint64_t skip[HP_TABLE_COUNT];        /* its rows, given again as the merge's first input: not written */
  uint64_t skip_max_id[HP_TABLE_COUNT]; /* the largest id among them */
  unsigned first_file[HP_TABLE_COUNT];  /* number of the first new part file */
  /* reading */
  pq_rtable tab[HP_TABLE_COUNT];
} pq_store;

/* ---- directory helpers ---- */
static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* A file path the manifest may use: relative, components not hidden, not "..", at most 8 deep. */
static int valid_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= 1024) return 0;
  int parts = 0;
  for (const char *c = s; *c;) {
    const char *e = strchr(c, '/');
    size_t len = e ? (size_t)(e - c) : strlen(c);
    if (len == 0 || len > 255 || c[0] == '.' || ++parts > 8) return 0;
    c += len + (e != NULL);
    if (e && !*c) return 0; /* a trailing slash */
  }
  return 1;
}

static int has_manifest(const char *dir) {
  char *p = join(dir, PQ_MANIFEST);
  if (!p) return 0;
  int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); /* never blocks on a FIFO */
  free(p);
  if (fd < 0) return 0;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return 0;
  }
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  return strstr(buf, "\"" PQ_MAGIC "\"") != NULL;
}

/* A schema version as the manifest must give it: digits, with single dots between groups ("1", "1.2"). */
static int schema_version_ok(const char *v) {
  size_t digits = 0, n = 0;
  for (; *v; v++, n++) {
    if (*v >= '0' && *v <= '9')
      digits++;
    else if (*v == '.' && digits)
      digits = 0;
    else
      return 0;
    if (n > 32) return 0;
  }
  return digits > 0;
}

/* ---- layout ---- */
static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

typedef struct name_list {
  char **v;
  size_t n, cap;
} name_list;

static int list_add(name_list *l, const char *rel, const char *name) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? 2 * l->cap : 8;
    char **v = realloc(l->v, nc * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = nc;
  }
  char *p = join(rel, name);
  if (!p) return -1;
  l->v[l->n++] = p;
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Collect the .parquet files below root/rel (rel relative to the store's root), sorted; key=value folders are
 * Hive partitions and are walked; names starting with '_' or '.' are skipped, as every dataset reader does.
 * Errors go on the store (hp_set_error), naming the path. */
static hp_status find_files(hp_store *s, const char *rel, int depth, name_list *out) {
  char *dir = join(s->path, rel);
  if (!dir) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  struct dirent **ents = NULL;
  int n = scandir(dir, &ents, NULL, by_name);
  if (n < 0) {
    int e = errno;
    free(dir);
    return hp_set_error(s, HP_ERR_IO, "%s: cannot list: %s", rel, strerror(e));
  }
  hp_status st = HP_OK;
  for (int i = 0; i < n; i++) {
    const char *nm = ents[i]->d_name;
    if (st != HP_OK || nm[0] == '.' || nm[0] == '_') continue;
    char *p = join(dir, nm);
    struct stat sb;
    if (!p) {
      st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    } else if (stat(p, &sb) != 0) {
      st = hp_set_error(s, HP_ERR_IO, "%s/%s: %s", rel, nm, strerror(errno));
    } else if (S_ISDIR(sb.st_mode) && strchr(nm, '=') && depth > 0) {
      char *sub = join(rel, nm);
      st = sub ? find_files(s, sub, depth - 1, out) : hp_set_error(s, HP_ERR_NOMEM, "out of memory");
      free(sub);
    } else if (S_ISREG(sb.st_mode) && ends_with(nm, ".parquet")) {
      if (list_add(out, rel, nm)) st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    } else {
      st = hp_set_error(
          s, HP_ERR_FORMAT,
          "%s/%s: %s in a table's folder (only .parquet files and key=value folders belong there)", rel, nm,
          S_ISDIR(sb.st_mode) ? "a folder" : "a foreign file");
    }
    free(p);
  }
  for (int i = 0; i < n; i++)
    free(ents[i]);
  free(ents);
  free(dir);
  return st;
}

hp_status pq_layout_find(hp_store *s, const char *table, char ***names, size_t *n) {
  *names = NULL;
  *n = 0;
  char *dir = join(s->path, table);
  if (!dir) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  struct stat sb;
  int is_dir = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
  free(dir);
  if (!is_dir) return HP_OK;
  name_list l = {0};
  hp_status st = find_files(s, table, 8, &l);
  if (st != HP_OK) {
    for (size_t i = 0; i < l.n; i++)
      free(l.v[i]);
    free(l.v);
    return st;
  }
  *names = l.v;
  *n = l.n;
  return HP_OK;
}

/* A dataset without a manifest: a folder with at least one sub-folder named for a table of the model. */
static int is_bare_dataset(const char *dir) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    char *p = join(dir, hp_table_describe((hp_table)t)->name);
    struct stat sb;
    int ok = p && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
    free(p);
    if (ok) return 1;
  }
  return 0;
}

/* ---- probe ---- */
static int pq_probe(const char *path, const unsigned char *head, size_t n) {
  (void)head;
  if (n) return 0; /* a regular file: never a store of this format */
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0;
  return has_manifest(path) || is_bare_dataset(path);
}

/* ---- create / write / commit / abort ---- */
static void free_writers(pq_store *p) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    pq_twriter_free(p->tw[t]);
    p->tw[t] = NULL;
  }
}

static hp_status pq_create(hp_store *s) {
  pq_store *p = calloc(1, sizeof *p);
  if (!p) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  p->lim = g_limits;
  p->target = strdup(s->path);
  size_t tl = p->target ? strlen(p->target) : 0;
  while (tl > 1 && p->target[tl - 1] == '/') /* "out.parquet/" names the directory out.parquet */
    p->target[--tl] = 0;
  p->tmp = p->target ? hp_temp_path(p->target) : NULL;
  if (!p->tmp) {
    free(p->target);
    free(p);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  if (mkdir(p->tmp, 0777) != 0) {
    hp_status st = hp_set_error(s, HP_ERR_IO, "cannot create directory %s: %s", p->tmp, strerror(errno));
    free(p->tmp);
    free(p->target);
    free(p);
    return st;
  }
  s->schema_version = strdup(PQ_SCHEMA_VERSION);
  s->impl = p;
  return HP_OK;
}

/* ---- partitions ---- */
hp_status hp_parquet_set_partition(hp_store *s, unsigned keys) {
  if (!s || s->mode == HP_READ || s->ops != &hp_fmt_parquet || !s->impl ||
      (keys & ~(unsigned)(HP_PARTITION_NODE | HP_PARTITION_PROCESS)))
    return HP_ERR_INVALID;
  pq_store *p = s->impl;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    if (p->tw[t] && hp_table_streamed((hp_table)t))
      return hp_set_error(s, HP_ERR_INVALID, "partitioning must be chosen before rows are written");
  p->part.keys = keys;
  return HP_OK;
}

static hp_status add_run(hp_store *s, pq_part *pp, uint64_t id, uint64_t node, uint64_t proc) {
  pq_drun *last = pp->nruns ? &pp->runs[pp->nruns - 1] : NULL;
  if (last && id > last->last && last->node == node && last->proc == proc) {
    last->last = id;
    return HP_OK;
  }
  if (last && id <= last->last) pp->unsorted = 1;
  if (pp->nruns == pp->capruns) {
    size_t nc = pp->capruns ? 2 * pp->capruns : 64;
    pq_drun *r = realloc(pp->runs, nc * sizeof *r);
    if (!r) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    pp->runs = r;
    pp->capruns = nc;
  }
  pp->runs[pp->nruns++] = (pq_drun){id, id, node, proc};
  return HP_OK;
}

/* The run holding dispatch id, NULL when none does. */
static const pq_drun *find_run(pq_part *pp, uint64_t id) {
  if (!pp->nruns) return NULL;
  const pq_drun *h = &pp->runs[pp->hit < pp->nruns ? pp->hit : 0];
  if (id >= h->first && id <= h->last) return h;
  if (pp->unsorted) {
    for (size_t i = pp->nruns; i-- > 0;)
      if (id >= pp->runs[i].first && id <= pp->runs[i].last) return &pp->runs[pp->hit = i];
    return NULL;
  }
  size_t lo;
  HU_PARTITION(lo, pp->nruns, mid, pp->runs[mid].last < id);
  if (lo < pp->nruns && id >= pp->runs[lo].first) return &pp->runs[pp->hit = lo];
  return NULL;
}

/* The partition folder of a row of t (a streamed table), in buf; the process table's rows only teach which
 * node a process is on. */
static hp_status partition_of(hp_store *s, pq_part *pp, hp_table t, const void *row, char *buf, size_t n) {
  uint64_t node = 0, proc = 0;
  switch (t) {
  case HP_TABLE_DISPATCH: {
    const hp_dispatch *d = row;
    proc = d->process_id;
    hu_idmap_get(&pp->proc_node, proc, &node);
    hp_status st = add_run(s, pp, d->id, node, proc);
    if (st != HP_OK) return st;
    break;
  }
  case HP_TABLE_REGION: {
    const hp_region *r = row;
    proc = r->process_id;
    hu_idmap_get(&pp->proc_node, proc, &node);
    break;
  }
  case HP_TABLE_COUNTER_VALUE:
  case HP_TABLE_PC_SAMPLE:
  case HP_TABLE_COUNTER_SAMPLE: {
    uint64_t did = t == HP_TABLE_COUNTER_VALUE ? ((const hp_counter_value *)row)->dispatch_id
                   : t == HP_TABLE_PC_SAMPLE   ? ((const hp_pc_sample *)row)->dispatch_id
                                               : ((const hp_counter_sample *)row)->dispatch_id;
    const pq_drun *r = find_run(pp, did);
    if (r) {
      node = r->node;
      proc = r->proc;
    }
    break;
  }
  default: buf[0] = 0; return HP_OK; /* code_blob: not per process */
  }
  if (pp->keys == (HP_PARTITION_NODE | HP_PARTITION_PROCESS))
    snprintf(buf, n, "node=%llu/process=%llu", (unsigned long long)node, (unsigned long long)proc);
  else if (pp->keys == HP_PARTITION_NODE)
    snprintf(buf, n, "node=%llu", (unsigned long long)node);
  else
    snprintf(buf, n, "process=%llu", (unsigned long long)proc);
  return HP_OK;
}

/* An append's rows of a streamed table: the store's own (the first ones) are skipped; new rows must have ids
 * above them, or they would collide. 1 = skip the row, 0 = write it, -1 = failed. */
static int append_skip(hp_store *s, pq_store *p, hp_table t, const void *row) {
  const hp_table_desc *d = hp_table_describe(t);
  int has_id = strcmp(d->columns[0].name, "id") == 0;
  uint64_t id = 0;
  if (has_id) memcpy(&id, (const char *)row + d->columns[0].offset, sizeof id);
  if (p->skip[t]) {
    p->skip[t]--;
    if (id > p->skip_max_id[t]) p->skip_max_id[t] = id;
    return 1;
  }
  if (has_id && id <= p->skip_max_id[t]) {
    hp_set_error(s, HP_ERR_INVALID,
                 "%s: new row id %llu is not above the store's own (%llu): the store's ids are not in merge "
                 "order; merge everything into a new store instead",
                 d->name, (unsigned long long)id, (unsigned long long)p->skip_max_id[t]);
    return -1;
  }
  return 0;
}

static hp_status pq_write(hp_store *s, hp_table t, const void *row) {
  pq_store *p = s->impl;
  if (p->append && hp_table_streamed(t)) {
    int k = append_skip(s, p, t, row);
    if (k) return k > 0 ? HP_OK : s->first_error;
  }
  if (!p->tw[t]) {
    hp_status st = pq_twriter_new(s, p->tmp, t, &p->lim, &p->tw[t]);
    if (st != HP_OK) return st;
    if (p->append) pq_twriter_first_file(p->tw[t], p->first_file[t]);
  }
  if (p->part.keys) {
    if (t == HP_TABLE_PROCESS) {
      const hp_process *r = row;
      if (r->id && hu_idmap_put(&p->part.proc_node, r->id, r->node_id))
        return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    } else if (hp_table_streamed(t)) {
      char part[96];
      hp_status st = partition_of(s, &p->part, t, row, part, sizeof part);
      if (st == HP_OK) st = pq_twriter_partition(p->tw[t], part);
      if (st != HP_OK) return st;
    }
  }
  return pq_twriter_add(p->tw[t], row);
}

/* The files of table t in an append's old manifest (its streamed tables keep them), or NULL. */
static const hu_json *old_files(const pq_store *p, hp_table t) {
  if (!p->append || !hp_table_streamed(t)) return NULL;
  const hu_json *tables = hu_json_get(p->old, "tables");
  for (size_t i = 0; tables && tables->type == HU_JSON_ARR && i < tables->n; i++) {
    const hu_json *name = hu_json_get(&tables->kid[i], "name"), *f = hu_json_get(&tables->kid[i], "files");
    if (name && name->type == HU_JSON_STR && hp_table_from_name(name->s) == t && f && f->type == HU_JSON_ARR)
      return f;
  }
  return NULL;
}

static hp_status write_manifest(hp_store *s, pq_store *p, const pq_file_entry *const files[],
                                const size_t nfiles[]) {
  hu_buf b = {0};
  hu_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"schema_version\": \"%s\",\n", PQ_MAGIC,
                PQ_STORE_VERSION, PQ_SCHEMA_VERSION);
  hu_buf_printf(&b, "  \"created_by\": \"hubprof %s\",\n  \"tables\": [", hp_version());
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    uint64_t rows = 0;
    const hu_json *old = old_files(p, (hp_table)t); /* an append: the files the store keeps come first */
    size_t nold = old ? old->n : 0;
    for (size_t i = 0; i < nold; i++) {
      const hu_json *r = hu_json_get(&old->kid[i], "rows");
      rows += r ? r->u : 0;
    }
    for (size_t i = 0; i < nfiles[t]; i++)
      rows += files[t][i].rows;
    hu_buf_printf(&b, "%s\n    {\"name\": ", t ? "," : "");
    hu_json_put_str(&b, hp_table_describe((hp_table)t)->name);
    hu_buf_printf(&b, ", \"rows\": %llu, \"files\": [", (unsigned long long)rows);
    for (size_t i = 0; i < nold; i++) {
      const hu_json *f = &old->kid[i], *path = hu_json_get(f, "path"), *r = hu_json_get(f, "rows"),
                    *by = hu_json_get(f, "bytes"), *crc = hu_json_get(f, "footer_crc32c");
      hu_buf_printf(&b, "%s\n      {\"path\": ", i ? "," : "");
      hu_json_put_str(&b, path && path->type == HU_JSON_STR ? path->s : "");
      hu_buf_printf(&b, ", \"rows\": %llu", (unsigned long long)(r ? r->u : 0));
      if (by) hu_buf_printf(&b, ", \"bytes\": %llu", (unsigned long long)by->u);
      if (crc) hu_buf_printf(&b, ", \"footer_crc32c\": %llu", (unsigned long long)crc->u);
      hu_buf_printf(&b, "}");
    }
    for (size_t i = 0; i < nfiles[t]; i++) {
      hu_buf_printf(&b, "%s\n      {\"path\": ", i || nold ? "," : "");
      hu_json_put_str(&b, files[t][i].name);
      hu_buf_printf(&b, ", \"rows\": %llu, \"bytes\": %llu, \"footer_crc32c\": %lu}",
                    (unsigned long long)files[t][i].rows, (unsigned long long)files[t][i].bytes,
                    (unsigned long)files[t][i].footer_crc);
    }
    hu_buf_printf(&b, "]}");
  }
  hu_buf_printf(&b, "\n  ]\n}\n");
  if (b.oom) {
    hu_buf_free(&b);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  char *path = join(p->tmp, PQ_MANIFEST);
  hp_status st = HP_OK;
  int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) : -1;
  if (fd < 0) {
    st = hp_set_error(s, HP_ERR_IO, "%s: cannot create: %s", PQ_MANIFEST, strerror(errno));
  } else {
    if (hu_write_all(fd, b.p, b.n))
      st = hp_set_error(s, HP_ERR_IO, "%s: cannot write: %s", PQ_MANIFEST, strerror(errno));
    if (st == HP_OK && fsync(fd) != 0)
      st = hp_set_error(s, HP_ERR_IO, "%s: cannot sync: %s", PQ_MANIFEST, strerror(errno));
    if (close(fd) != 0 && st == HP_OK)
      st = hp_set_error(s, HP_ERR_IO, "%s: cannot close: %s", PQ_MANIFEST, strerror(errno));
  }
  free(path);
  hu_buf_free(&b);
  return st;
}

/* The root's README.txt: says how to read a table, and makes dataset readers pointed at the root (pyarrow,
 * pandas, polars, Spark) stop with an error naming it instead of mixing every table's rows. */
#define PQ_README "README.txt"
static hp_status write_readme(hp_store *s, pq_store *p) {
  hu_buf text = {0};
  hu_buf_str(&text, "This folder is a hubprof profile stored as a Parquet dataset: one folder per table (");
  for (int t = 0; t < HP_TABLE_COUNT; t++) /* every table of the schema, in its order */
    hu_buf_printf(&text, "%s%s", t ? ", " : "", hp_table_describe((hp_table)t)->name);
  hu_buf_str(&text,
             ").\nRead a table by pointing at its folder, e.g.\n"
             "  pandas.read_parquet(\"THIS/dispatch\")   pyarrow.parquet.read_table(\"THIS/dispatch\")\n"
             "  spark.read.parquet(\"THIS/dispatch\")    DuckDB: FROM 'THIS/dispatch/**/*.parquet'\n"
             "The folder itself is not one table: this file makes readers pointed at it stop with an error.\n"
             "Keys and joins of the tables: docs/formats/parquet.md of hubprof.\n");
  if (text.oom) {
    hu_buf_free(&text);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  char *path = join(p->tmp, PQ_README);
  int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) : -1;
  free(path);
  if (fd < 0) {
    hu_buf_free(&text);
    return hp_set_error(s, HP_ERR_IO, "%s: cannot create: %s", PQ_README, strerror(errno));
  }
  hp_status st = HP_OK;
  if (hu_write_all(fd, text.p, text.n))
    st = hp_set_error(s, HP_ERR_IO, "%s: cannot write: %s", PQ_README, strerror(errno));
  if (close(fd) != 0 && st == HP_OK)
    st = hp_set_error(s, HP_ERR_IO, "%s: cannot close: %s", PQ_README, strerror(errno));
  hu_buf_free(&text);
  return st;
}

/* Put the finished temporary directory at its path, replacing an older Parquet store there. */
static hp_status install(hp_store *s, pq_store *p) {
  if (rename(p->tmp, p->target) == 0) return HP_OK;
  int e = errno;
  if (e != ENOTEMPTY && e != EEXIST && e != ENOTDIR && e != EISDIR)
    return hp_set_error(s, HP_ERR_IO, "cannot rename %s into place: %s", p->tmp, strerror(e));
  struct stat sb;
  if (stat(p->target, &sb) != 0 || !S_ISDIR(sb.st_mode) || !has_manifest(p->target))
    return hp_set_error(s, HP_ERR_IO, "exists and is not a hubprof Parquet store: not replacing it");
  /* A symbolic link to a store is replaced itself: its target, someone's folder, is never touched (it is
   * moved aside and unlinked below, never walked). */
  char *old = hp_temp_path(p->target);
  if (!old) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  if (rename(p->target, old) != 0) {
    hp_status st = hp_set_error(s, HP_ERR_IO, "cannot move the old store aside: %s", strerror(errno));
    free(old);
    return st;
  }
  if (rename(p->tmp, p->target) != 0) {
    hp_status st = hp_set_error(s, HP_ERR_IO, "cannot rename %s into place: %s", p->tmp, strerror(errno));
    rename(old, p->target); /* put the old store back */
    free(old);
    return st;
  }
  hu_dir_remove(old, 10);
  free(old);
  return HP_OK;
}

static void free_write_store(pq_store *p) {
  free_writers(p);
  hu_idmap_free(&p->part.proc_node);
  free(p->part.runs);
  hu_json_free(p->old);
  free(p->tmp);
  free(p->target);
  free(p);
}

static hp_status append_install(hp_store *s, pq_store *p, const pq_file_entry *const files[],
                                const size_t nfiles[]);

static hp_status pq_commit(hp_store *s) {
  pq_store *p = s->impl;
  const pq_file_entry *files[HP_TABLE_COUNT];
  size_t nfiles[HP_TABLE_COUNT];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    hp_status st;
    if (p->append && !p->tw[t] && hp_table_streamed((hp_table)t)) { /* no new rows: the old files stay */
      files[t] = NULL;
      nfiles[t] = 0;
      continue;
    }
    if (!p->tw[t]) {
      if ((st = pq_twriter_new(s, p->tmp, (hp_table)t, &p->lim, &p->tw[t])) != HP_OK) return st;
      if (p->append) pq_twriter_first_file(p->tw[t], p->first_file[t]);
    }
    if ((st = pq_twriter_finish(p->tw[t], &files[t], &nfiles[t])) != HP_OK) return st;
  }
  hp_status st = p->append ? HP_OK : write_readme(s, p); /* an append's store has its README */
  if (st == HP_OK) st = write_manifest(s, p, files, nfiles);
  if (st != HP_OK) return st;
  if (hu_fsync_dir(p->tmp) != 0)
    return hp_set_error(s, HP_ERR_IO, "cannot sync %s: %s", p->tmp, strerror(errno));
  if ((st = p->append ? append_install(s, p, files, nfiles) : install(s, p)) != HP_OK)
    return st; /* the hub calls abort, which removes the temporary */
  free_write_store(p);
  s->impl = NULL;
  return HP_OK;
}

static void pq_abort(hp_store *s) {
  pq_store *p = s->impl;
  if (!p) return;
  free_writers(p); /* closes open files first */
  hu_dir_remove(p->tmp, 10);
  free_write_store(p);
  s->impl = NULL;
}

/* ---- open / read ---- */
static void free_read_store(pq_store *p) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    for (size_t i = 0; i < p->tab[t].nfiles; i++)
      pq_rfile_free(&p->tab[t].files[i]);
    free(p->tab[t].files);
  }
  free(p);
}

static hp_status read_manifest(hp_store *s, hu_json **out) {
  *out = NULL;
  char *path = join(s->path, PQ_MANIFEST);
  if (!path) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  free(path);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return hp_set_error(s, HP_ERR_FORMAT, "%s missing: not a hubprof Parquet store", PQ_MANIFEST);
    return hp_set_error(s, HP_ERR_IO, "%s: cannot open: %s", PQ_MANIFEST, strerror(errno));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > PQ_MAX_MANIFEST) {
    close(fd);
    return hp_set_error(s, HP_ERR_CORRUPT, "%s: not a regular file of at most %u bytes", PQ_MANIFEST,
                        PQ_MAX_MANIFEST);
  }
  size_t n = (size_t)sb.st_size;
  char *text = malloc(n ? n : 1);
  if (!text) {
    close(fd);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  long long got = hu_read_full(fd, text, n);
  close(fd);
  if (got != (long long)n) {
    free(text);
    return hp_set_error(s, HP_ERR_IO, "%s: cannot read", PQ_MANIFEST);
  }
  hu_status rc = hu_json_parse(text, n, out);
  free(text);
  if (rc == HU_OK) return HP_OK;
  hp_status st = hp_set_error(s, rc == HU_ERR_NOMEM ? HP_ERR_NOMEM : HP_ERR_CORRUPT, "%s: bad JSON: %s",
                              PQ_MANIFEST, hu_json_error(*out));
  hu_json_free(*out);
  *out = NULL;
  return st;
}

/* Check one file of the manifest: size against the manifest, then magic and footer. A file whose size
 * differs from the manifest's but which is valid Parquet by its own footer was changed since the manifest was
 * written (rewritten in place by another tool): a note, and it is read by its own footer. Damage is recorded,
 * the file left out; only out-of-memory fails the open. */
static hp_status check_file(hp_store *s, const hp_table_desc *d, pq_rfile *f, const hu_json *rows,
                            const hu_json *bytes, const hu_json *crc) {
  int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
                             O_NOCTTY); /* a FIFO in the store is refused below, not waited on */
  if (fd < 0) {
    hp_set_damage(s, HP_ERR_CORRUPT, 0, "%s: missing (%s)", f->name, strerror(errno));
    return HP_OK;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    hp_set_damage(s, HP_ERR_CORRUPT, 0, "%s: not a regular file", f->name);
    return HP_OK;
  }
  uint64_t size = (uint64_t)sb.st_size, off = 0;
  int changed = bytes && size != bytes->u;
  uint32_t want_crc = crc ? (uint32_t)crc->u : 0;
  hp_status st = pq_read_footer(fd, size, d, crc && !changed ? &want_crc : NULL, f, &off);
  close(fd);
  if (st == HP_ERR_NOMEM) return hp_set_error(s, st, "%s: out of memory", f->name);
  if (st != HP_OK && changed && size < bytes->u) {
    hp_set_damage(s, HP_ERR_TRUNCATED, size, "%s: truncated: %llu bytes of %llu", f->name,
                  (unsigned long long)size, (unsigned long long)bytes->u);
    return HP_OK;
  }
  if (st != HP_OK && changed) {
    hp_set_damage(s, HP_ERR_CORRUPT, bytes->u, "%s: %llu bytes, the manifest says %llu, and not readable: %s",
                  f->name, (unsigned long long)size, (unsigned long long)bytes->u, f->err);
    return HP_OK;
  }
  if (st != HP_OK) {
    hp_set_damage(s, st, off, "%s: %s", f->name, f->err);
    return HP_OK;
  }
  if (changed) {
    hp_set_note(
        s,
        "%s: changed since the manifest was written (%llu bytes, the manifest says %llu; rewritten by "
        "another tool?): read by its own footer (%llu rows)",
        f->name, (unsigned long long)size, (unsigned long long)bytes->u, (unsigned long long)f->rows);
    return HP_OK;
  }
  if (rows && f->rows != rows->u) {
    f->ok = 0;
    hp_set_damage(s, HP_ERR_CORRUPT, 0, "%s: %llu rows, the manifest says %llu", f->name,
                  (unsigned long long)f->rows, (unsigned long long)rows->u);
  }
  return HP_OK;
}

static int cmp_file_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A file listed twice in one table would be read twice (a hostile manifest listing one file thousands of
 * times multiplies the work): refused. */
static hp_status no_duplicate_files(hp_store *s, const pq_rtable *rt, const char *table) {
  if (rt->nfiles < 2) return HP_OK;
  const char **names = malloc(rt->nfiles * sizeof *names);
  if (!names) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < rt->nfiles; i++)
    names[i] = rt->files[i].name;
  qsort(names, rt->nfiles, sizeof *names, cmp_file_name);
  hp_status st = HP_OK;
  for (size_t i = 1; i < rt->nfiles && st == HP_OK; i++)
    if (!strcmp(names[i - 1], names[i]))
      st = hp_set_error(s, HP_ERR_CORRUPT, "%s: table %s lists file %s twice", PQ_MANIFEST, table, names[i]);
  free(names);
  return st;
}

static hp_status load_table(hp_store *s, pq_store *p, const hu_json *tj) {
  const hu_json *name = hu_json_get(tj, "name"), *files = hu_json_get(tj, "files");
  if (!name || name->type != HU_JSON_STR || !files || files->type != HU_JSON_ARR)
    return hp_set_error(s, HP_ERR_CORRUPT, "%s: a table without name or files", PQ_MANIFEST);
  hp_table t = hp_table_from_name(name->s);
  if (t == HP_TABLE_COUNT) return HP_OK; /* a table of a newer model: not ours to read */
  pq_rtable *rt = &p->tab[t];
  if (rt->files) return hp_set_error(s, HP_ERR_CORRUPT, "%s: table %s listed twice", PQ_MANIFEST, name->s);
  rt->files = calloc(files->n ? files->n : 1, sizeof *rt->files);
  if (!rt->files) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  const hp_table_desc *d = hp_table_describe(t);
  for (size_t i = 0; i < files->n; i++) {
    const hu_json *fj = &files->kid[i];
    const hu_json *path = hu_json_get(fj, "path"), *rows = hu_json_get(fj, "rows"),
                  *bytes = hu_json_get(fj, "bytes"), *crc = hu_json_get(fj, "footer_crc32c");
    if (!path || path->type != HU_JSON_STR || !valid_name(path->s))
      return hp_set_error(s, HP_ERR_CORRUPT, "%s: table %s: file %zu has a bad path", PQ_MANIFEST, name->s,
                          i);
    if ((rows && rows->type != HU_JSON_INT) || (bytes && bytes->type != HU_JSON_INT) ||
        (crc && (crc->type != HU_JSON_INT || crc->u > UINT32_MAX)))
      return hp_set_error(s, HP_ERR_CORRUPT, "%s: table %s: file %s has bad rows, bytes or footer_crc32c",
                          PQ_MANIFEST, name->s, path->s);
    pq_rfile *f = &rt->files[rt->nfiles++];
    f->name = strdup(path->s);
    f->path = join(s->path, path->s);
    if (!f->name || !f->path) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    hp_status st = check_file(s, d, f, rows, bytes, crc);
    if (st != HP_OK) return st;
    if (f->ok) rt->rows += f->rows;
  }
  return no_duplicate_files(s, rt, name->s);
}

/* A dataset without a manifest: every table's files found by pq_layout_find; anything else in the root but
 * names starting with '_' or '.' is reported by name. */
static hp_status open_bare(hp_store *s, pq_store *p) {
  struct dirent **ents = NULL;
  int n = scandir(s->path, &ents, NULL, by_name);
  if (n < 0) return hp_set_error(s, HP_ERR_IO, "cannot list: %s", strerror(errno));
  hp_status st = HP_OK;
  for (int i = 0; i < n; i++) {
    const char *nm = ents[i]->d_name;
    if (st == HP_OK && nm[0] != '.' && nm[0] != '_' && strcmp(nm, PQ_README) != 0 &&
        hp_table_from_name(nm) == HP_TABLE_COUNT)
      st = hp_set_error(s, HP_ERR_FORMAT,
                        "%s: not a table of the data model (a dataset holds one folder per "
                        "table: node, process, …, dispatch, …)",
                        nm);
  }
  for (int i = 0; i < n; i++)
    free(ents[i]);
  free(ents);
  for (int t = 0; t < HP_TABLE_COUNT && st == HP_OK; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    char **names;
    size_t k;
    st = pq_layout_find(s, d->name, &names, &k);
    if (st != HP_OK) break;
    pq_rtable *rt = &p->tab[t];
    rt->files = calloc(k ? k : 1, sizeof *rt->files);
    for (size_t i = 0; i < k; i++) {
      pq_rfile *f = rt->files ? &rt->files[rt->nfiles++] : NULL;
      if (f) {
        f->name = names[i];
        f->path = join(s->path, names[i]);
      } else {
        free(names[i]);
      }
      if (st == HP_OK && (!f || !f->path)) st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
      if (st == HP_OK) st = check_file(s, d, f, NULL, NULL, NULL);
      if (st == HP_OK && f->ok) rt->rows += f->rows;
    }
    free(names);
  }
  if (st == HP_OK && !(s->schema_version = strdup(PQ_SCHEMA_VERSION)))
    st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  return st;
}

static hp_status pq_open_read(hp_store *s) {
  hu_json *m;
  hp_status st;
  char *mp = join(s->path, PQ_MANIFEST);
  struct stat msb;
  int no_manifest = mp && lstat(mp, &msb) != 0 && errno == ENOENT;
  free(mp);
  if (no_manifest && is_bare_dataset(s->path)) {
    pq_store *p = calloc(1, sizeof *p);
    if (!p) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    if ((st = open_bare(s, p)) != HP_OK) {
      free_read_store(p);
      return st;
    }
    s->impl = p;
    return HP_OK;
  }
  st = read_manifest(s, &m);
  if (st != HP_OK) return st;
  pq_store *p = calloc(1, sizeof *p);
  if (!p) {
    hu_json_free(m);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  const hu_json *fmt = hu_json_get(m, "format"), *ver = hu_json_get(m, "version"),
                *sv = hu_json_get(m, "schema_version"), *tables = hu_json_get(m, "tables");
  if (!fmt || fmt->type != HU_JSON_STR || strcmp(fmt->s, PQ_MAGIC) != 0) {
    st = hp_set_error(s, HP_ERR_FORMAT, "%s: not a hubprof Parquet manifest", PQ_MANIFEST);
  } else if (!ver || ver->type != HU_JSON_INT) {
    st = hp_set_error(s, HP_ERR_CORRUPT, "%s: no version", PQ_MANIFEST);
  } else if (ver->u > PQ_STORE_VERSION) {
    st = hp_set_error(s, HP_ERR_VERSION, "%s: store version %llu, this build reads up to %d", PQ_MANIFEST,
                      (unsigned long long)ver->u, PQ_STORE_VERSION);
  } else if (!tables || tables->type != HU_JSON_ARR) {
    st = hp_set_error(s, HP_ERR_CORRUPT, "%s: no table list", PQ_MANIFEST);
  } else if (sv && (sv->type != HU_JSON_STR || !schema_version_ok(sv->s))) {
    st = hp_set_error(s, HP_ERR_CORRUPT, "%s: bad schema_version (want digits and dots, e.g. \"%s\")",
                      PQ_MANIFEST, PQ_SCHEMA_VERSION);
  } else if (strtoul(sv ? sv->s : PQ_SCHEMA_VERSION, NULL, 10) != strtoul(PQ_SCHEMA_VERSION, NULL, 10)) {
    st = hp_set_error(s, HP_ERR_VERSION, "%s: schema_version %s, this build reads %s.x", PQ_MANIFEST, sv->s,
                      PQ_SCHEMA_VERSION);
  } else {
    s->schema_version = strdup(sv && sv->type == HU_JSON_STR ? sv->s : PQ_SCHEMA_VERSION);
    if (!s->schema_version) st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < tables->n && st == HP_OK; i++)
      st = load_table(s, p, &tables->kid[i]);
  }
  hu_json_free(m);
  if (st != HP_OK) {
    free_read_store(p);
    return st;
  }
  s->impl = p;
  return HP_OK;
}

static void pq_close_read(hp_store *s) {
  if (s->impl) free_read_store(s->impl);
  s->impl = NULL;
}

static hp_status pq_count(hp_store *s, hp_table t, uint64_t *n) {
  pq_store *p = s->impl;
  *n = p->tab[t].rows;
  return HP_OK;
}

static hp_status pq_cursor_open(hp_cursor *c) {
  pq_store *p = c->store->impl;
  pq_rtable *rt = &p->tab[c->table];
  pq_rcursor *rc;
  hp_status st = pq_rcursor_open(c->store, hp_table_describe(c->table), rt->files, rt->nfiles, &rc);
  if (st != HP_OK) return hp_set_error(c->store, st, "out of memory");
  c->impl = rc;
  return HP_OK;
}

/* Part `part` of nparts: the row groups whose first row, counted over the readable files, lies in
 * [part * rows / nparts, (part + 1) * rows / nparts). */
static hp_status pq_cursor_part(hp_cursor *c, unsigned part, unsigned nparts) {
  hp_status st = pq_cursor_open(c);
  if (st != HP_OK) return st;
  const pq_rtable *rt = &((pq_store *)c->store->impl)->tab[c->table];
  unsigned __int128 rows = 0, at = 0;
  for (size_t i = 0; i < rt->nfiles; i++)
    for (size_t j = 0; rt->files[i].ok && j < rt->files[i].nrg; j++)
      rows += rt->files[i].rg[j].rows;
  uint64_t g = 0, g0 = UINT64_MAX, g1 = UINT64_MAX;
  for (size_t i = 0; i < rt->nfiles; i++)
    for (size_t j = 0; rt->files[i].ok && j < rt->files[i].nrg; j++, g++) {
      unsigned __int128 p = rows ? at * nparts / rows : 0; /* the part of this row group */
      if (p >= part && g0 == UINT64_MAX) g0 = g;
      if (p > part && g1 == UINT64_MAX) g1 = g;
      at += rt->files[i].rg[j].rows;
    }
  if (g0 == UINT64_MAX) g0 = g1 = 0; /* no row group of its own */
  pq_rcursor_range(c->impl, g0, g1);
  return HP_OK;
}

static hp_status pq_cursor_next(hp_cursor *c, void *row) { return pq_rcursor_next(c->impl, row); }

static hp_status pq_cursor_filter(hp_cursor *c, int (*keep)(void *, const hp_col_range *), void *ctx) {
  return pq_rcursor_filter(c->impl, keep, ctx);
}

hp_status hp_parquet_cursor_next_batch(hp_cursor *c, void *const *cols, size_t max, size_t *n) {
  if (n) *n = 0;
  if (!c || !cols || !n || c->store->ops != &hp_fmt_parquet || !c->impl) return HP_ERR_INVALID;
  return pq_rcursor_next_batch(c->impl, cols, max, n);
}

static void pq_cursor_close(hp_cursor *c) {
  pq_rcursor_close(c->impl);
  c->impl = NULL;
}

/* ---- appending ---- */
/* The number in a part file's name ("…/part-00012.parquet" -> 12), or -1. */
static long part_number(const char *path) {
  const char *base = strrchr(path, '/');
  unsigned n;
  char tail[16];
  if (sscanf(base ? base + 1 : path, "part-%u%15s", &n, tail) == 2 && strcmp(tail, ".parquet") == 0)
    return (long)n;
  return -1;
}

hp_status hp_parquet_set_append(hp_store *s) {
  if (!s || s->mode == HP_READ || s->ops != &hp_fmt_parquet || !s->impl) return HP_ERR_INVALID;
  pq_store *p = s->impl;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    if (p->tw[t]) return hp_set_error(s, HP_ERR_INVALID, "append must be chosen before rows are written");
  hu_json *m;
  hp_status st = read_manifest(s, &m);
  if (st != HP_OK) return st;
  const hu_json *ver = hu_json_get(m, "version"), *fmt = hu_json_get(m, "format"),
                *sv = hu_json_get(m, "schema_version"), *tables = hu_json_get(m, "tables");
  if (!fmt || fmt->type != HU_JSON_STR || strcmp(fmt->s, PQ_MAGIC) != 0 || !tables ||
      tables->type != HU_JSON_ARR) {
    hu_json_free(m);
    return hp_set_error(s, HP_ERR_FORMAT, "%s: not a hubprof Parquet manifest", PQ_MANIFEST);
  }
  if (!ver || ver->type != HU_JSON_INT || ver->u != PQ_STORE_VERSION || !sv || sv->type != HU_JSON_STR ||
      strcmp(sv->s, PQ_SCHEMA_VERSION) != 0) {
    hu_json_free(m);
    return hp_set_error(
        s, HP_ERR_VERSION,
        "store version or schema of another hubprof: appending needs store version %d, schema "
        "%s (convert it to a new store first)",
        PQ_STORE_VERSION, PQ_SCHEMA_VERSION);
  }
  unsigned keys = 0;
  for (size_t i = 0; i < tables->n; i++) {
    const hu_json *name = hu_json_get(&tables->kid[i], "name"),
                  *files = hu_json_get(&tables->kid[i], "files");
    hp_table t = name && name->type == HU_JSON_STR ? hp_table_from_name(name->s) : HP_TABLE_COUNT;
    if (t == HP_TABLE_COUNT || !files || files->type != HU_JSON_ARR) continue;
    for (size_t k = 0; k < files->n; k++) {
      const hu_json *path = hu_json_get(&files->kid[k], "path"), *rows = hu_json_get(&files->kid[k], "rows");
      if (!path || path->type != HU_JSON_STR || !valid_name(path->s)) {
        hu_json_free(m);
        return hp_set_error(s, HP_ERR_CORRUPT, "%s: table %s: a file with a bad path", PQ_MANIFEST, name->s);
      }
      long no = part_number(path->s);
      if (no >= 0 && (unsigned)no + 1 > p->first_file[t]) p->first_file[t] = (unsigned)no + 1;
      if (hp_table_streamed(t)) {
        p->skip[t] += rows && rows->type == HU_JSON_INT ? rows->u : 0;
        if (strstr(path->s, "/node=")) keys |= HP_PARTITION_NODE;
        if (strstr(path->s, "process=")) keys |= HP_PARTITION_PROCESS;
      }
    }
  }
  p->old = m;
  p->append = 1;
  p->part.keys = keys; /* new processes go where the store's own are */
  return HP_OK;
}

/* Move a new file of an append from the temporary into the store, making its folders. */
static hp_status move_in(hp_store *s, pq_store *p, const char *name) {
  char *from = join(p->tmp, name), *to = join(p->target, name);
  hp_status st = HP_OK;
  if (!from || !to) {
    st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  } else {
    for (char *c = to + strlen(p->target) + 1; *c; c++)
      if (*c == '/') {
        *c = 0;
        if (mkdir(to, 0777) != 0 && errno != EEXIST)
          st = hp_set_error(s, HP_ERR_IO, "cannot create %s: %s", to, strerror(errno));
        *c = '/';
      }
    if (st == HP_OK && rename(from, to) != 0)
      st = hp_set_error(s, HP_ERR_IO, "cannot move %s into the store: %s", name, strerror(errno));
  }
  free(from);
  free(to);
  return st;
}

/* Put an append's files in the store, then its manifest (one rename: readers see the old store or the new
 * one), then remove the small tables' old files, which the new manifest no longer lists. */
static hp_status append_install(hp_store *s, pq_store *p, const pq_file_entry *const files[],
                                const size_t nfiles[]) {
  hp_status st = HP_OK;
  for (int t = 0; t < HP_TABLE_COUNT && st == HP_OK; t++)
    for (size_t i = 0; i < nfiles[t] && st == HP_OK; i++)
      st = move_in(s, p, files[t][i].name);
  if (st != HP_OK) return st;
  char *from = join(p->tmp, PQ_MANIFEST), *to = join(p->target, PQ_MANIFEST);
  if (!from || !to)
    st = hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  else if (rename(from, to) != 0)
    st = hp_set_error(s, HP_ERR_IO, "cannot replace %s: %s", PQ_MANIFEST, strerror(errno));
  free(from);
  free(to);
  if (st != HP_OK) return st;
  hu_fsync_dir(p->target);
  const hu_json *tables = hu_json_get(p->old, "tables");
  for (size_t i = 0; tables && i < tables->n; i++) {
    const hu_json *name = hu_json_get(&tables->kid[i], "name"), *fl = hu_json_get(&tables->kid[i], "files");
    hp_table t = name && name->type == HU_JSON_STR ? hp_table_from_name(name->s) : HP_TABLE_COUNT;
    if (t == HP_TABLE_COUNT || hp_table_streamed(t) || !fl || fl->type != HU_JSON_ARR) continue;
    for (size_t k = 0; k < fl->n; k++) {
      const hu_json *path = hu_json_get(&fl->kid[k], "path");
      char *f = path && path->type == HU_JSON_STR ? join(p->target, path->s) : NULL;
      if (f) unlink(f);
      free(f);
    }
  }
  hu_dir_remove(p->tmp, 10);
  return HP_OK;
}

/* ---- ops ---- */
const hp_format_ops hp_fmt_parquet = {
    HP_FORMAT(pq, "parquet", 0),
    .cursor_next_batch = hp_parquet_cursor_next_batch,
    .cursor_part = pq_cursor_part,
    .cursor_filter = pq_cursor_filter,
};
