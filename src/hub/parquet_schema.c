/* The Parquet dataset schema: for every column of the hub's data model, the name, physical type, nullability
 * (the hub value that is written as NULL), unit and description it has in Parquet files (store version 2).
 * The writer, the reader (names and NULLs of both layouts) and the Python bindings all follow this one table.
 */
/* SPDX-License-Identifier: MIT */
#include "parquet_fmt.h"
#include "parquet_internal.h"
#include "hubprof/dataset.h"

#include <pthread.h>
#include <string.h>

/* Rows: hub column name (checked against hp_table_describe at first use), dataset name, physical type,
 * null rule, unit, description. */
typedef struct spec_row {
  const char *hub;
  const char *name;
  int phys;
  int null_rule; /* NR_* */
  const char *unit;
  const char *desc;
} spec_row;

enum { NR_NONE, NR_ZERO, NR_MINUS1, NR_EMPTY };

#define I64 PQ_INT64
#define I32 PQ_INT32
#define STR PQ_BYTE_ARRAY
#define F64 PQ_DOUBLE
#define BOOL PQ_BOOLEAN
#define ID(h, d)                                                                                             \
  { h, h, I64, NR_NONE, NULL, d }
#define REF(h, d)                                                                                            \
  { h, h, I64, NR_ZERO, NULL, d }
#define TXT(h, d)                                                                                            \
  { h, h, STR, NR_EMPTY, NULL, d }
#define TIME(h, d)                                                                                           \
  { h, h, I64, NR_ZERO, "ns", d " (nanoseconds on the node's monotonic clock; see metadata clock.*)" }

