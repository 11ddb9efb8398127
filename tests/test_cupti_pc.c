/* CUDA PC and PM sampling into the hub's rows without a GPU (src/collector/cupti_pc.c): CUPTI's records built
 * as cupti_pcsampling.h lays them out (checked against the toolkit's header where it is installed) become
 * pc_sample rows with stall reason names and counts, resumable when the output is full, unplaced PCs
 * counted; a kernel's .text offset found in a cubin nvcc builds here; PM intervals become cumulative
 * counter_sample rows per dispatch; the rows go through a store of each format and read back. */
/* SPDX-License-Identifier: MIT */
#include "../src/collector/cupti_pc.c"
#include "../src/collector/sample_cupti_pc.c"
#include "../src/collector/sample_cupti_pm.c"
#include "../src/collector/cuda_cubin.c"
#include "../src/analysis/code_read.h"

#include "check.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef HPC_HAVE_CUPTI_H /* the toolkit's own layout (Makefile: -isystem its include folder when present) */
#include <cupti_pcsampling.h>
#define SAME(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #f)
SAME(CUpti_PCSamplingStallReason, hpc_cupti_stall, samples);
SAME(CUpti_PCSamplingPCData, hpc_cupti_pc, pcOffset);
SAME(CUpti_PCSamplingPCData, hpc_cupti_pc, functionName);
SAME(CUpti_PCSamplingPCData, hpc_cupti_pc, stallReasonCount);
SAME(CUpti_PCSamplingPCData, hpc_cupti_pc, stallReason);
SAME(CUpti_PCSamplingPCData, hpc_cupti_pc, correlationId);
SAME(CUpti_PCSamplingData, hpc_cupti_pc_data, totalNumPcs);
SAME(CUpti_PCSamplingData, hpc_cupti_pc_data, pPcData);
SAME(CUpti_PCSamplingData, hpc_cupti_pc_data, hardwareBufferFull);
_Static_assert(sizeof(CUpti_PCSamplingPCData) == sizeof(hpc_cupti_pc), "PCData size");
_Static_assert(sizeof(CUpti_PCSamplingData) == sizeof(hpc_cupti_pc_data), "PCSamplingData size");
_Static_assert(sizeof(CUpti_PCSamplingStallReason) == sizeof(hpc_cupti_stall), "StallReason size");
/* PC sampling's parameters (sample_cupti_pc.c) */
_Static_assert(offsetof(CUpti_PCSamplingConfigurationInfo, attributeData) == offsetof(p_attr, v) &&
                   sizeof(CUpti_PCSamplingConfigurationInfo) == sizeof(p_attr),
               "ConfigurationInfo");
_Static_assert(offsetof(CUpti_PCSamplingConfigurationInfoParams, pPCSamplingConfigurationInfo) ==
                   offsetof(p_config, attrs),
               "ConfigurationInfoParams");
_Static_assert(offsetof(CUpti_PCSamplingGetStallReasonsParams, stallReasons) == offsetof(p_reasons, names),
               "GetStallReasonsParams");
_Static_assert(offsetof(CUpti_PCSamplingGetDataParams, pcSamplingData) == offsetof(p_getdata, data),
               "GetDataParams");
