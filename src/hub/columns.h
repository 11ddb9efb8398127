/* Every table and column of the hub's data model, once: each column's field in its row struct, hub name, type
 * and the table it refers to, and how datasets describe it (name, BOOLEAN, NULL rule, unit, description). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLUMNS_H
#define HUBPROF_COLUMNS_H

/* schema.c builds hp_table_describe from these lists, parquet_schema.c the dataset schema (pq_colspec_of,
 * hp_dataset_column_describe); the log and rocpd follow hp_table_describe. HP_COLUMNS_<TABLE>(X, S) calls,
 * for each column of row struct S in order, X(S, member, name, type, ref, dataset_name, boolean, null, unit,
 * description) with type U64 I64 U32 I32 F64 STR (HP_COL_*), ref the table a reference points to (NULL:
 * none), boolean 1 for a flag (Parquet BOOLEAN; otherwise the type's own physical type) and null the hub
 * value datasets store as NULL: NONE (no NULLs), ZERO, MINUS1 or EMPTY (""). The row kinds below fill the
 * usual cases. A column is added at the end of its struct (include/hubprof/hub.h) and of its list here. */

/* The row id. */
#define HS_ID(X, S, f, desc) X(S, f, #f, U64, NULL, #f, 0, NONE, NULL, desc)
/* A reference to table T's row id (0: none), described as "T.id" and what `more` adds. */
#define HS_REF(X, S, f, T, more) X(S, f, #f, U64, #T, #f, 0, ZERO, NULL, #T ".id" more)
/* Text ("" unknown). */
#define HS_TXT(X, S, f, desc) X(S, f, #f, STR, NULL, #f, 0, EMPTY, NULL, desc)
/* A time on the node's monotonic clock (0 unknown). */
#define HS_TIME(X, S, f, desc)                                                                               \
  X(S, f, #f, I64, NULL, #f, 0, ZERO, "ns",                                                                  \
    desc " (nanoseconds on the node's monotonic clock; see metadata clock.*)")
/* Any other column named as its field. */
#define HS_COL(X, S, f, type, null, unit, desc) X(S, f, #f, type, NULL, #f, 0, null, unit, desc)
/* A column that is an element of an array field (member grid[0], name "grid_x"). */
#define HS_AT(X, S, member, name, type, null, unit, desc)                                                    \
  X(S, member, name, type, NULL, name, 0, null, unit, desc)
/* A column whose dataset name is not its hub name. */
#define HS_AS(X, S, f, dataset, type, null, unit, desc) X(S, f, #f, type, NULL, dataset, 0, null, unit, desc)
/* A flag (0 or 1). */
#define HS_BOOL(X, S, f, type, desc) X(S, f, #f, type, NULL, #f, 1, NONE, NULL, desc)
/* A column without a dataset description: datasets store it under its hub name, without NULLs. */
#define HS_BARE(X, S, f, type, ref) X(S, f, #f, type, ref, #f, 0, NONE, NULL, "")

#define HP_COLUMNS_NODE(X, S)                                                                                \
  HS_ID(X, S, id, "row id of the node")                                                                      \
  HS_TXT(X, S, hostname, "host name")                                                                        \
  HS_TXT(X, S, machine_id, "/etc/machine-id")                                                                \
  HS_TXT(X, S, system_name, "uname sysname")                                                                 \
  HS_TXT(X, S, release, "uname release")                                                                     \
  HS_TXT(X, S, version, "uname version")                                                                     \
  HS_TXT(X, S, machine, "uname machine")