static const spec_row node_s[] = {
    ID("id", "row id of the node"),       TXT("hostname", "host name"),
    TXT("machine_id", "/etc/machine-id"), TXT("system_name", "uname sysname"),
    TXT("release", "uname release"),      TXT("version", "uname version"),
    TXT("machine", "uname machine"),
};
static const spec_row process_s[] = {
    ID("id", "row id of the process"),
    REF("node_id", "node.id"),
    {"pid", "pid", I64, NR_ZERO, NULL, "operating system process id"},
    {"ppid", "ppid", I64, NR_ZERO, NULL, "parent process id"},
    {"rank", "rank", I64, NR_MINUS1, NULL, "MPI rank from the launcher's environment; NULL when none"},
    TIME("start_ns", "process start"),
    TIME("end_ns", "process end; NULL while running or when it died without saying"),
    TXT("command", "command line"),
    {"lost_records", "lost_records", I64, NR_NONE, "records", "records the collector could not store"},
    {"world_size", "world_size", I64, NR_MINUS1, NULL, "ranks in the MPI job; NULL when none"},
    {"local_rank", "local_rank", I64, NR_MINUS1, NULL,
     "rank among the job's ranks on this node; NULL when none"},
    TXT("job_id", "the launcher's job id"),
    {"clock_offset_ns", "clock_offset_ns", I64, NR_ZERO, "ns",
     "CLOCK_REALTIME - CLOCK_MONOTONIC_RAW of the node when the process's log opened: start_ns + "
     "clock_offset_ns is UTC nanoseconds since 1970"},
    {"exit_code", "exit_code", I64, NR_MINUS1, NULL,
     "the process's exit code (0-255); NULL where unknown (killed, or not seen to exit)"},
    {"exit_signal", "exit_signal", I64, NR_MINUS1, NULL,
     "the signal that ended the process, 0 when it exited; NULL where unknown"},
};
static const spec_row thread_s[] = {
    ID("id", "row id of the thread"),
    REF("process_id", "process.id"),
    {"tid", "tid", I64, NR_ZERO, NULL, "operating system thread id"},
    TIME("start_ns", "thread start"),
    TIME("end_ns", "thread end"),
    TXT("name", "thread name"),
};
static const spec_row agent_s[] = {
    ID("id", "row id of the agent (device)"),
    REF("node_id", "node.id"),
    {"type", "type", I32, NR_NONE, NULL, "0 unknown, 1 CPU, 2 GPU, 3 accelerator"},
    {"device_index", "device_index", I32, NR_NONE, NULL, "index among the node's devices of its runtime"},
    TXT("vendor", "vendor"),
    TXT("name", "short device name"),
    TXT("product_name", "marketing name"),
    TXT("runtime", "runtime and its version"),
    {"compute_units", "compute_units", I64, NR_ZERO, NULL, "compute units"},
    {"max_clock_mhz", "max_clock_mhz", I64, NR_ZERO, "MHz", "maximum clock"},
    {"global_mem_bytes", "global_mem_bytes", I64, NR_ZERO, "bytes", "global memory"},
    {"local_mem_bytes", "local_mem_bytes", I64, NR_ZERO, "bytes", "local (shared) memory per work-group"},
    {"wave_size", "wave_size", I64, NR_ZERO, "work-items", "SIMD width / warp / wavefront size"},
};
static const spec_row queue_s[] = {
    ID("id", "row id of the queue"),
    REF("process_id", "process.id"),
    REF("agent_id", "agent.id"),
    TXT("name", "queue name"),
};
static const spec_row code_object_s[] = {
    ID("id", "row id of the code object"),
    REF("process_id", "process.id"),
    REF("agent_id", "agent.id"),
    TXT("uri", "where the code came from"),
    {"load_base", "load_base", I64, NR_NONE, NULL, "load address"},
    {"load_size", "load_size", I64, NR_NONE, "bytes", "loaded size"},
};
static const spec_row kernel_symbol_s[] = {
    ID("id", "row id of the kernel symbol"),
    REF("code_object_id", "code_object.id"),
    TXT("name", "mangled / runtime kernel name"),
    TXT("display_name", "kernel name for people"),
    {"private_size", "private_size", I64, NR_NONE, "bytes", "static private bytes per work-item"},
    {"group_size", "group_size", I64, NR_NONE, "bytes", "static local bytes per work-group"},
    TXT("program_hash", "identity of the kernel's program (16 hex digits); a kernel is its name and program"),
    {"registers", "registers", I64, NR_NONE, NULL, "registers per work-item (CUDA: per thread), 0 unknown"},
};
static const spec_row dispatch_s[] = {
    ID("id", "row id of the dispatch (counter_value.dispatch_id refers to it)"),
    {"dispatch_id", "dispatch_seq", I64, NR_NONE, NULL,
     "the collector's number of the dispatch, unique only within its process and the same in every replay "
     "pass; not a row id"},
    REF("process_id", "process.id"),
    REF("thread_id", "thread.id"),
    REF("agent_id", "agent.id"),
    REF("queue_id", "queue.id"),
    REF("kernel_id", "kernel_symbol.id"),
    {"grid_x", "grid_x", I32, NR_NONE, "work-items", "global work size, x"},
    {"grid_y", "grid_y", I32, NR_NONE, "work-items", "global work size, y"},
    {"grid_z", "grid_z", I32, NR_NONE, "work-items", "global work size, z"},
    {"workgroup_x", "workgroup_x", I32, NR_ZERO, "work-items",
     "local work size, x; NULL when the runtime chose"},
    {"workgroup_y", "workgroup_y", I32, NR_ZERO, "work-items",
     "local work size, y; NULL when the runtime chose"},
    {"workgroup_z", "workgroup_z", I32, NR_ZERO, "work-items",
     "local work size, z; NULL when the runtime chose"},
    {"private_size", "private_size", I64, NR_NONE, "bytes", "dynamic private bytes per work-item"},
    {"group_size", "group_size", I64, NR_NONE, "bytes", "dynamic local bytes per work-group"},
    TIME("start_ns", "device start"),
    TIME("end_ns", "device end"),
    TIME("enqueue_ns", "host time of the enqueue call"),
    {"passes", "passes", I32, NR_ZERO, "passes", "replay passes this dispatch ran (1 = not replayed)"},
    {"bytes_accessible", "bytes_accessible", I64, NR_ZERO, "bytes",
     "bytes the kernel could write (kernel replay)"},
    {"bytes_restored", "bytes_restored", I64, NR_NONE, "bytes", "bytes restored across later passes"},
    {"cold", "cold", BOOL, NR_NONE, NULL,
     "true on a multiplexed kernel's first dispatch, whose counters hold first-use cost"},
    REF("region_id", "region.id of the innermost region open on the enqueuing thread; NULL when none"),
    {"correlation_id", "correlation_id", I64, NR_ZERO, NULL,
     "the launch call's correlation id in the runtime's tracing (CUDA: CUPTI's); NULL when none"},
    {"graph_id", "graph_id", I64, NR_ZERO, NULL,
     "the CUDA graph a kernel node ran in; NULL when not a graph's"},
};
static const spec_row counter_info_s[] = {
    ID("id", "row id of the counter"),
    REF("agent_id", "agent.id; NULL when not specific to one agent"),
    TXT("name", "counter name"),
    TXT("description", "what it counts"),
    TXT("block", "hardware block"),
    TXT("unit", "unit of its values"),
    TXT("expression", "formula of a derived counter; NULL for raw counters"),
};
static const spec_row counter_value_s[] = {
    REF("dispatch_id", "dispatch.id (the row id, not dispatch.dispatch_seq)"),
    REF("counter_id", "counter_info.id"),
    {"pass", "pass", I32, NR_ZERO, NULL,
     "replay pass that measured it, 1-based; NULL when not tied to a pass"},
    {"imputed", "imputed", BOOL, NR_NONE, NULL, "true when imputed (multiplexing), not measured"},
    {"value", "value", F64, NR_NONE, NULL, "value, in counter_info.unit"},
    REF("region_id",
        "region.id whose host part this is (dispatch_id NULL then); NULL for a dispatch's value"),
};
static const spec_row region_s[] = {
    ID("id", "row id of the region"), REF("process_id", "process.id"),    REF("thread_id", "thread.id"),
    TXT("name", "region name"),       TXT("category", "region category"), TIME("start_ns", "region begin"),
    TIME("end_ns", "region end"),
};
static const spec_row memory_copy_s[] = {
    ID("id", "row id of the memory copy"),
    REF("process_id", "process.id"),
    REF("thread_id", "thread.id of the enqueuing thread"),
    REF("agent_id", "agent.id of the queue's device"),
    REF("queue_id", "queue.id"),
    TXT("name", "the OpenCL call that enqueued it (clEnqueueReadBuffer, ...)"),
    {"direction", "direction", I32, NR_NONE, NULL,
     "1 host to device, 2 device to host, 3 device to device, 4 fill, 0 unknown"},
    {"bytes", "bytes", I64, NR_NONE, "bytes", "bytes moved or filled"},
    TIME("enqueue_ns", "host time of the enqueue call"),
    TIME("start_ns", "device start"),
    TIME("end_ns", "device end"),
    REF("region_id", "region.id of the innermost region open on the enqueuing thread; NULL when none"),
};
/* the columns of stall reasons (GPU PC sampling); the others keep their hub names, without NULLs */
static const spec_row pc_sample_s[] = {
    TXT("stall_reason", "what the sampled warp was waiting on, the runtime's name (CUPTI's stall reason); "
                        "NULL when unknown or not given (CPU samples)"),
    {"samples", "samples", I64, NR_ZERO, "samples",
     "samples this row stands for (CUPTI counts per instruction and reason); NULL means 1"},
};
static const spec_row ceiling_s[] = {
    ID("id", "row id of the ceiling"),
    REF("agent_id", "agent.id of the device measured"),
    TXT("name", "fp64, fp32, fp16 (FLOP/s), int32 (operations/s) or dram (bandwidth)"),
    {"value", "value", F64, NR_NONE, NULL, "the ceiling, in unit; negative when it could not be measured"},
    TXT("unit", "GFLOP/s, GOP/s or GB/s"),
    TXT("method", "what measured it: tool and version (hubprof roofline 0.1.0)"),
    TXT("note", "the benchmark that gave the value, or why there is none"),
    {"measured_ns", "measured_ns", I64, NR_ZERO, "ns", "when it was measured: Unix time (UTC), nanoseconds"},
};
static const spec_row metadata_s[] = {
    {"key", "key", STR, NR_NONE, NULL, "metadata key, unique in the store"},
    TXT("value", "its value"),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const struct {
  const spec_row *rows;
  size_t n;
} tables[HP_TABLE_COUNT] = {
    [HP_TABLE_NODE] = {node_s, N(node_s)},
    [HP_TABLE_PROCESS] = {process_s, N(process_s)},
    [HP_TABLE_THREAD] = {thread_s, N(thread_s)},
    [HP_TABLE_AGENT] = {agent_s, N(agent_s)},
    [HP_TABLE_QUEUE] = {queue_s, N(queue_s)},
    [HP_TABLE_CODE_OBJECT] = {code_object_s, N(code_object_s)},
    [HP_TABLE_KERNEL_SYMBOL] = {kernel_symbol_s, N(kernel_symbol_s)},
    [HP_TABLE_DISPATCH] = {dispatch_s, N(dispatch_s)},
    [HP_TABLE_COUNTER_INFO] = {counter_info_s, N(counter_info_s)},
    [HP_TABLE_COUNTER_VALUE] = {counter_value_s, N(counter_value_s)},
    [HP_TABLE_REGION] = {region_s, N(region_s)},
    [HP_TABLE_METADATA] = {metadata_s, N(metadata_s)},
    [HP_TABLE_MEMORY_COPY] = {memory_copy_s, N(memory_copy_s)},
    [HP_TABLE_PC_SAMPLE] = {pc_sample_s, N(pc_sample_s)},
    [HP_TABLE_CEILING] = {ceiling_s, N(ceiling_s)},
};

static pq_colspec g_spec[HP_TABLE_COUNT][PQ_MAX_COLUMNS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Fill g_spec in the order of the hub's columns; a hub column the table does not name (a column added to the
 * model later) gets its hub name, its natural type, and no NULLs. */
static void build(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    for (size_t c = 0; c < d->ncolumns && c < PQ_MAX_COLUMNS; c++) {
      const hp_column *col = &d->columns[c];
      pq_colspec *o = &g_spec[t][c];
      o->name = col->name;
      o->phys = pq_phys_type(col->type);
      o->legacy_phys = pq_phys_type(col->type);
      o->nullable = 0;
      o->null_value = 0;
      o->unit = NULL;
      o->desc = "";
      for (size_t k = 0; k < tables[t].n; k++) {
        const spec_row *r = &tables[t].rows[k];
        if (strcmp(r->hub, col->name) != 0) continue;
        o->name = r->name;
        o->phys = r->phys;
        o->nullable = r->null_rule != NR_NONE;
        o->null_value = r->null_rule == NR_MINUS1 ? -1 : 0;
        o->unit = r->unit;
        o->desc = r->desc;
      }
      o->legacy_name = col->name; /* store version 1 named every column as the hub does */
    }
  }
}

const pq_colspec *pq_colspec_of(hp_table t, size_t col) {
  pthread_once(&g_once, build);
  if ((unsigned)t >= HP_TABLE_COUNT || col >= PQ_MAX_COLUMNS || col >= hp_table_describe(t)->ncolumns)
    return NULL;
  return &g_spec[t][col];
}

hp_status hp_dataset_column_describe(hp_table t, size_t col, hp_dataset_column *out) {
  const pq_colspec *sp = pq_colspec_of(t, col);
  if (!sp || !out || out->size < sizeof(hp_dataset_column)) return HP_ERR_INVALID;
  out->name = sp->name;
  out->unit = sp->unit;
  out->description = sp->desc;
  out->nullable = sp->nullable;
  out->null_value = sp->null_value;
  out->boolean = sp->phys == PQ_BOOLEAN;
  return HP_OK;
}
