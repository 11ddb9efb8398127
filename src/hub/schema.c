/* Hub data model descriptions: one table of columns per row struct, and the row copy helpers built on it.
 * Generic code (merge, bindings, the log encoder) walks rows through these; nothing here knows a format. */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define COL(st, f, ty, ref)                                                                                  \
  { #f, ty, offsetof(st, f), ref }
#define COLN(st, nm, f, ty)                                                                                  \
  { nm, ty, offsetof(st, f), NULL }

static const hp_column node_cols[] = {
    COL(hp_node, id, HP_COL_U64, NULL),         COL(hp_node, hostname, HP_COL_STR, NULL),
    COL(hp_node, machine_id, HP_COL_STR, NULL), COL(hp_node, system_name, HP_COL_STR, NULL),
    COL(hp_node, release, HP_COL_STR, NULL),    COL(hp_node, version, HP_COL_STR, NULL),
    COL(hp_node, machine, HP_COL_STR, NULL),
};
static const hp_column process_cols[] = {
    COL(hp_process, id, HP_COL_U64, NULL),
    COL(hp_process, node_id, HP_COL_U64, "node"),
    COL(hp_process, pid, HP_COL_I64, NULL),
    COL(hp_process, ppid, HP_COL_I64, NULL),
    COL(hp_process, rank, HP_COL_I64, NULL),
    COL(hp_process, start_ns, HP_COL_I64, NULL),
    COL(hp_process, end_ns, HP_COL_I64, NULL),
    COL(hp_process, command, HP_COL_STR, NULL),
    COL(hp_process, lost_records, HP_COL_U64, NULL),
    COL(hp_process, world_size, HP_COL_I64, NULL),
    COL(hp_process, local_rank, HP_COL_I64, NULL),
    COL(hp_process, job_id, HP_COL_STR, NULL),
    COL(hp_process, clock_offset_ns, HP_COL_I64, NULL),
    COL(hp_process, exit_code, HP_COL_I64, NULL),
    COL(hp_process, exit_signal, HP_COL_I64, NULL),
};
static const hp_column thread_cols[] = {
    COL(hp_thread, id, HP_COL_U64, NULL),     COL(hp_thread, process_id, HP_COL_U64, "process"),
    COL(hp_thread, tid, HP_COL_I64, NULL),    COL(hp_thread, start_ns, HP_COL_I64, NULL),
    COL(hp_thread, end_ns, HP_COL_I64, NULL), COL(hp_thread, name, HP_COL_STR, NULL),
};
static const hp_column agent_cols[] = {
    COL(hp_agent, id, HP_COL_U64, NULL),
    COL(hp_agent, node_id, HP_COL_U64, "node"),
    COL(hp_agent, type, HP_COL_I32, NULL),
    COL(hp_agent, device_index, HP_COL_I32, NULL),
    COL(hp_agent, vendor, HP_COL_STR, NULL),
    COL(hp_agent, name, HP_COL_STR, NULL),
    COL(hp_agent, product_name, HP_COL_STR, NULL),
    COL(hp_agent, runtime, HP_COL_STR, NULL),
    COL(hp_agent, compute_units, HP_COL_I64, NULL),
    COL(hp_agent, max_clock_mhz, HP_COL_I64, NULL),
    COL(hp_agent, global_mem_bytes, HP_COL_I64, NULL),
    COL(hp_agent, local_mem_bytes, HP_COL_I64, NULL),
    COL(hp_agent, wave_size, HP_COL_I64, NULL),
};
static const hp_column queue_cols[] = {
    COL(hp_queue, id, HP_COL_U64, NULL),
    COL(hp_queue, process_id, HP_COL_U64, "process"),
    COL(hp_queue, agent_id, HP_COL_U64, "agent"),
    COL(hp_queue, name, HP_COL_STR, NULL),
};
static const hp_column code_object_cols[] = {
    COL(hp_code_object, id, HP_COL_U64, NULL),
    COL(hp_code_object, process_id, HP_COL_U64, "process"),
    COL(hp_code_object, agent_id, HP_COL_U64, "agent"),
    COL(hp_code_object, uri, HP_COL_STR, NULL),
    COL(hp_code_object, load_base, HP_COL_U64, NULL),
    COL(hp_code_object, load_size, HP_COL_U64, NULL),
    COL(hp_code_object, hash, HP_COL_STR, NULL),
    COL(hp_code_object, code_size, HP_COL_U64, NULL),
    COL(hp_code_object, build_options, HP_COL_STR, NULL),
    COL(hp_code_object, source, HP_COL_STR, NULL),
    COL(hp_code_object, ir_hash, HP_COL_STR, NULL),
};
static const hp_column kernel_symbol_cols[] = {
    COL(hp_kernel_symbol, id, HP_COL_U64, NULL),
    COL(hp_kernel_symbol, code_object_id, HP_COL_U64, "code_object"),
    COL(hp_kernel_symbol, name, HP_COL_STR, NULL),
    COL(hp_kernel_symbol, display_name, HP_COL_STR, NULL),
    COL(hp_kernel_symbol, private_size, HP_COL_I64, NULL),
    COL(hp_kernel_symbol, group_size, HP_COL_I64, NULL),
    COL(hp_kernel_symbol, program_hash, HP_COL_STR, NULL),
    COL(hp_kernel_symbol, registers, HP_COL_I64, NULL),
};
static const hp_column dispatch_cols[] = {
    COL(hp_dispatch, id, HP_COL_U64, NULL),
    COL(hp_dispatch, dispatch_id, HP_COL_U64, NULL),
    COL(hp_dispatch, process_id, HP_COL_U64, "process"),
    COL(hp_dispatch, thread_id, HP_COL_U64, "thread"),
    COL(hp_dispatch, agent_id, HP_COL_U64, "agent"),
    COL(hp_dispatch, queue_id, HP_COL_U64, "queue"),
    COL(hp_dispatch, kernel_id, HP_COL_U64, "kernel_symbol"),
    {"grid_x", HP_COL_U32, offsetof(hp_dispatch, grid) + 0, NULL},
    {"grid_y", HP_COL_U32, offsetof(hp_dispatch, grid) + 4, NULL},
    {"grid_z", HP_COL_U32, offsetof(hp_dispatch, grid) + 8, NULL},
    {"workgroup_x", HP_COL_U32, offsetof(hp_dispatch, workgroup) + 0, NULL},
    {"workgroup_y", HP_COL_U32, offsetof(hp_dispatch, workgroup) + 4, NULL},
    {"workgroup_z", HP_COL_U32, offsetof(hp_dispatch, workgroup) + 8, NULL},
    COL(hp_dispatch, private_size, HP_COL_I64, NULL),
    COL(hp_dispatch, group_size, HP_COL_I64, NULL),
    COL(hp_dispatch, start_ns, HP_COL_I64, NULL),
    COL(hp_dispatch, end_ns, HP_COL_I64, NULL),
    COL(hp_dispatch, enqueue_ns, HP_COL_I64, NULL),
    COL(hp_dispatch, passes, HP_COL_U32, NULL),
    COL(hp_dispatch, bytes_accessible, HP_COL_U64, NULL),
    COL(hp_dispatch, bytes_restored, HP_COL_U64, NULL),
    COL(hp_dispatch, cold, HP_COL_U32, NULL),
    COL(hp_dispatch, region_id, HP_COL_U64, "region"),
    COL(hp_dispatch, correlation_id, HP_COL_U64, NULL),
    COL(hp_dispatch, graph_id, HP_COL_U64, NULL),
};
static const hp_column counter_info_cols[] = {
    COL(hp_counter_info, id, HP_COL_U64, NULL),         COL(hp_counter_info, agent_id, HP_COL_U64, "agent"),
    COL(hp_counter_info, name, HP_COL_STR, NULL),       COL(hp_counter_info, description, HP_COL_STR, NULL),
    COL(hp_counter_info, block, HP_COL_STR, NULL),      COL(hp_counter_info, unit, HP_COL_STR, NULL),
    COL(hp_counter_info, expression, HP_COL_STR, NULL),
};
static const hp_column counter_value_cols[] = {
    COL(hp_counter_value, dispatch_id, HP_COL_U64, "dispatch"),
    COL(hp_counter_value, counter_id, HP_COL_U64, "counter_info"),
    COL(hp_counter_value, pass, HP_COL_U32, NULL),
    COL(hp_counter_value, imputed, HP_COL_U32, NULL),
    COL(hp_counter_value, value, HP_COL_F64, NULL),
    COL(hp_counter_value, region_id, HP_COL_U64, "region"),
};
static const hp_column region_cols[] = {
    COL(hp_region, id, HP_COL_U64, NULL),
    COL(hp_region, process_id, HP_COL_U64, "process"),
    COL(hp_region, thread_id, HP_COL_U64, "thread"),
    COL(hp_region, name, HP_COL_STR, NULL),
    COL(hp_region, category, HP_COL_STR, NULL),
    COL(hp_region, start_ns, HP_COL_I64, NULL),
    COL(hp_region, end_ns, HP_COL_I64, NULL),
};
static const hp_column metadata_cols[] = {
    COL(hp_metadata, key, HP_COL_STR, NULL),
    COL(hp_metadata, value, HP_COL_STR, NULL),
};
static const hp_column pc_sample_cols[] = {
    COL(hp_pc_sample, id, HP_COL_U64, NULL),
    COL(hp_pc_sample, dispatch_id, HP_COL_U64, "dispatch"),
    COL(hp_pc_sample, code_object_id, HP_COL_U64, "code_object"),
    COL(hp_pc_sample, offset, HP_COL_U64, NULL),
    COL(hp_pc_sample, timestamp_ns, HP_COL_I64, NULL),
    COL(hp_pc_sample, thread_id, HP_COL_U64, "thread"),
    COL(hp_pc_sample, weight, HP_COL_U64, NULL),
    COL(hp_pc_sample, stall_reason, HP_COL_STR, NULL),
    COL(hp_pc_sample, samples, HP_COL_U64, NULL),
};
static const hp_column counter_sample_cols[] = {
    COL(hp_counter_sample, id, HP_COL_U64, NULL),
    COL(hp_counter_sample, dispatch_id, HP_COL_U64, "dispatch"),
    COL(hp_counter_sample, counter_id, HP_COL_U64, "counter_info"),
    COL(hp_counter_sample, timestamp_ns, HP_COL_I64, NULL),
    COL(hp_counter_sample, value, HP_COL_F64, NULL),
    COL(hp_counter_sample, sample_set, HP_COL_U64, NULL),
    COL(hp_counter_sample, process_id, HP_COL_U64, "process"),
};
static const hp_column code_blob_cols[] = {
    COL(hp_code_blob, id, HP_COL_U64, NULL),     COL(hp_code_blob, hash, HP_COL_STR, NULL),
    COL(hp_code_blob, offset, HP_COL_U64, NULL), COL(hp_code_blob, total_size, HP_COL_U64, NULL),
    COL(hp_code_blob, data, HP_COL_STR, NULL),
};
static const hp_column memory_copy_cols[] = {
    COL(hp_memory_copy, id, HP_COL_U64, NULL),
    COL(hp_memory_copy, process_id, HP_COL_U64, "process"),
    COL(hp_memory_copy, thread_id, HP_COL_U64, "thread"),
    COL(hp_memory_copy, agent_id, HP_COL_U64, "agent"),
    COL(hp_memory_copy, queue_id, HP_COL_U64, "queue"),
    COL(hp_memory_copy, name, HP_COL_STR, NULL),
    COL(hp_memory_copy, direction, HP_COL_U32, NULL),
    COL(hp_memory_copy, bytes, HP_COL_U64, NULL),
    COL(hp_memory_copy, enqueue_ns, HP_COL_I64, NULL),
    COL(hp_memory_copy, start_ns, HP_COL_I64, NULL),
    COL(hp_memory_copy, end_ns, HP_COL_I64, NULL),
    COL(hp_memory_copy, region_id, HP_COL_U64, "region"),
};
static const hp_column ceiling_cols[] = {
    COL(hp_ceiling, id, HP_COL_U64, NULL),   COL(hp_ceiling, agent_id, HP_COL_U64, "agent"),
    COL(hp_ceiling, name, HP_COL_STR, NULL), COL(hp_ceiling, value, HP_COL_F64, NULL),
    COL(hp_ceiling, unit, HP_COL_STR, NULL), COL(hp_ceiling, method, HP_COL_STR, NULL),
    COL(hp_ceiling, note, HP_COL_STR, NULL), COL(hp_ceiling, measured_ns, HP_COL_I64, NULL),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define DESC(nm, T, st, cols)                                                                                \
  { nm, T, sizeof(st), N(cols), cols }

static const hp_table_desc descs[HP_TABLE_COUNT] = {
    DESC("node", HP_TABLE_NODE, hp_node, node_cols),
    DESC("process", HP_TABLE_PROCESS, hp_process, process_cols),
    DESC("thread", HP_TABLE_THREAD, hp_thread, thread_cols),
    DESC("agent", HP_TABLE_AGENT, hp_agent, agent_cols),
    DESC("queue", HP_TABLE_QUEUE, hp_queue, queue_cols),
    DESC("code_object", HP_TABLE_CODE_OBJECT, hp_code_object, code_object_cols),
    DESC("kernel_symbol", HP_TABLE_KERNEL_SYMBOL, hp_kernel_symbol, kernel_symbol_cols),
    DESC("dispatch", HP_TABLE_DISPATCH, hp_dispatch, dispatch_cols),
    DESC("counter_info", HP_TABLE_COUNTER_INFO, hp_counter_info, counter_info_cols),
    DESC("counter_value", HP_TABLE_COUNTER_VALUE, hp_counter_value, counter_value_cols),
    DESC("region", HP_TABLE_REGION, hp_region, region_cols),
    DESC("metadata", HP_TABLE_METADATA, hp_metadata, metadata_cols),
    DESC("pc_sample", HP_TABLE_PC_SAMPLE, hp_pc_sample, pc_sample_cols),
    DESC("counter_sample", HP_TABLE_COUNTER_SAMPLE, hp_counter_sample, counter_sample_cols),
    DESC("code_blob", HP_TABLE_CODE_BLOB, hp_code_blob, code_blob_cols),
    DESC("memory_copy", HP_TABLE_MEMORY_COPY, hp_memory_copy, memory_copy_cols),
    DESC("ceiling", HP_TABLE_CEILING, hp_ceiling, ceiling_cols),
};

/* Tables whose rows are many (streamed by readers and merge, never held in memory, never de-duplicated by
 * key); the others are small and keyed. */
int hp_table_streamed(hp_table t) {
  return t == HP_TABLE_DISPATCH || t == HP_TABLE_COUNTER_VALUE || t == HP_TABLE_REGION ||
         t == HP_TABLE_PC_SAMPLE || t == HP_TABLE_COUNTER_SAMPLE || t == HP_TABLE_CODE_BLOB ||
         t == HP_TABLE_MEMORY_COPY;
}

const hp_table_desc *hp_table_describe(hp_table t) {
  if ((unsigned)t >= HP_TABLE_COUNT) return NULL;
  return &descs[t];
}

hp_table hp_table_from_name(const char *name) {
  if (!name) return HP_TABLE_COUNT;
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    if (strcmp(descs[t].name, name) == 0) return (hp_table)t;
  return HP_TABLE_COUNT;
}

static void strings_default(const hp_table_desc *d, void *row, size_t limit) {
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    if (c->type != HP_COL_STR || c->offset + sizeof(char *) > limit) continue;
    const char **p = (const char **)((char *)row + c->offset);
    if (!*p) *p = "";
  }
}

/* Offsets of each table's string columns, for the no-copy write path and hp_row_init (built once). */
static size_t str_offsets[HP_TABLE_COUNT][16];
static size_t str_count[HP_TABLE_COUNT];
static pthread_once_t str_once = PTHREAD_ONCE_INIT;

static void build_str_offsets(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++)
    for (size_t i = 0; i < descs[t].ncolumns && str_count[t] < 16; i++)
      if (descs[t].columns[i].type == HP_COL_STR) str_offsets[t][str_count[t]++] = descs[t].columns[i].offset;
}