#define HP_COLUMNS_PROCESS(X, S)                                                                             \
  HS_ID(X, S, id, "row id of the process")                                                                   \
  HS_REF(X, S, node_id, node, "")                                                                            \
  HS_COL(X, S, pid, I64, ZERO, NULL, "operating system process id")                                          \
  HS_COL(X, S, ppid, I64, ZERO, NULL, "parent process id")                                                   \
  HS_COL(X, S, rank, I64, MINUS1, NULL, "MPI rank from the launcher's environment; NULL when none")          \
  HS_TIME(X, S, start_ns, "process start")                                                                   \
  HS_TIME(X, S, end_ns, "process end; NULL while running or when it died without saying")                    \
  HS_TXT(X, S, command, "command line")                                                                      \
  HS_COL(X, S, lost_records, U64, NONE, "records", "records the collector could not store")                  \
  HS_COL(X, S, world_size, I64, MINUS1, NULL, "ranks in the MPI job; NULL when none")                        \
  HS_COL(X, S, local_rank, I64, MINUS1, NULL, "rank among the job's ranks on this node; NULL when none")     \
  HS_TXT(X, S, job_id, "the launcher's job id")                                                              \
  HS_COL(X, S, clock_offset_ns, I64, ZERO, "ns",                                                             \
         "CLOCK_REALTIME - CLOCK_MONOTONIC_RAW of the node when the process's log opened: start_ns + "       \
         "clock_offset_ns is UTC nanoseconds since 1970")                                                    \
  HS_COL(X, S, exit_code, I64, MINUS1, NULL,                                                                 \
         "the process's exit code (0-255); NULL where unknown (killed, or not seen to exit)")                \
  HS_COL(X, S, exit_signal, I64, MINUS1, NULL,                                                               \
         "the signal that ended the process, 0 when it exited; NULL where unknown")

#define HP_COLUMNS_THREAD(X, S)                                                                              \
  HS_ID(X, S, id, "row id of the thread")                                                                    \
  HS_REF(X, S, process_id, process, "")                                                                      \
  HS_COL(X, S, tid, I64, ZERO, NULL, "operating system thread id")                                           \
  HS_TIME(X, S, start_ns, "thread start")                                                                    \
  HS_TIME(X, S, end_ns, "thread end")                                                                        \
  HS_TXT(X, S, name, "thread name")

#define HP_COLUMNS_AGENT(X, S)                                                                               \
  HS_ID(X, S, id, "row id of the agent (device)")                                                            \
  HS_REF(X, S, node_id, node, "")                                                                            \
  HS_COL(X, S, type, I32, NONE, NULL, "0 unknown, 1 CPU, 2 GPU, 3 accelerator")                              \
  HS_COL(X, S, device_index, I32, NONE, NULL, "index among the node's devices of its runtime")               \
  HS_TXT(X, S, vendor, "vendor")                                                                             \
  HS_TXT(X, S, name, "short device name")                                                                    \
  HS_TXT(X, S, product_name, "marketing name")                                                               \
  HS_TXT(X, S, runtime, "runtime and its version")                                                           \
  HS_COL(X, S, compute_units, I64, ZERO, NULL, "compute units")                                              \
  HS_COL(X, S, max_clock_mhz, I64, ZERO, "MHz", "maximum clock")                                             \
  HS_COL(X, S, global_mem_bytes, I64, ZERO, "bytes", "global memory")                                        \
  HS_COL(X, S, local_mem_bytes, I64, ZERO, "bytes", "local (shared) memory per work-group")                  \
  HS_COL(X, S, wave_size, I64, ZERO, "work-items", "SIMD width / warp / wavefront size")

#define HP_COLUMNS_QUEUE(X, S)                                                                               \
  HS_ID(X, S, id, "row id of the queue")                                                                     \
  HS_REF(X, S, process_id, process, "")                                                                      \
  HS_REF(X, S, agent_id, agent, "")                                                                          \
  HS_TXT(X, S, name, "queue name")

#define HP_COLUMNS_CODE_OBJECT(X, S)                                                                         \
  HS_ID(X, S, id, "row id of the code object")                                                               \
  HS_REF(X, S, process_id, process, "")                                                                      \
  HS_REF(X, S, agent_id, agent, "")                                                                          \
  HS_TXT(X, S, uri, "where the code came from")                                                              \
  HS_COL(X, S, load_base, U64, NONE, NULL, "load address")                                                   \
  HS_COL(X, S, load_size, U64, NONE, "bytes", "loaded size")                                                 \
  HS_BARE(X, S, hash, STR, NULL)                                                                             \
  HS_BARE(X, S, code_size, U64, NULL)                                                                        \
  HS_BARE(X, S, build_options, STR, NULL)                                                                    \
  HS_BARE(X, S, source, STR, NULL)                                                                           \
  HS_BARE(X, S, ir_hash, STR, NULL)

