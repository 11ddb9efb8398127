/* NVTX injection: an NVTX-annotated application whose NVTX_INJECTION64_PATH names the collector hands it its
 * nvtxRangePush/Pop, RangeStart/End, Mark (A, W and Ex, default and named domains) as regions and markers. */
/* SPDX-License-Identifier: MIT */
#include "collector.h"
#include "hubprof/hub.h"
#include "regions.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ---- the injection ABI of NVTX v3 (the numbers its headers define; not included: no toolkit needed) ---- */
enum { ETID_CALLBACKS = 1, MODULE_CORE = 1, MODULE_CORE2 = 5 };
enum {
  CORE_MarkEx = 1,
  CORE_MarkA,
  CORE_MarkW,
  CORE_RangeStartEx,
  CORE_RangeStartA,
  CORE_RangeStartW,
  CORE_RangeEnd,
  CORE_RangePushEx,
  CORE_RangePushA,
  CORE_RangePushW,
  CORE_RangePop,
};
enum {
  CORE2_DomainMarkEx = 1,
  CORE2_DomainRangeStartEx,
  CORE2_DomainRangeEnd,
  CORE2_DomainRangePushEx,
  CORE2_DomainRangePop,
  CORE2_DomainRegisterStringA = 10,
  CORE2_DomainRegisterStringW,
  CORE2_DomainCreateA,
  CORE2_DomainCreateW,
};
enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };

typedef void (*nvtx_fn)(void);
typedef struct nvtx_callbacks {
  size_t struct_size;
  int (*get_module_table)(int module, nvtx_fn ***table, unsigned *size);
} nvtx_callbacks;
typedef const void *(*nvtx_get_export_table)(uint32_t id);

typedef struct nvtx_attr { /* nvtxEventAttributes_t, version 2 and later (fields we read come first) */
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t color_type;
  uint32_t color;
  int32_t payload_type;
  int32_t reserved0;
  uint64_t payload;
  int32_t message_type;
  const void *message; /* char *, wchar_t * or a registered string handle */
} nvtx_attr;

/* ---- domains and registered strings: kept for the life of the process (their names are categories) ---- */
typedef struct nvtx_domain {
  char name[HPC_REGION_NAME_MAX];
} nvtx_domain;
typedef struct nvtx_string {
  char text[HPC_REGION_NAME_MAX];
} nvtx_string;

static const char cat_default[] = "nvtx"; /* the default domain */

static const char *category_of(const void *domain) {
  return domain ? ((const nvtx_domain *)domain)->name : cat_default;
}

/* wchar_t (UTF-32 on Linux) to UTF-8; code points that are not characters become U+FFFD. */
static void from_wide(char *dst, size_t cap, const wchar_t *w) {
  size_t o = 0;
  if (!w) {
    hpc_region_name(dst, cap, NULL, (size_t)-1);
    return;
  }
  for (; *w; w++) {
    uint32_t c = (uint32_t)*w;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    unsigned char b[4];
    size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (n == 1) b[0] = (unsigned char)c;
    if (n == 2) b[0] = (unsigned char)(0xC0 | c >> 6), b[1] = (unsigned char)(0x80 | (c & 0x3F));
    if (n == 3)
      b[0] = (unsigned char)(0xE0 | c >> 12), b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F)),
      b[2] = (unsigned char)(0x80 | (c & 0x3F));
    if (n == 4)
      b[0] = (unsigned char)(0xF0 | c >> 18), b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F)),
      b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F)), b[3] = (unsigned char)(0x80 | (c & 0x3F));
    if (o + n > cap - 4) { /* the same visible cut as hpc_region_name */
      memcpy(dst + o, "...", 3);
      o += 3;
      break;
    }
    memcpy(dst + o, b, n);
    o += n;
  }
  dst[o] = 0;
}

/* The message of an attributes struct as UTF-8 in buf (may return a registered string's own text). */
static const char *message_of(const nvtx_attr *a, char *buf, size_t cap) {
  if (!a || a->size < offsetof(nvtx_attr, message) + sizeof(void *)) return "";
  switch (a->message_type) {
  case MSG_ASCII: hpc_region_name(buf, cap, a->message, (size_t)-1); return buf;
  case MSG_UNICODE: from_wide(buf, cap, a->message); return buf;
  case MSG_REGISTERED: return a->message ? ((const nvtx_string *)a->message)->text : "";
  default: return "";
  }
}