void hp_row_init(hp_table t, void *row) {
  const hp_table_desc *d = &descs[t];
  memset(row, 0, d->row_size);
  *(uint32_t *)row = (uint32_t)d->row_size;
  pthread_once(&str_once, build_str_offsets);
  if (str_count[t] == 16) { /* a table of more string columns than the list holds (none yet) */
    strings_default(d, row, d->row_size);
    return;
  }
  for (size_t i = 0; i < str_count[t]; i++) /* readers make one per row: the list, not every column */
    *(const char **)((char *)row + str_offsets[t][i]) = "";
}

hp_status hp_row_import(hp_table t, const void *in, void *full) {
  const hp_table_desc *d = hp_table_describe(t);
  if (!d || !in) return HP_ERR_INVALID;
  uint32_t sz = *(const uint32_t *)in;
  if (sz < sizeof(uint32_t) + sizeof(uint64_t))
    return HP_ERR_INVALID; /* must hold at least its first field */
  size_t n = sz < d->row_size ? sz : d->row_size;
  memset(full, 0, d->row_size);
  memcpy(full, in, n);
  *(uint32_t *)full = (uint32_t)d->row_size;
  strings_default(d, full, d->row_size);
  return HP_OK;
}

hp_status hp_row_export(hp_table t, const void *full, void *out) {
  const hp_table_desc *d = hp_table_describe(t);
  if (!d || !out) return HP_ERR_INVALID;
  uint32_t sz = *(const uint32_t *)out;
  if (sz < sizeof(uint32_t) + sizeof(uint64_t)) return HP_ERR_INVALID;
  size_t n = sz < d->row_size ? sz : d->row_size;
  memcpy((char *)out + sizeof(uint32_t), (const char *)full + sizeof(uint32_t), n - sizeof(uint32_t));
  return HP_OK;
}

int hp_row_is_complete(hp_table t, const void *row) {
  if (*(const uint32_t *)row != descs[t].row_size) return 0;
  pthread_once(&str_once, build_str_offsets);
  for (size_t i = 0; i < str_count[t]; i++)
    if (!*(const char *const *)((const char *)row + str_offsets[t][i])) return 0;
  return 1;
}