#define HP_COLUMNS_KERNEL_SYMBOL(X, S)                                                                       \
  HS_ID(X, S, id, "row id of the kernel symbol")                                                             \
  HS_REF(X, S, code_object_id, code_object, "")                                                              \
  HS_TXT(X, S, name, "mangled / runtime kernel name")                                                        \
  HS_TXT(X, S, display_name, "kernel name for people")                                                       \
  HS_COL(X, S, private_size, I64, NONE, "bytes", "static private bytes per work-item")                       \
  HS_COL(X, S, group_size, I64, NONE, "bytes", "static local bytes per work-group")                          \
  HS_TXT(X, S, program_hash,                                                                                 \
         "identity of the kernel's program (16 hex digits); a kernel is its name and program")               \
  HS_COL(X, S, registers, I64, NONE, NULL, "registers per work-item (CUDA: per thread), 0 unknown")

#define HP_COLUMNS_DISPATCH(X, S)                                                                            \
  HS_ID(X, S, id, "row id of the dispatch (counter_value.dispatch_id refers to it)")                         \
  HS_AS(X, S, dispatch_id, "dispatch_seq", U64, NONE, NULL,                                                  \
        "the collector's number of the dispatch, unique only within its process and the same in every "      \
        "replay pass; not a row id")                                                                         \
  HS_REF(X, S, process_id, process, "")                                                                      \
  HS_REF(X, S, thread_id, thread, "")                                                                        \
  HS_REF(X, S, agent_id, agent, "")                                                                          \
  HS_REF(X, S, queue_id, queue, "")                                                                          \
  HS_REF(X, S, kernel_id, kernel_symbol, "")                                                                 \
  HS_AT(X, S, grid[0], "grid_x", U32, NONE, "work-items", "global work size, x")                             \
  HS_AT(X, S, grid[1], "grid_y", U32, NONE, "work-items", "global work size, y")                             \
  HS_AT(X, S, grid[2], "grid_z", U32, NONE, "work-items", "global work size, z")                             \
  HS_AT(X, S, workgroup[0], "workgroup_x", U32, ZERO, "work-items",                                          \
        "local work size, x; NULL when the runtime chose")                                                   \
  HS_AT(X, S, workgroup[1], "workgroup_y", U32, ZERO, "work-items",                                          \
        "local work size, y; NULL when the runtime chose")                                                   \
  HS_AT(X, S, workgroup[2], "workgroup_z", U32, ZERO, "work-items",                                          \
        "local work size, z; NULL when the runtime chose")                                                   \
  HS_COL(X, S, private_size, I64, NONE, "bytes", "dynamic private bytes per work-item")                      \
  HS_COL(X, S, group_size, I64, NONE, "bytes", "dynamic local bytes per work-group")                         \
  HS_TIME(X, S, start_ns, "device start")                                                                    \
  HS_TIME(X, S, end_ns, "device end")                                                                        \
  HS_TIME(X, S, enqueue_ns, "host time of the enqueue call")                                                 \
  HS_COL(X, S, passes, U32, ZERO, "passes", "replay passes this dispatch ran (1 = not replayed)")            \
  HS_COL(X, S, bytes_accessible, U64, ZERO, "bytes", "bytes the kernel could write (kernel replay)")         \
  HS_COL(X, S, bytes_restored, U64, NONE, "bytes", "bytes restored across later passes")                     \
  HS_BOOL(X, S, cold, U32,                                                                                   \
          "true on a multiplexed kernel's first dispatch, whose counters hold first-use cost")               \
  HS_REF(X, S, region_id, region, " of the innermost region open on the enqueuing thread; NULL when none")   \
  HS_COL(X, S, correlation_id, U64, ZERO, NULL,                                                              \
         "the launch call's correlation id in the runtime's tracing (CUDA: CUPTI's); NULL when none")        \
  HS_COL(X, S, graph_id, U64, ZERO, NULL, "the CUDA graph a kernel node ran in; NULL when not a graph's")