/* The four entry points NVTX has for an action on a named region (marks, pushes, starts), one rule for all:
 * NAME##A (an ASCII message) and NAME##W (wide) in the default domain; DOMAIN##Ex (a domain and an attributes
 * struct, whose message may be ASCII, wide or a registered string) and NAME##Ex (the default domain). Each
 * calls act(category, name, (size_t)-1) with the name as UTF-8 (in a stack buffer when converted); ret is
 * `return`, or `(void)` for the actions of no result. */
#define NVTX_NAMED(NAME, DOMAIN, type, ret, act)                                                             \
  static type NAME##A(const char *m) { ret act(cat_default, m, (size_t)-1); }                                \
  static type NAME##W(const wchar_t *m) {                                                                    \
    char b[HPC_REGION_NAME_MAX];                                                                             \
    from_wide(b, sizeof b, m);                                                                               \
    ret act(cat_default, b, (size_t)-1);                                                                     \
  }                                                                                                          \
  static type DOMAIN##Ex(const void *d, const nvtx_attr *a) {                                                \
    char b[HPC_REGION_NAME_MAX];                                                                             \
    ret act(category_of(d), message_of(a, b, sizeof b), (size_t)-1);                                         \
  }                                                                                                          \
  static type NAME##Ex(const nvtx_attr *a) { ret DOMAIN##Ex(NULL, a); }

/* ---- push/pop and marks ------------------------------------------------------------------------------ */
static void mark(const char *cat, const char *name, size_t len) {
  int64_t t = hpc_region_now();
  hpc_region_write(cat, name, len, t, t);
}
NVTX_NAMED(Mark, DomainMark, void, (void), mark)
NVTX_NAMED(Push, DomainPush, int, return, hpc_region_push)
static int DomainPop(const void *d) { return hpc_region_pop(category_of(d)); }
static int Pop(void) { return hpc_region_pop(cat_default); }

/* ---- start/end ranges: any thread may end them. A fixed table of open ranges, claimed lock-free. ------ */
#define OPEN_SLOTS 4096
#define SLOT_BUSY UINT64_MAX
typedef struct open_range {
  _Atomic uint64_t id; /* 0 = free, SLOT_BUSY while being filled or emptied */
  uint64_t thread_id;  /* thread that started it */
  int64_t start_ns;
  const char *category;
  int host_ok; /* host[] holds the thread's counts at its start (profile with counters) */
  double host[HPC_REGION_HOST_MAX]; /* ... read then */
  char name[HPC_REGION_NAME_MAX];
} open_range;
static open_range g_open[OPEN_SLOTS];
static _Atomic uint64_t g_range_ids;

static uint64_t start(const char *cat, const char *name, size_t len) {
  uint64_t id = atomic_fetch_add_explicit(&g_range_ids, 1, memory_order_relaxed) + 1;
  for (unsigned p = 0; p < OPEN_SLOTS; p++) {
    open_range *r = &g_open[(id + p) % OPEN_SLOTS];
    uint64_t free_ = 0;
    if (!atomic_compare_exchange_strong(&r->id, &free_, SLOT_BUSY)) continue;
    r->thread_id = hpc_region_thread();
    r->category = cat;
    hpc_region_name(r->name, sizeof r->name, name, len);
    r->host_ok = hpc_region_host_begin(r->host);
    r->start_ns = hpc_region_now();
    atomic_store_explicit(&r->id, id, memory_order_release);
    return id;
  }
  return id; /* every slot holds an open range: this one ends as an unbalanced end */
}

static uint64_t write_range(hp_store *s, uint64_t thread_id, const char *cat, const char *name, int64_t a,
                            int64_t b) {
  hp_region row = {.size = sizeof row,
                   .id = hpc_region_id_new(),
                   .process_id = 1,
                   .thread_id = thread_id,
                   .name = name,
                   .category = cat,
                   .start_ns = a,
                   .end_ns = b};
  hp_write_region(s, &row);
  return row.id;
}

static void end(uint64_t id) {
  int64_t t = hpc_region_now();
  uint64_t me = 0; /* the host part is of the thread that started the range: ended there, it has one */
  for (unsigned p = 0; id && id != SLOT_BUSY && p < OPEN_SLOTS; p++) {
    open_range *r = &g_open[(id + p) % OPEN_SLOTS];
    uint64_t want = id;
    if (!atomic_compare_exchange_strong(&r->id, &want, SLOT_BUSY)) continue;
    if (r->host_ok) me = hpc_region_thread();
    hp_store *s = hpc_store_enter_open();
    if (s) {
      uint64_t rid = write_range(s, r->thread_id, r->category, r->name, r->start_ns, t);
      if (r->host_ok && me == r->thread_id) hpc_region_host_end(s, rid, r->host);
    }
    hpc_store_leave(s);
    atomic_store_explicit(&r->id, 0, memory_order_release);
    return;
  }
  hpc_region_write(hpc_region_cat_hubprof, HPC_REGION_END_WITHOUT_BEGIN, (size_t)-1, t, t);
}

