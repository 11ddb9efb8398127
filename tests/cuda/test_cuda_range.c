/* CUDA counters without a GPU (src/collector/prov_cuda_range*.c): the Range Profiler's parameter structs
 * against the toolkit's headers (where present; cupti_profiler_host.h is C++ only, so hpc_crp_eval is
 * not checked here: it is sample_cupti_pm.c's pm_eval, field for field), the values table that carries a
 * launch's evaluated ranges to its kernel records (graph launches, unknown and reused correlation ids), and,
 * with libcupti, the configuration images the collector builds for GH100 and GB100 from metric lists through
 * the same call (hc_cupti_config, no counter availability: no GPU here), their pass counts printed for
 * test_cuda.sh to compare with CUPTI's own (tests/cupti/cupti_check.py). usage: test_cuda_range [CHIP
 * LIST]...   (each pair: "passes CHIP N" printed, N from the image) */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "counters.h"
#include "prov_cuda.h"
#include "prov_cuda_range.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CUPTI_H
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#define SIZE_IS(ours, last, theirs)                                                                          \
  _Static_assert(HPC_CRP_SIZE(ours, last) == theirs##_STRUCT_SIZE, #theirs " has another size")
SIZE_IS(hpc_crp_init, priv, CUpti_Profiler_Initialize_Params);
SIZE_IS(hpc_crp_chip, chip, CUpti_Device_GetChipName_Params);
SIZE_IS(hpc_crp_avail, image, CUpti_Profiler_GetCounterAvailability_Params);
SIZE_IS(hpc_crp_enable, obj, CUpti_RangeProfiler_Enable_Params);
SIZE_IS(hpc_crp_obj, obj, CUpti_RangeProfiler_Start_Params);
SIZE_IS(hpc_crp_obj, obj, CUpti_RangeProfiler_Disable_Params);
SIZE_IS(hpc_crp_stop, all_submitted, CUpti_RangeProfiler_Stop_Params);
SIZE_IS(hpc_crp_config, target_level, CUpti_RangeProfiler_SetConfig_Params);
SIZE_IS(hpc_crp_decode, dropped, CUpti_RangeProfiler_DecodeData_Params);
SIZE_IS(hpc_crp_dsize, data_size, CUpti_RangeProfiler_GetCounterDataSize_Params);
SIZE_IS(hpc_crp_dinit, data, CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
SIZE_IS(hpc_crp_dinfo, ranges, CUpti_RangeProfiler_GetCounterDataInfo_Params);
#define SAME_AT(ours, f, theirs, g)                                                                          \
  _Static_assert(offsetof(ours, f) == offsetof(theirs, g), #theirs "." #g " moved")
SAME_AT(hpc_crp_config, range, CUpti_RangeProfiler_SetConfig_Params, range);
SAME_AT(hpc_crp_config, replay, CUpti_RangeProfiler_SetConfig_Params, replayMode);
SAME_AT(hpc_crp_config, max_ranges, CUpti_RangeProfiler_SetConfig_Params, maxRangesPerPass);
SAME_AT(hpc_crp_config, min_level, CUpti_RangeProfiler_SetConfig_Params, minNestingLevel);
SAME_AT(hpc_crp_stop, all_submitted, CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);
SAME_AT(hpc_crp_dsize, max_nodes, CUpti_RangeProfiler_GetCounterDataSize_Params, maxNumRangeTreeNodes);
_Static_assert(CUPTI_AutoRange == 1 && CUPTI_KernelReplay == 2,
               "the range and replay modes the collector sets");
_Static_assert(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES == 35, "the error the collector names");
#endif

/* ---- the values table ---------------------------------------------------------------------------------- */
static void values(void) {
  static const uint64_t ids[3] = {1, 2, 3};
  static const uint32_t pass[3] = {1, 1, 2};
  hpc_cu_rv *t = hpc_cu_rv_new(4, 3); /* 16 slots of 3 values */
  CHECK(t != NULL);
  hp_counter_value out[8];
  uint32_t passes = 99;
  CHECK(hpc_cu_rv_take(t, 5, 100, out, 8, &passes) == 0 && passes == 0); /* nothing known */
  double a[3] = {10, 20.5, 1e12}, b[3] = {11, 21, 2e12}, c[3] = {7, 8, 9};
  hpc_cu_rv_put(t, 5, 0, a, ids, pass, 3, 12); /* a launch with one range: its runtime call's id */
  hpc_cu_rv_put(t, 6, 0, a, ids, pass, 3, 12); /* ... and its driver call's */
  size_t n = hpc_cu_rv_take(t, 5, 100, out, 8, &passes);
  CHECK(n == 3 && passes == 12);
  CHECK(out[0].dispatch_id == 100 && out[0].counter_id == 1 && out[0].pass == 1 && out[0].value == 10);
  CHECK(out[2].counter_id == 3 && out[2].pass == 2 && out[2].value == 1e12 && out[2].imputed == 0);
  CHECK(out[1].size == sizeof out[1] && out[1].region_id == 0);
  CHECK(hpc_cu_rv_take(t, 5, 100, out, 8, &passes) == 0); /* one range: a second record of it gets none */
  /* a graph launch: two kernel nodes, two ranges, taken in the records' order */
  hpc_cu_rv_put(t, 40, 0, b, ids, pass, 3, 4);
  hpc_cu_rv_put(t, 40, 1, c, ids, pass, 2, 4); /* the second range's configuration: two values */
  CHECK(hpc_cu_rv_take(t, 40, 200, out, 8, &passes) == 3 && out[0].value == 11 && out[0].dispatch_id == 200);
  CHECK(hpc_cu_rv_take(t, 40, 201, out, 8, &passes) == 2 && out[1].value == 8 && out[1].dispatch_id == 201);
  CHECK(hpc_cu_rv_take(t, 40, 202, out, 8, &passes) == 0);
  CHECK(hpc_cu_rv_take(t, 40, 200, out, 2, &passes) == 0); /* max rows: past the ranges, still none */
  /* rows limited by max; more values than the table holds are cut to its width */
  double d[5] = {1, 2, 3, 4, 5};
  static const uint64_t ids5[5] = {1, 2, 3, 4, 5};
  static const uint32_t pass5[5] = {1, 1, 1, 1, 1};
  hpc_cu_rv_put(t, 77, 0, d, ids5, pass5, 5, 1);
  CHECK(hpc_cu_rv_take(t, 77, 300, out, 2, &passes) == 2 && out[1].value == 2);
  hpc_cu_rv_put(t, 78, 0, d, ids5, pass5, 5, 1);
  CHECK(hpc_cu_rv_take(t, 78, 301, out, 8, &passes) == 3 && out[2].value == 3);
  /* correlation id 0 (none) is never stored; a slot reused by a later launch loses the older one's values */
  hpc_cu_rv_put(t, 0, 0, a, ids, pass, 3, 1);
  CHECK(hpc_cu_rv_take(t, 0, 1, out, 8, &passes) == 0);
  uint32_t lost = 0;
  for (uint32_t corr = 1000; corr < 1100; corr++)
    hpc_cu_rv_put(t, corr, 0, a, ids, pass, 3, 1);
  for (uint32_t corr = 1000; corr < 1100; corr++)
    lost += hpc_cu_rv_take(t, corr, 1, out, 8, &passes) == 0;
  CHECK(lost >= 100 - 16 && lost < 100); /* at most one per slot survives */
  hpc_cu_rv_free(t);
  CHECK(hpc_cu_rv_new(4, 0) == NULL);
}

/* ---- configuration images from the host API (libcupti, no GPU) ------------------------------------------
 */
static int images(int argc, char **argv) {
  hc_cupti *c = NULL;
  if (hc_cupti_open(&c) != HC_OK) {
    printf("images skipped: %s\n", c ? hc_cupti_error(c) : "out of memory");
    hc_cupti_close(c);
    return 0;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    char *list = strdup(argv[i + 1]);
    const char *names[HPC_CU_RANGE_MAX];
    size_t n = 0;
    for (char *tok = strtok(list, ","); tok && n < HPC_CU_RANGE_MAX; tok = strtok(NULL, ","))
      names[n++] = tok;
    void *host = NULL;
    uint8_t *image = NULL;
    size_t size = 0, passes = 0;
    char err[300];
    hc_status st =
        hc_cupti_config(c, 0, argv[i], NULL, names, n, &host, &image, &size, &passes, err, sizeof err);
    CHECK_MSG(st == HC_OK, "%s: %s", argv[i], err);
    CHECK(size > 0 && passes >= 1);
    /* the planner's count of the same list (a host object of its own) is the same */
    hc_provider *p = NULL;
    size_t plan = 0;
    CHECK(hc_cupti_device_open(argv[i], &p) == HC_OK && hc_cupti_passes(p, names, n, &plan) == HC_OK);
    CHECK_MSG(plan == passes, "%s: image %zu passes, planner %zu", argv[i], passes, plan);
    printf("passes %s %zu image %zu bytes\n", argv[i], passes, size);
    hc_provider_close(p);
    hc_cupti_host_close(c, host);
    free(image);
    free(list);
  }
  /* an unknown metric: one line naming CUPTI's call, no image */
  const char *bad[1] = {"dram__bytes_reed.sum"};
  void *host = NULL;
  uint8_t *image = NULL;
  size_t size = 0, passes = 0;
  char err[300] = "";
  CHECK(hc_cupti_config(c, 0, "GH100", NULL, bad, 1, &host, &image, &size, &passes, err, sizeof err) !=
        HC_OK);
  CHECK_MSG(strstr(err, "cuptiProfilerHostConfigAddMetrics") != NULL, "%s", err);
  hc_cupti_host_close(c, host);
  free(image);
  hc_cupti_close(c);
  return 1;
}

/* ---- a profile store written as the collector writes one --------------------------------------------------
 */
/* Two launches of one kernel on a GH100: their kernel records converted (prov_cuda_conv.c), their ranges'
 * values put by correlation id and taken by the records, the rows written as write_record does (dispatch,
 * then its counter values), with the counter_info rows of the plan. test_cuda.sh analyzes the store with the
 * NVIDIA metric set and checks the figures. */
static void profile_store(const char *path) {
  static const char *const names[4] = {"dram__bytes_read.sum", "dram__bytes_write.sum",
                                       "smsp__inst_executed.sum", "sm__cycles_elapsed.sum"};
  static const uint64_t ids[4] = {1, 2, 3, 4};
  static const uint32_t pass[4] = {1, 1, 1, 1};
  hpc_cu_rv *t = hpc_cu_rv_new(6, 4);
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, NULL, HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK || !t) {
    hp_store_abort(s);
    hpc_cu_rv_free(t);
    return;
  }
  hp_node node = {.size = sizeof node, .id = 1, .hostname = "h"};
  hp_process proc = {.size = sizeof proc, .id = 1, .node_id = 1, .pid = 1, .rank = -1, .command = "cuda_app"};
  hp_agent ag = {.size = sizeof ag,
                 .id = 1,
                 .node_id = 1,
                 .type = HP_AGENT_GPU,
                 .vendor = "NVIDIA",
                 .name = "GH100",
                 .product_name = "NVIDIA H100",
                 .compute_units = 132,
                 .max_clock_mhz = 1980};
  hp_queue q = {.size = sizeof q, .id = 1, .process_id = 1, .agent_id = 1, .name = "stream 7"};
  hp_kernel_symbol ks = {
      .size = sizeof ks, .id = 1, .name = "_Z5copy4PK6float4PS_m", .display_name = "copy4"};
  CHECK(hp_write_node(s, &node) == HP_OK && hp_write_process(s, &proc) == HP_OK &&
        hp_write_agent(s, &ag) == HP_OK && hp_write_queue(s, &q) == HP_OK &&
        hp_write_kernel_symbol(s, &ks) == HP_OK && hp_write_metadata(s, "mode", "profile") == HP_OK);
  for (size_t i = 0; i < 4; i++) {
    hp_counter_info ci = {.size = sizeof ci,
                          .id = ids[i],
                          .name = names[i],
                          .block = "",
                          .unit = "",
                          .description = "",
                          .expression = ""};
    CHECK(hp_write_counter_info(s, &ci) == HP_OK);
  }
  for (uint32_t l = 0; l < 2; l++) {
    /* launch l: 1 ms on the device, 2^28 bytes read and written, 2^20 instructions over 2^21 cycles */
    double v[4] = {268435456.0 * (l + 1), 268435456.0 * (l + 1), 1048576.0, 2097152.0};
    uint32_t corr = 500 + 2 * l;
    hpc_cu_rv_put(t, corr, 0, v, ids, pass, 4, 11);
    struct {
      hpc_cu_kernel k;
      char pad[64];
    } rec;
    memset(&rec, 0, sizeof rec);
    rec.k.kind = HPC_CU_KIND_CONCURRENT_KERNEL;
    rec.k.start = 1000000 + 2000000ull * l;
    rec.k.end = rec.k.start + 1000000;
    rec.k.gridX = 1024, rec.k.gridY = rec.k.gridZ = 1;
    rec.k.blockX = 256, rec.k.blockY = rec.k.blockZ = 1;
    rec.k.correlationId = corr;
    rec.k.name = ks.name;
    hpc_cu_ids cid = {.row_id = 10 + l, .agent_id = 1, .queue_id = 1, .kernel_id = 1};
    hp_dispatch d;
    hpc_cu_dispatch_row(&rec.k, &cid, &d);
    hp_counter_value out[8];
    uint32_t passes = 0;
    size_t n = hpc_cu_rv_take(t, rec.k.correlationId, d.id, out, 8, &passes);
    CHECK(n == 4 && passes == 11);
    d.passes = passes;
    d.process_id = 1;
    CHECK_OK(hp_write_dispatch(s, &d), s);
    for (size_t i = 0; i < n; i++)
      CHECK_OK(hp_write_counter_value(s, &out[i]), s);
  }
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  hpc_cu_rv_free(t);
}

int main(int argc, char **argv) {
  values();
  if (argc == 3 && !strcmp(argv[1], "--store")) {
    profile_store(argv[2]);
    return check_report("test_cuda_range");
  }
  images(argc, argv);
  return check_report("test_cuda_range");
}