/* PM sampling's (sample_cupti_pm.c): the last field of each, whose end is the size passed */
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#define LAST(a, b, fa, fb)                                                                                   \
  _Static_assert(offsetof(a, fa) == offsetof(b, fb) && sizeof(((a *)0)->fa) == sizeof(((b *)0)->fb), #fa)
LAST(CUpti_Device_GetChipName_Params, pm_chip, pChipName, chip);
LAST(CUpti_PmSampling_GetCounterAvailability_Params, pm_avail, pCounterAvailabilityImage, image);
LAST(CUpti_PmSampling_Enable_Params, pm_enable, pPmSamplingObject, obj);
LAST(CUpti_PmSampling_Start_Params, pm_obj, pPmSamplingObject, obj);
LAST(CUpti_PmSampling_SetConfig_Params, pm_config, samplingInterval, interval);
LAST(CUpti_PmSampling_SetConfig_Params, pm_config, triggerMode, trigger);
LAST(CUpti_PmSampling_SetConfig_Params, pm_config, hwBufferAppendMode, append);
LAST(CUpti_PmSampling_GetCounterDataSize_Params, pm_dsize, maxSamples, max_samples);
LAST(CUpti_PmSampling_GetCounterDataSize_Params, pm_dsize, counterDataSize, data_size);
LAST(CUpti_PmSampling_CounterDataImage_Initialize_Params, pm_dinit, pCounterData, data);
LAST(CUpti_PmSampling_DecodeData_Params, pm_decode, decodeStopReason, stop_reason);
LAST(CUpti_PmSampling_DecodeData_Params, pm_decode, overflow, overflow);
LAST(CUpti_PmSampling_GetCounterDataInfo_Params, pm_dinfo, numCompletedSamples, completed);
LAST(CUpti_PmSampling_CounterData_GetSampleInfo_Params, pm_sinfo, endTimestamp, end);
/* cupti_profiler_host.h is C++ (it includes <string>): its parameter structs are not checked here */
_Static_assert(CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL == 1 &&
                   CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL == 1,
               "PM sampling's constants");
#endif

/* The test's "collector": correlation id 7 is dispatch row 3 running code object 5 whose kernel "k" lies at
 * 0x600 in the cubin; other correlation ids are unknown. */
static int where(void *ctx, const hpc_cupti_pc *pc, uint64_t *d, uint64_t *co, uint64_t *off) {
  (void)ctx;
  if (pc->correlationId != 7 || strcmp(pc->functionName, "k")) return -1;
  *d = 3, *co = 5, *off = 0x600 + pc->pcOffset;
  return 0;
}

static const uint32_t idx[] = {2, 9, 4};
static const char *const names[] = {"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                    "smsp__pcsamp_warps_issue_stalled_selected",
                                    "smsp__pcsamp_warps_issue_stalled_barrier"};
static const hpc_cupti_reasons reasons = {3, idx, names};

static void pc_rows(hp_pc_sample *rows, size_t *nrows) {
  hpc_cupti_stall s0[] = {{2, 40}, {9, 2}, {4, 0}}, s1[] = {{4, 5}, {77, 1}}, s2[] = {{2, 6}};
  hpc_cupti_pc pcs[3] = {
      {sizeof(hpc_cupti_pc), 0xabc, 0x10, 0, 0, "k", 3, s0, 7},
      {sizeof(hpc_cupti_pc), 0xabc, 0x40, 0, 0, "k", 2, s1, 7},
      {sizeof(hpc_cupti_pc), 0xdef, 0x20, 1, 0, "other", 1, s2, 8}, /* no dispatch known: unplaced */
  };
  hpc_cupti_pc_data d = {.size = sizeof d, .totalNumPcs = 3, .pPcData = pcs, .totalSamples = 54};
  uint64_t next = 100;
  hpc_cupti_pc_cursor cur = {0};
  hp_pc_sample out[8];
  size_t n = 0, got;
  /* two rows at a time: the conversion stops inside a PC and goes on there */
  while ((got = hpc_cupti_pc_rows(&d, &reasons, where, NULL, 5000, 0, 0, &next, &cur, out, 2)) > 0 ||
         cur.pc < d.totalNumPcs) {
    CHECK(got <= 2);
    memcpy(rows + n, out, got * sizeof *out);
    n += got;
    if (n > 8) break;
  }
  CHECK_MSG(n == 4, "%zu rows", n);
  CHECK(cur.unplaced == 6 && cur.pc == 3);
  static const struct {
    uint64_t off;
    const char *reason;
    uint64_t samples;
  } want[] = {{0x610, names[0], 40}, {0x610, names[1], 2}, {0x640, names[2], 5}, {0x640, "", 1}};
  for (size_t i = 0; i < n && i < 4; i++)
    CHECK_MSG(rows[i].id == 101 + i && rows[i].dispatch_id == 3 && rows[i].code_object_id == 5 &&
                  rows[i].offset == want[i].off && !strcmp(rows[i].stall_reason, want[i].reason) &&
                  rows[i].samples == want[i].samples && rows[i].timestamp_ns == 5000 &&
                  rows[i].size == sizeof rows[i],
              "row %zu: 0x%" PRIx64 " %s %" PRIu64, i, rows[i].offset, rows[i].stall_reason, rows[i].samples);
  *nrows = n;
  /* no data, and a PC without a stall reason array: no rows, no crash */
  hpc_cupti_pc_cursor c2 = {0};
  CHECK(hpc_cupti_pc_rows(NULL, &reasons, where, NULL, 0, 0, 0, &next, &c2, out, 8) == 0);
  hpc_cupti_pc bare = {sizeof bare, 1, 0, 0, 0, "k", 4, NULL, 7};
  hpc_cupti_pc_data d2 = {.size = sizeof d2, .totalNumPcs = 1, .pPcData = &bare};
  CHECK(hpc_cupti_pc_rows(&d2, &reasons, where, NULL, 0, 0, 0, &next, &c2, out, 8) == 0 && c2.pc == 1);
}

static void pm_rows(hp_counter_sample *rows, size_t *nrows) {
  double v[5][2] = {{1, 10}, {2, 20}, {3, 30}, {4, 40}, {5, 50}};
  hpc_pm_interval iv[5] = {
      {0, 90, v[0]}, {100, 200, v[1]}, {200, 300, v[2]}, {300, 400, v[3]}, {1000, 1100, v[4]}};
  hpc_pm_window w[2] = {{3, 100, 300}, {4, 300, 1200}};
  const uint64_t cid[2] = {6, 7};
  double acc[2] = {0};
  uint64_t last = 0, next = 0, outside = 0;
  size_t n = 0, k;
  size_t used = hpc_pm_rows(iv, 5, cid, 2, w, 2, acc, &last, &next, &outside, rows, 5, &k); /* room for 2 */
  CHECK_MSG(used == 3 && k == 4 && outside == 1, "%zu intervals, %zu rows, %" PRIu64 " outside", used, k,
            outside);
  n = k;
  used += hpc_pm_rows(iv + used, 5 - used, cid, 2, w, 2, acc, &last, &next, &outside, rows + n, 8, &k);
  n += k;
  CHECK(used == 5 && n == 8 && outside == 1);
  /* dispatch 3: its two intervals summed; dispatch 4 starts again from 0; times increase */
  CHECK(rows[0].dispatch_id == 3 && rows[0].counter_id == 6 && rows[0].value == 2 &&
        rows[0].timestamp_ns == 200);
  CHECK(rows[3].dispatch_id == 3 && rows[3].counter_id == 7 && rows[3].value == 50);
  CHECK(rows[4].dispatch_id == 4 && rows[4].value == 4 && rows[6].value == 9 && rows[7].value == 90);
  for (size_t i = 1; i < n; i++)
    CHECK(rows[i].timestamp_ns >= rows[i - 1].timestamp_ns && rows[i].id == rows[i - 1].id + 1);
  /* the GPU's clock: as it is where it falls in a window, else moved by the other clock's distance */
  hpc_pm_interval on = {150, 250, NULL}, far = {150 + 5000, 250 + 5000, NULL}, none = {9000, 9100, NULL};
  CHECK(hpc_pm_shift(&on, w, 2, 5000) == 0);
  CHECK(hpc_pm_shift(&far, w, 2, 5000) == 5000);
  CHECK(hpc_pm_shift(&none, w, 2, 5000) == 0 && hpc_pm_shift(&far, w, 2, 0) == 0);
  *nrows = n;
}

/* A cubin nvcc builds here: the kernel's .text section offset as readelf sees it. */
static void cubin(void) {
  if (system("command -v nvcc >/dev/null 2>&1 || test -x /usr/local/cuda/bin/nvcc") != 0) {
    printf("test_cupti_pc: cubin part skipped: nvcc not found\n");
    return;
  }
  char dir[] = "/tmp/hubprof-cupti-XXXXXX", cmd[1024], path[256];
  if (!mkdtemp(dir)) return;
  snprintf(cmd, sizeof cmd,
           "cd %s && printf '__global__ void k(int *a) { a[threadIdx.x] += 1; }\\n' > k.cu && "
           "PATH=$PATH:/usr/local/cuda/bin nvcc -cubin -arch=sm_90 -lineinfo -o k.cubin k.cu && "
           "readelf -SW k.cubin 2>/dev/null | awk '$2 == \".text._Z1kPi\" {print $5}' > off",
           dir);
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/k.cubin", dir);
  FILE *f = fopen(path, "rb");
  unsigned char *b = malloc(1 << 20);
  size_t n = f && b ? fread(b, 1, 1 << 20, f) : 0;
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/off", dir);
  f = fopen(path, "r");
  unsigned long long want = 0;
  CHECK(f && fscanf(f, "%llx", &want) == 1 && want > 0);
  if (f) fclose(f);
  uint64_t off = 0;
  CHECK(n > 0 && hpc_cubin_func_offset(b, n, "_Z1kPi", &off) == 0 && off == want);
  CHECK(hpc_cubin_func_offset(b, n, "_Z1k", &off) == -1);                   /* a prefix is not the name */
  CHECK(hpc_cubin_func_offset(b, n > 200 ? 200 : n, "_Z1kPi", &off) == -1); /* cut: headers outside */
  CHECK(hpc_cubin_func_offset("not an elf", 10, "_Z1kPi", &off) == -1);
  free(b);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

/* The cubin capture path, as the CUDA provider runs it (prov_cuda_why.c) without a GPU: a cubin nvcc builds
 * here with -lineinfo, handed over twice as CUPTI's module-loaded callback hands it (the same module loaded
 * again), goes into a store once (its bytes) with a code_object row per load; PCs of its kernel as CUPTI
 * reports them (cubin CRC, function name, pcOffset) are placed at the kernel's .text offset + pcOffset; then
 * `hubprof analyze` disassembles the stored cubin with nvdisasm and puts the samples on the source line of
 * the dependent load and on its LDG instruction, with their stall reason. */
#define CHASE_SRC                                                                                            \
  "__global__ void chase(const unsigned *next, unsigned *out, int n)\n"                                      \
  "{\n"                                                                                                      \
  "  unsigned p = threadIdx.x;\n"                                                                            \
  "  for (int i = 0; i < n; i++)\n"                                                                          \
  "    p = next[p];\n"                                                                                       \
  "  out[threadIdx.x] = p;\n"                                                                                \
  "}\n"
static const char *const chase_fn = "_Z5chasePKjPji";
static hpc_cubins *cap_reg;
static int cap_where(void *ctx, const hpc_cupti_pc *pc, uint64_t *d, uint64_t *co, uint64_t *off) {
  (void)ctx;
  *d = 1;
  return hpc_cubins_place(cap_reg, pc, co, off);
}

static void capture(void) {
  char nvdisasm[4096], why[256];
  if (system("command -v nvcc >/dev/null 2>&1 || test -x /usr/local/cuda/bin/nvcc") != 0 ||
      cr_sass_find(nvdisasm, sizeof nvdisasm, why, sizeof why) != 0) {
    printf("test_cupti_pc: capture part skipped: nvcc or nvdisasm not found\n");
    return;
  }
  const char *hp = getenv("HUBPROF");
  if (!hp) hp = "build/hubprof";
  if (access(hp, X_OK) != 0) {
    printf("test_cupti_pc: capture part skipped: no %s (make all)\n", hp);
    return;
  }
  char dir[] = "/tmp/hubprof-cubin-XXXXXX", cmd[8600], path[256];
  if (!mkdtemp(dir)) return;
  snprintf(path, sizeof path, "%s/chase.cu", dir);
  FILE *f = fopen(path, "w");
  CHECK(f && fputs(CHASE_SRC, f) >= 0);
  if (f) fclose(f);
  /* the cubin, and the offset of its global load in the kernel as nvdisasm prints it (/ *0090* / LDG...) */
  snprintf(
      cmd, sizeof cmd,
      "cd %s && PATH=$PATH:/usr/local/cuda/bin nvcc -cubin -arch=sm_90 -O3 -lineinfo -o c.cubin chase.cu && "
      "'%s' -c c.cubin | awk '/LDG/ { if (match($0, /\\/\\*[0-9a-f]+\\*\\//)) "
      "{ print substr($0, RSTART + 2, RLENGTH - 4); exit } }' > ldg",
      dir, nvdisasm);
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/c.cubin", dir);
  f = fopen(path, "rb");
  unsigned char *b = malloc(1 << 20);
  size_t n = f && b ? fread(b, 1, 1 << 20, f) : 0;
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/ldg", dir);
  f = fopen(path, "r");
  unsigned long long ldg = 0;
  CHECK(f && fscanf(f, "%llx", &ldg) == 1 && ldg > 0);
  if (f) fclose(f);
  /* the store: a kernel, one dispatch of it, the module loaded twice */
  snprintf(path, sizeof path, "%s/s.db", dir);
  hp_store *s;
  CHECK(hp_store_open(path, "rocpd", HP_CREATE, &s) == HP_OK);
  hp_process pr = {.size = sizeof pr, .id = 1, .pid = 9};
  hp_write_process(s, &pr);
  hp_kernel_symbol k = {.size = sizeof k,
                        .id = 1,
                        .name = chase_fn,
                        .display_name = "chase(unsigned const*, "
                                        "unsigned*, int)"};
  hp_write_kernel_symbol(s, &k);
  hp_dispatch di = {.size = sizeof di,
                    .id = 1,
                    .dispatch_id = 1,
                    .process_id = 1,
                    .kernel_id = 1,
                    .start_ns = 1000,
                    .end_ns = 2000000};
  hp_write_dispatch(s, &di);
  cap_reg = hpc_cubins_new();
  _Atomic uint64_t ids = 0;
  const char *w1, *w2, *w3;
  uint64_t co1 = hpc_cubins_add(cap_reg, s, b, n, 0xc0ffee, 1, &ids, &w1);
  uint64_t co2 = hpc_cubins_add(cap_reg, s, b, n, 0xc0ffee, 2, &ids, &w2);
  CHECK(co1 == 1 && co2 == 2 && !*w1 && !*w2);
  CHECK(hpc_cubins_add(cap_reg, s, "not a cubin", 11, 1, 3, &ids, &w3) == 0 && *w3);
  uint64_t mods, refused;
  hpc_cubins_stats(cap_reg, &mods, &refused);
  CHECK(mods == 3 && refused == 1);
  /* CUPTI's PCs: 90 samples on the load (long scoreboard), 10 at the kernel's start; one of another cubin */
  hpc_cupti_stall st_ldg[2] = {{2, 85}, {9, 5}}, st_first[1] = {{4, 10}};
  char fn[32];
  snprintf(fn, sizeof fn, "%s", chase_fn);
  hpc_cupti_pc pcs[3] = {{sizeof(hpc_cupti_pc), 0xc0ffee, ldg, 0, 0, fn, 2, st_ldg, 7},
                         {sizeof(hpc_cupti_pc), 0xc0ffee, 0, 0, 0, fn, 1, st_first, 7},
                         {sizeof(hpc_cupti_pc), 0xbad, 0, 0, 0, fn, 1, st_first, 7}};
  hpc_cupti_pc_data data = {.size = sizeof data, .totalNumPcs = 3, .pPcData = pcs};
  hpc_cupti_pc_cursor cur = {0};
  hp_pc_sample rows[8];
  uint64_t next = 0;
  size_t nr = hpc_cupti_pc_rows(&data, &reasons, cap_where, NULL, 1500, 0, 0, &next, &cur, rows, 8);
  CHECK_MSG(nr == 3 && cur.unplaced == 10, "%zu rows, %llu unplaced", nr, (unsigned long long)cur.unplaced);
  uint64_t text = 0;
  CHECK(hpc_cubin_func_offset(b, n, chase_fn, &text) == 0);
  CHECK(nr == 3 && rows[0].code_object_id == 2 && rows[0].offset == text + ldg && rows[2].offset == text);
  for (size_t i = 0; i < nr; i++)
    CHECK(hp_write_pc_sample(s, &rows[i]) == HP_OK);
  CHECK(hp_store_close(s) == HP_OK);
  /* read back: two code objects of one hash, whose bytes are the cubin */
  CHECK(hp_store_open(path, NULL, HP_READ, &s) == HP_OK);
  hp_cursor *c;
  hp_code_object co = {.size = sizeof co};
  char hash[2][65] = {"", ""}, uri[2][32] = {"", ""};
  size_t nco = 0;
  CHECK(hp_cursor_open(s, HP_TABLE_CODE_OBJECT, &c) == HP_OK);
  while (hp_cursor_next(c, &co) == HP_OK && nco < 2) {
    snprintf(uri[nco], sizeof uri[nco], "%s", co.uri);
    snprintf(hash[nco++], 65, "%s", co.hash);
  }
  hp_cursor_close(c);
  CHECK(nco == 2 && !strcmp(hash[0], hash[1]) && !strcmp(uri[0], "cuda://module/1") &&
        !strcmp(uri[1], "cuda://module/2"));
  void *back = NULL;
  size_t nback = 0;
  CHECK(hp_read_code_bytes(s, hash[0], &back, &nback) == HP_OK && nback == n && !memcmp(back, b, n));
  free(back);
  hp_store_close(s);
  /* analysis: the load's line first with its reason; its instruction an LDG */
  snprintf(cmd, sizeof cmd,
           "HUBPROF_NVDISASM='%s' '%s' analyze --by line --kernel '*chase*' --format csv %s/s.db > "
           "%s/line.csv 2>%s/err && "
           "HUBPROF_NVDISASM='%s' '%s' analyze --by instruction --kernel '*chase*' --format csv %s/s.db > "
           "%s/insn.csv 2>>%s/err",
           nvdisasm, hp, dir, dir, dir, nvdisasm, hp, dir, dir, dir);
  if (system(cmd) != 0) {
    snprintf(cmd, sizeof cmd, "cat %s/err", dir);
    CHECK(system(cmd) == 0 && 0);
  }
  char out[4096] = "", line[1024];
  snprintf(path, sizeof path, "%s/line.csv", dir);
  f = fopen(path, "r");
  size_t got = f ? fread(out, 1, sizeof out - 1, f) : 0;
  out[got] = 0;
  if (f) fclose(f);
  char *l2 = strchr(out, '\n'); /* the first row after the header */
  snprintf(line, sizeof line, "%.*s", l2 ? (int)strcspn(l2 + 1, "\n") : 0, l2 ? l2 + 1 : "");
  CHECK_MSG(strstr(line, "chase.cu:5") && strstr(line, "long_scoreboard"), "by line: %s", out);
  snprintf(path, sizeof path, "%s/insn.csv", dir);
  f = fopen(path, "r");
  got = f ? fread(out, 1, sizeof out - 1, f) : 0;
  out[got] = 0;
  if (f) fclose(f);
  CHECK_MSG(strstr(out, "LDG") && strstr(out, "long_scoreboard"), "by instruction: %s", out);
  hpc_cubins_free(cap_reg);
  free(b);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

/* The rows through a store of each format and back. */
static void stores(const hp_pc_sample *ps, size_t nps, const hp_counter_sample *cs, size_t ncs) {
  static const char *const fmts[] = {"log", "rocpd", "parquet"};
  char dir[] = "/tmp/hubprof-cuptirows-XXXXXX", path[128], cmd[160];
  if (!mkdtemp(dir)) return;
  for (int f = 0; f < 3; f++) {
    snprintf(path, sizeof path, "%s/s.%s", dir, fmts[f]);
    hp_store *s;
    CHECK(hp_store_open(path, fmts[f], HP_CREATE, &s) == HP_OK);
    hp_process p = {.size = sizeof p, .id = 1, .pid = 9};
    hp_write_process(s, &p);
    hp_counter_info ci[2] = {{.size = sizeof ci[0], .id = 6, .name = "sm__cycles_active.sum"},
                             {.size = sizeof ci[0], .id = 7, .name = "dram__bytes.sum"}};
    hp_write_counter_info(s, &ci[0]);
    hp_write_counter_info(s, &ci[1]);
    for (uint64_t d = 3; d <= 4; d++) {
      hp_dispatch di = {
          .size = sizeof di, .id = d, .dispatch_id = d, .process_id = 1, .start_ns = 100, .end_ns = 1200};
      hp_write_dispatch(s, &di);
    }
    for (size_t i = 0; i < nps; i++)
      CHECK(hp_write_pc_sample(s, &ps[i]) == HP_OK);
    for (size_t i = 0; i < ncs; i++)
      CHECK(hp_write_counter_sample(s, &cs[i]) == HP_OK);
    CHECK(hp_store_close(s) == HP_OK);
    CHECK(hp_store_open(path, NULL, HP_READ, &s) == HP_OK);
    hp_cursor *c;
    CHECK(hp_cursor_open(s, HP_TABLE_PC_SAMPLE, &c) == HP_OK);
    hp_pc_sample r = {.size = sizeof r};
    size_t k = 0;
    while (hp_cursor_next(c, &r) == HP_OK && k < nps) {
      CHECK_MSG(r.offset == ps[k].offset && !strcmp(r.stall_reason, ps[k].stall_reason) &&
                    r.samples == ps[k].samples,
                "%s: row %zu", fmts[f], k);
      k++;
    }
    hp_cursor_close(c);
    CHECK(k == nps);
    CHECK(hp_cursor_open(s, HP_TABLE_COUNTER_SAMPLE, &c) == HP_OK);
    hp_counter_sample q = {.size = sizeof q};
    k = 0;
    while (hp_cursor_next(c, &q) == HP_OK && k < ncs) {
      CHECK(q.value == cs[k].value && q.timestamp_ns == cs[k].timestamp_ns);
      k++;
    }
    hp_cursor_close(c);
    CHECK(k == ncs);
    hp_store_close(s);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

/* The CUPTI side without a GPU: libcupti found by cupti_host.c, every PC-sampling entry point resolved in it
 * (a misspelt name would say "has no"), then enabling on no context fails with one line, and draining and
 * closing that state do nothing harmful. Without libcupti (or in a sanitizer build, which does not load it)
 * the line says so. */
static void cupti_side(void) {
  hpc_cupti_pcs *s = hpc_cupti_pcs_open(NULL, 0, 0);
  CHECK(s != NULL);
  const char *e = hpc_cupti_pcs_error(s);
  CHECK_MSG(*e && !strstr(e, "has no") && !strchr(e, '\n'), "%s", e);
  if (strstr(e, "cuptiPCSamplingEnable failed"))
    printf("test_cupti_pc: libcupti's PC sampling entry points resolved (%s)\n", e);
  else
    printf("test_cupti_pc: CUPTI part: %s\n", e);
  uint64_t ids0 = 0;
  CHECK(hpc_cupti_pcs_drain(s, NULL, where, NULL, 0, 0, &ids0, NULL, NULL) == 0 && ids0 == 0);
  uint64_t w = 1, u = 1, d = 1;
  hpc_cupti_pcs_stats(s, &w, &u, &d);
  CHECK(!w && !u && !d);
  hpc_cupti_pcs_close(s);
  /* PM sampling: every entry point resolved too, then the first call that needs a GPU fails with one line */
  static const char *const metrics[] = {"sm__cycles_active.sum"};
  hpc_cupti_pm *pm = hpc_cupti_pm_open(0, metrics, 1, 0, 0);
  CHECK(pm != NULL);
  e = hpc_cupti_pm_error(pm);
  CHECK_MSG(*e && !strstr(e, "has no") && !strchr(e, '\n'), "%s", e);
  printf("test_cupti_pc: PM part: %s\n", e);
  hpc_pm_window pw = {1, 0, 100};
  uint64_t next = 0;
  const uint64_t ids[1] = {6};
  CHECK(hpc_cupti_pm_drain(pm, NULL, ids, &pw, 1, 0, &next) == 0);
  uint64_t w0 = 1;
  u = d = 1;
  hpc_cupti_pm_stats(pm, &w0, &u, &d);
  CHECK(!w0 && !u && !d);
  hpc_cupti_pm_close(pm);
  pm = hpc_cupti_pm_open(0, metrics, 0, 0, 0); /* no metrics: refused before CUPTI */
  CHECK(pm && strstr(hpc_cupti_pm_error(pm), "1 to 32 metrics"));
  hpc_cupti_pm_close(pm);
}

int main(void) {
  hp_pc_sample ps[8];
  hp_counter_sample cs[8];
  size_t nps = 0, ncs = 0;
  pc_rows(ps, &nps);
  pm_rows(cs, &ncs);
  cubin();
  capture();
  stores(ps, nps, cs, ncs);
  cupti_side();
  printf("test_cupti_pc: %d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