#define HP_COLUMNS_COUNTER_INFO(X, S)                                                                        \
  HS_ID(X, S, id, "row id of the counter")                                                                   \
  HS_REF(X, S, agent_id, agent, "; NULL when not specific to one agent")                                     \
  HS_TXT(X, S, name, "counter name")                                                                         \
  HS_TXT(X, S, description, "what it counts")                                                                \
  HS_TXT(X, S, block, "hardware block")                                                                      \
  HS_TXT(X, S, unit, "unit of its values")                                                                   \
  HS_TXT(X, S, expression, "formula of a derived counter; NULL for raw counters")

#define HP_COLUMNS_COUNTER_VALUE(X, S)                                                                       \
  HS_REF(X, S, dispatch_id, dispatch, " (the row id, not dispatch.dispatch_seq)")                            \
  HS_REF(X, S, counter_id, counter_info, "")                                                                 \
  HS_COL(X, S, pass, U32, ZERO, NULL, "replay pass that measured it, 1-based; NULL when not tied to a pass") \
  HS_BOOL(X, S, imputed, U32, "true when imputed (multiplexing), not measured")                              \
  HS_COL(X, S, value, F64, NONE, NULL, "value, in counter_info.unit")                                        \
  HS_REF(X, S, region_id, region,                                                                            \
         " whose host part this is (dispatch_id NULL then); NULL for a dispatch's value")

#define HP_COLUMNS_REGION(X, S)                                                                              \
  HS_ID(X, S, id, "row id of the region")                                                                    \
  HS_REF(X, S, process_id, process, "")                                                                      \
  HS_REF(X, S, thread_id, thread, "")                                                                        \
  HS_TXT(X, S, name, "region name")                                                                          \
  HS_TXT(X, S, category, "region category")                                                                  \
  HS_TIME(X, S, start_ns, "region begin")                                                                    \
  HS_TIME(X, S, end_ns, "region end")

#define HP_COLUMNS_METADATA(X, S)                                                                            \
  HS_COL(X, S, key, STR, NONE, NULL, "metadata key, unique in the store")                                    \
  HS_TXT(X, S, value, "its value")

#define HP_COLUMNS_PC_SAMPLE(X, S)                                                                           \
  HS_BARE(X, S, id, U64, NULL)                                                                               \
  HS_BARE(X, S, dispatch_id, U64, "dispatch")                                                                \
  HS_BARE(X, S, code_object_id, U64, "code_object")                                                          \
  HS_BARE(X, S, offset, U64, NULL)                                                                           \
  HS_BARE(X, S, timestamp_ns, I64, NULL)                                                                     \
  HS_BARE(X, S, thread_id, U64, "thread")                                                                    \
  HS_BARE(X, S, weight, U64, NULL)                                                                           \
  HS_TXT(X, S, stall_reason,                                                                                 \
         "what the sampled warp was waiting on, the runtime's name (CUPTI's stall reason); NULL when "       \
         "unknown or not given (CPU samples)")                                                               \
  HS_COL(X, S, samples, U64, ZERO, "samples",                                                                \
         "samples this row stands for (CUPTI counts per instruction and reason); NULL means 1")

#define HP_COLUMNS_COUNTER_SAMPLE(X, S)                                                                      \
  HS_BARE(X, S, id, U64, NULL)                                                                               \
  HS_BARE(X, S, dispatch_id, U64, "dispatch")                                                                \
  HS_BARE(X, S, counter_id, U64, "counter_info")                                                             \
  HS_BARE(X, S, timestamp_ns, I64, NULL)                                                                     \
  HS_BARE(X, S, value, F64, NULL)                                                                            \
  HS_BARE(X, S, sample_set, U64, NULL)                                                                       \
  HS_BARE(X, S, process_id, U64, "process")