NVTX_NAMED(Start, DomainStart, uint64_t, return, start)
static void End(uint64_t id) { end(id); }
static void DomainEnd(const void *d, uint64_t id) {
  (void)d;
  end(id);
}

void hpc_nvtx_exit(hp_store *s, int64_t end_ns) {
  for (unsigned i = 0; i < OPEN_SLOTS; i++) {
    open_range *r = &g_open[i];
    uint64_t id = atomic_load(&r->id);
    if (!id || id == SLOT_BUSY || !atomic_compare_exchange_strong(&r->id, &id, SLOT_BUSY)) continue;
    write_range(s, r->thread_id, r->category, r->name, r->start_ns, end_ns);
    write_range(s, r->thread_id, hpc_region_cat_hubprof, HPC_REGION_PROCESS_EXIT, end_ns, end_ns);
  }
}

/* ---- domains and registered strings ------------------------------------------------------------------- */
static const void *DomainCreateA(const char *name) {
  nvtx_domain *d = calloc(1, sizeof *d); /* once per domain, never freed: regions keep pointing at it */
  if (d) hpc_region_name(d->name, sizeof d->name, name, (size_t)-1);
  return d;
}
static const void *DomainCreateW(const wchar_t *name) {
  nvtx_domain *d = calloc(1, sizeof *d);
  if (d) from_wide(d->name, sizeof d->name, name);
  return d;
}
static const void *RegisterStringA(const void *dom, const char *str) {
  (void)dom;
  nvtx_string *s = calloc(1, sizeof *s);
  if (s) hpc_region_name(s->text, sizeof s->text, str, (size_t)-1);
  return s;
}
static const void *RegisterStringW(const void *dom, const wchar_t *str) {
  (void)dom;
  nvtx_string *s = calloc(1, sizeof *s);
  if (s) from_wide(s->text, sizeof s->text, str);
  return s;
}

/* ---- the entry point NVTX looks up in the library NVTX_INJECTION64_PATH names ------------------------ */
static int fill(const nvtx_callbacks *cb, int module, const int *ids, nvtx_fn *fns, size_t n) {
  nvtx_fn **table = NULL;
  unsigned size = 0;
  if (!cb->get_module_table(module, &table, &size) || !table) return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned)ids[i] < size && table[ids[i]]) *table[ids[i]] = fns[i];
  return 1;
}

#define FN(f) ((nvtx_fn)(void (*)(void))(f))
HPC_EXPORT int InitializeInjectionNvtx2(nvtx_get_export_table get) {
  if (!get) return 0;
  if (hpc_init_slow() < 1) return 0; /* not under hubprof: NVTX stays a no-op */
  const nvtx_callbacks *cb = get(ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_table) return 0;
  static const int core_ids[] = {CORE_MarkEx,      CORE_MarkA,       CORE_MarkW,    CORE_RangeStartEx,
                                 CORE_RangeStartA, CORE_RangeStartW, CORE_RangeEnd, CORE_RangePushEx,
                                 CORE_RangePushA,  CORE_RangePushW,  CORE_RangePop};
  nvtx_fn core[] = {FN(MarkEx), FN(MarkA),  FN(MarkW), FN(StartEx), FN(StartA), FN(StartW),
                    FN(End),    FN(PushEx), FN(PushA), FN(PushW),   FN(Pop)};
  static const int core2_ids[] = {
      CORE2_DomainMarkEx,          CORE2_DomainRangeStartEx, CORE2_DomainRangeEnd,
      CORE2_DomainRangePushEx,     CORE2_DomainRangePop,     CORE2_DomainRegisterStringA,
      CORE2_DomainRegisterStringW, CORE2_DomainCreateA,      CORE2_DomainCreateW};
  nvtx_fn core2[] = {FN(DomainMarkEx),    FN(DomainStartEx), FN(DomainEnd),
                     FN(DomainPushEx),    FN(DomainPop),     FN(RegisterStringA),
                     FN(RegisterStringW), FN(DomainCreateA), FN(DomainCreateW)};
  return fill(cb, MODULE_CORE, core_ids, core, sizeof core / sizeof core[0]) &&
         fill(cb, MODULE_CORE2, core2_ids, core2, sizeof core2 / sizeof core2[0]);
}