#define HP_COLUMNS_CODE_BLOB(X, S)                                                                           \
  HS_BARE(X, S, id, U64, NULL)                                                                               \
  HS_BARE(X, S, hash, STR, NULL)                                                                             \
  HS_BARE(X, S, offset, U64, NULL)                                                                           \
  HS_BARE(X, S, total_size, U64, NULL)                                                                       \
  HS_BARE(X, S, data, STR, NULL)

#define HP_COLUMNS_MEMORY_COPY(X, S)                                                                         \
  HS_ID(X, S, id, "row id of the memory copy")                                                               \
  HS_REF(X, S, process_id, process, "")                                                                      \
  HS_REF(X, S, thread_id, thread, " of the enqueuing thread")                                                \
  HS_REF(X, S, agent_id, agent, " of the queue's device")                                                    \
  HS_REF(X, S, queue_id, queue, "")                                                                          \
  HS_TXT(X, S, name, "the OpenCL call that enqueued it (clEnqueueReadBuffer, ...)")                          \
  HS_COL(X, S, direction, U32, NONE, NULL,                                                                   \
         "1 host to device, 2 device to host, 3 device to device, 4 fill, 0 unknown")                        \
  HS_COL(X, S, bytes, U64, NONE, "bytes", "bytes moved or filled")                                           \
  HS_TIME(X, S, enqueue_ns, "host time of the enqueue call")                                                 \
  HS_TIME(X, S, start_ns, "device start")                                                                    \
  HS_TIME(X, S, end_ns, "device end")                                                                        \
  HS_REF(X, S, region_id, region, " of the innermost region open on the enqueuing thread; NULL when none")

#define HP_COLUMNS_CEILING(X, S)                                                                             \
  HS_ID(X, S, id, "row id of the ceiling")                                                                   \
  HS_REF(X, S, agent_id, agent, " of the device measured")                                                   \
  HS_TXT(X, S, name, "fp64, fp32, fp16 (FLOP/s), int32 (operations/s) or dram (bandwidth)")                  \
  HS_COL(X, S, value, F64, NONE, NULL, "the ceiling, in unit; negative when it could not be measured")       \
  HS_TXT(X, S, unit, "GFLOP/s, GOP/s or GB/s")                                                               \
  HS_TXT(X, S, method, "what measured it: tool and version (hubprof roofline 0.1.0)")                        \
  HS_TXT(X, S, note, "the benchmark that gave the value, or why there is none")                              \
  HS_COL(X, S, measured_ns, I64, ZERO, "ns", "when it was measured: Unix time (UTC), nanoseconds")

/* The tables, in the order of hp_table: X(TABLE, name, row struct); HP_COLUMNS_<TABLE> lists its columns. */
#define HP_TABLES(X)                                                                                         \
  X(NODE, node, hp_node)                                                                                     \
  X(PROCESS, process, hp_process)                                                                            \
  X(THREAD, thread, hp_thread)                                                                               \
  X(AGENT, agent, hp_agent)                                                                                  \
  X(QUEUE, queue, hp_queue)                                                                                  \
  X(CODE_OBJECT, code_object, hp_code_object)                                                                \
  X(KERNEL_SYMBOL, kernel_symbol, hp_kernel_symbol)                                                          \
  X(DISPATCH, dispatch, hp_dispatch)                                                                         \
  X(COUNTER_INFO, counter_info, hp_counter_info)                                                             \
  X(COUNTER_VALUE, counter_value, hp_counter_value)                                                          \
  X(REGION, region, hp_region)                                                                               \
  X(METADATA, metadata, hp_metadata)                                                                         \
  X(PC_SAMPLE, pc_sample, hp_pc_sample)                                                                      \
  X(COUNTER_SAMPLE, counter_sample, hp_counter_sample)                                                       \
  X(CODE_BLOB, code_blob, hp_code_blob)                                                                      \
  X(MEMORY_COPY, memory_copy, hp_memory_copy)                                                                \
  X(CEILING, ceiling, hp_ceiling)

#endif
