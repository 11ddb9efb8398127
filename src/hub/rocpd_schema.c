/* rocpd format, schema text: the rocpd 3.0.4 tables and views, and how every hub column is read and written
 * (rp_read_expr, rp_write_map, the remaining insert statements). Text only: no I/O here. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include <string.h>

const char *const rp_rt_name[RT_COUNT] = {
    "metadata",
    "string",
    "info_node",
    "info_process",
    "info_thread",
    "info_agent",
    "info_queue",
    "info_stream",
    "info_pmc",
    "info_code_object",
    "info_kernel_symbol",
    "track",
    "event",
    "arg",
    "pmc_event",
    "region",
    "sample",
    "kernel_dispatch",
    "memory_copy",
    "memory_allocate",
    "graph_launch",
    "hubprof_counter_sample",
    "hubprof_code_blob",
    "hubprof_ceiling",
};

#define EXT ", extdata JSONB NOT NULL DEFAULT '{}'"
#define NODE_PID "nid INTEGER NOT NULL, pid INTEGER NOT NULL"

/* Columns after "id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '<guid>'" (metadata: after id only).
 * Column names are rocpd's (schema 3.0.4); relations (nid, pid, tid, agent_id, ... are row ids of the info
 * tables) are not declared as SQL foreign keys, since hub references may be 0 ("none"). */
const char *const rp_rt_cols[RT_COUNT] = {
    [RT_METADATA] = "tag TEXT NOT NULL, value TEXT NOT NULL",
    [RT_STRING] = "string TEXT NOT NULL UNIQUE",
    [RT_NODE] =
        "hash BIGINT NOT NULL, machine_id TEXT NOT NULL, system_name TEXT, hostname TEXT, release TEXT, "
        "version TEXT, hardware_name TEXT, domain_name TEXT",
    [RT_PROCESS] =
        "nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, fini BIGINT, start "
        "BIGINT, \"end\" BIGINT, command TEXT, environment JSONB NOT NULL DEFAULT '{}'" EXT,
    [RT_THREAD] =
        "nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT, start "
        "BIGINT, \"end\" BIGINT" EXT,
    [RT_AGENT] =
        NODE_PID ", type TEXT CHECK (type IN ('CPU', 'GPU', 'NIC')), absolute_index INTEGER, logical_index "
                 "INTEGER, type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, vendor_name TEXT, "
                 "product_name TEXT, user_name TEXT" EXT,
    [RT_QUEUE] = NODE_PID ", name TEXT" EXT,
    [RT_STREAM] = NODE_PID ", name TEXT" EXT,
    [RT_PMC] = NODE_PID
    ", agent_id INTEGER, target_arch TEXT CHECK (target_arch IN ('CPU', 'GPU', 'NIC')), event_code "
    "INT, instance_id INTEGER, name TEXT NOT NULL, symbol TEXT NOT NULL, description TEXT, "
    "long_description TEXT DEFAULT '', component TEXT, units TEXT DEFAULT '', value_type TEXT CHECK "
    "(value_type IN ('ABS', 'ACCUM', 'RELATIVE')), block TEXT, expression TEXT, is_constant INTEGER, "
    "is_derived INTEGER, spm_support INTEGER" EXT,
    [RT_CODE_OBJECT] =
        NODE_PID ", agent_id INTEGER, uri TEXT, load_base BIGINT, load_size BIGINT, load_delta BIGINT, "
                 "storage_type TEXT CHECK (storage_type IN ('FILE', 'MEMORY'))" EXT,
    [RT_KERNEL_SYMBOL] = NODE_PID
    ", code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT, kernel_object INTEGER, "
    "kernarg_segment_size INTEGER, kernarg_segment_alignment INTEGER, group_segment_size INTEGER, "
    "private_segment_size INTEGER, sgpr_count INTEGER, arch_vgpr_count INTEGER, accum_vgpr_count "
    "INTEGER" EXT,
    [RT_TRACK] = "nid INTEGER NOT NULL, pid INTEGER, tid INTEGER, name_id INTEGER" EXT,
    [RT_EVENT] = "category_id INTEGER, stack_id INTEGER, parent_stack_id INTEGER, correlation_id INTEGER, "
                 "call_stack JSONB NOT NULL DEFAULT '{}', line_info JSONB NOT NULL DEFAULT '{}'" EXT,
    [RT_ARG] =
        "event_id INTEGER NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL, "
        "value TEXT" EXT,
    [RT_PMC_EVENT] =
        "event_id INTEGER, sample_id INTEGER, pmc_id INTEGER NOT NULL, value REAL DEFAULT 0.0, xcc "
        "INTEGER, shader_engine INTEGER, instance INTEGER, extdata JSONB DEFAULT '{}'",
    [RT_REGION] = NODE_PID
    ", tid INTEGER NOT NULL, start BIGINT NOT NULL, \"end\" BIGINT NOT NULL, name_id INTEGER NOT "
    "NULL, event_id INTEGER" EXT,
    [RT_SAMPLE] = "track_id INTEGER NOT NULL, timestamp BIGINT NOT NULL, event_id INTEGER" EXT,
    [RT_KERNEL_DISPATCH] = NODE_PID
    ", tid INTEGER, agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT "
    "NULL, queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, start BIGINT NOT NULL, \"end\" "
    "BIGINT NOT NULL, private_segment_size INTEGER, group_segment_size INTEGER, workgroup_size_x "
    "INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL, "
    "grid_size_x INTEGER NOT NULL, grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL, "
    "graph_exec_id INTEGER NOT NULL DEFAULT 0, graph_node_id INTEGER NOT NULL DEFAULT 0, "
    "region_name_id INTEGER, event_id INTEGER" EXT,
    [RT_MEMORY_COPY] = NODE_PID
    ", tid INTEGER, start BIGINT NOT NULL, \"end\" BIGINT NOT NULL, name_id INTEGER NOT NULL, "
    "dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER, size "
    "INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER, graph_exec_id INTEGER NOT NULL DEFAULT 0, "
    "graph_node_id INTEGER NOT NULL DEFAULT 0, region_name_id INTEGER, event_id INTEGER" EXT,
    [RT_MEMORY_ALLOCATE] = NODE_PID
    ", tid INTEGER, agent_id INTEGER, type TEXT CHECK (type IN ('ALLOC', 'FREE', 'REALLOC', "
    "'RECLAIM')), level TEXT CHECK (level IN ('REAL', 'VIRTUAL', 'SCRATCH')), start BIGINT NOT NULL, "
    "\"end\" BIGINT NOT NULL, address INTEGER, size INTEGER NOT NULL, queue_id INTEGER, stream_id "
    "INTEGER, event_id INTEGER" EXT,
    [RT_GRAPH_LAUNCH] = NODE_PID
    ", tid INTEGER, agent_id INTEGER, queue_id INTEGER, start BIGINT NOT NULL, \"end\" BIGINT NOT "
    "NULL, graph_exec_id INTEGER NOT NULL, kernel_dispatch_count INTEGER NOT NULL DEFAULT 0, event_id "
    "INTEGER" EXT,
    [RT_HP_COUNTER_SAMPLE] =
        "dispatch_id INTEGER NOT NULL, pmc_id INTEGER NOT NULL, timestamp BIGINT NOT NULL, "
        "value REAL DEFAULT 0.0" EXT,
    [RT_HP_CODE_BLOB] =
        "hash TEXT NOT NULL, \"offset\" BIGINT NOT NULL, total_size BIGINT NOT NULL, data TEXT NOT NULL",
    [RT_HP_CEILING] =
        "agent_id INTEGER, name TEXT NOT NULL, value REAL, unit TEXT NOT NULL, method TEXT, note "
        "TEXT, measured BIGINT" EXT,
};

/* Views over the base-name views, with rocprofv3's view and column names (our own SQL). Every counter
 * value keeps its pass: counters_collection groups by dispatch, counter AND pass (extdata.pass). */
const char rp_views_sql[] =
    "CREATE VIEW processes AS SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS "
    "system_release, N.version AS system_version, P.guid, P.ppid, P.pid, P.init, P.start, P.\"end\", P.fini, "
    "P.command FROM rocpd_info_process P JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid;\n"
    "CREATE VIEW threads AS SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS "
    "system_release, N.version AS system_version, P.guid, P.ppid, P.pid, T.tid, T.start, T.\"end\", T.name "
    "FROM "
    "rocpd_info_thread T JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid JOIN rocpd_info_node "
    "N ON "
    "N.id = T.nid AND N.guid = T.guid;\n"
    "CREATE VIEW code_objects AS SELECT C.id, C.guid, C.nid, P.pid, A.absolute_index AS agent_abs_index, "
    "C.uri, "
    "C.load_base, C.load_size, C.load_delta, C.storage_type AS storage_type_str FROM rocpd_info_code_object "
    "C "
    "JOIN rocpd_info_agent A ON A.id = C.agent_id AND A.guid = C.guid JOIN rocpd_info_process P ON P.id = "
    "C.pid "
    "AND P.guid = C.guid;\n"
    "CREATE VIEW kernel_symbols AS SELECT S.id, S.guid, S.nid, P.pid, S.code_object_id, S.kernel_name, "
    "S.display_name, S.kernel_object, S.kernarg_segment_size, S.kernarg_segment_alignment, "
    "S.group_segment_size, "
    "S.private_segment_size, S.sgpr_count, S.arch_vgpr_count, S.accum_vgpr_count FROM "
    "rocpd_info_kernel_symbol "
    "S JOIN rocpd_info_process P ON P.id = S.pid AND P.guid = S.guid;\n"
    "CREATE VIEW regions AS SELECT R.id, R.guid, (SELECT string FROM rocpd_string WHERE id = E.category_id "
    "AND "
    "guid = E.guid) AS category, S.string AS name, R.nid, P.pid, T.tid, R.start, R.\"end\", R.\"end\" - "
    "R.start "
    "AS duration, R.event_id, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id, E.extdata, "
    "E.call_stack, E.line_info FROM rocpd_region R JOIN rocpd_event E ON E.id = R.event_id AND E.guid = "
    "R.guid "
    "JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid JOIN rocpd_info_process P ON P.id = R.pid "
    "AND "
    "P.guid = R.guid JOIN rocpd_info_thread T ON T.id = R.tid AND T.guid = R.guid;\n"
    "CREATE VIEW kernels AS SELECT K.id, K.guid, T.tid, (SELECT string FROM rocpd_string WHERE id = "
    "E.category_id AND guid = E.guid) AS category, R.string AS region, S.display_name AS name, K.nid, P.pid, "
    "A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index, A.type_index AS "
    "agent_type_index, "
    "A.type AS agent_type, S.code_object_id, K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id, Q.name AS "
    "queue, ST.name AS stream, K.start, K.\"end\", K.\"end\" - K.start AS duration, K.grid_size_x AS grid_x, "
    "K.grid_size_y AS grid_y, K.grid_size_z AS grid_z, K.workgroup_size_x AS workgroup_x, K.workgroup_size_y "
    "AS "
    "workgroup_y, K.workgroup_size_z AS workgroup_z, K.group_segment_size AS lds_size, "
    "K.private_segment_size AS "
    "scratch_size, S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count, S.group_segment_size "
    "AS "
    "static_lds_size, S.private_segment_size AS static_scratch_size, E.stack_id, E.parent_stack_id, "
    "E.correlation_id AS corr_id FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON E.id = K.event_id AND "
    "E.guid "
    "= K.guid JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid JOIN "
    "rocpd_info_kernel_symbol S "
    "ON S.id = K.kernel_id AND S.guid = K.guid JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = "
    "K.guid "
    "JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid JOIN rocpd_info_process P ON P.id = "
    "K.pid "
    "AND P.guid = K.guid JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid LEFT JOIN "
    "rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid;\n"
    "CREATE VIEW pmc_info AS SELECT I.id, I.guid, I.nid, P.pid, A.absolute_index AS agent_abs_index, "
    "I.is_constant, I.is_derived, I.name, I.description, I.block, I.expression FROM rocpd_info_pmc I JOIN "
    "rocpd_info_agent A ON A.id = I.agent_id AND A.guid = I.guid JOIN rocpd_info_process P ON P.id = I.pid "
    "AND "
    "P.guid = I.guid;\n"
    "CREATE VIEW pmc_events AS SELECT V.id, V.guid, V.pmc_id, E.id AS event_id, (SELECT string FROM "
    "rocpd_string WHERE id = E.category_id AND guid = E.guid) AS category, (SELECT display_name FROM "
    "rocpd_info_kernel_symbol WHERE id = K.kernel_id AND guid = K.guid) AS name, K.nid, P.pid, "
    "K.dispatch_id, "
    "K.start, K.\"end\", K.\"end\" - K.start AS duration, I.name AS counter_name, V.value AS counter_value, "
    "COALESCE(json_extract(V.extdata, '$.pass'), 0) AS replay_pass FROM rocpd_pmc_event V JOIN "
    "rocpd_info_pmc I "
    "ON I.id = V.pmc_id AND I.guid = V.guid JOIN rocpd_event E ON E.id = V.event_id AND E.guid = V.guid JOIN "
    "rocpd_kernel_dispatch K ON K.event_id = V.event_id AND K.guid = V.guid JOIN rocpd_info_process P ON "
    "P.id = "
    "K.pid AND P.guid = K.guid;\n"
    "CREATE VIEW counters_collection AS SELECT MIN(V.id) AS id, V.guid, K.dispatch_id, K.kernel_id, E.id AS "
    "event_id, E.correlation_id, E.stack_id, E.parent_stack_id, P.pid, T.tid, K.agent_id, A.absolute_index "
    "AS "
    "agent_abs_index, A.logical_index AS agent_log_index, A.type_index AS agent_type_index, A.type AS "
    "agent_type, K.queue_id, K.grid_size_x, K.grid_size_y, K.grid_size_z, K.grid_size_x * K.grid_size_y * "
    "K.grid_size_z AS grid_size, S.display_name AS kernel_name, (SELECT string FROM rocpd_string WHERE id = "
    "K.region_name_id AND guid = K.guid) AS kernel_region, K.workgroup_size_x, K.workgroup_size_y, "
    "K.workgroup_size_z, K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z AS workgroup_size, "
    "K.group_segment_size AS lds_block_size, K.private_segment_size AS scratch_size, S.arch_vgpr_count AS "
    "vgpr_count, S.accum_vgpr_count, S.sgpr_count, I.name AS counter_name, I.symbol AS counter_symbol, "
    "I.component, I.description, I.block, I.expression, I.value_type, I.id AS counter_id, SUM(V.value) AS "
    "value, K.start, K.\"end\", I.is_constant, I.is_derived, K.\"end\" - K.start AS duration, (SELECT string "
    "FROM rocpd_string WHERE id = E.category_id AND guid = E.guid) AS category, K.nid, E.extdata, "
    "S.code_object_id, COALESCE(json_extract(V.extdata, '$.pass'), 0) AS replay_pass, "
    "MAX(COALESCE(json_extract(V.extdata, '$.imputed'), 0)) AS imputed FROM rocpd_pmc_event V JOIN "
    "rocpd_info_pmc I ON I.id = V.pmc_id AND I.guid = V.guid JOIN rocpd_event E ON E.id = V.event_id AND "
    "E.guid "
    "= V.guid JOIN rocpd_kernel_dispatch K ON K.event_id = V.event_id AND K.guid = V.guid JOIN "
    "rocpd_info_agent "
    "A ON A.id = K.agent_id AND A.guid = K.guid JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND "
    "S.guid = K.guid JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid JOIN rocpd_info_thread T "
    "ON "
    "T.id = K.tid AND T.guid = K.guid WHERE V.sample_id IS NULL GROUP BY V.guid, K.id, V.pmc_id, "
    "replay_pass;\n"
    "CREATE VIEW top_kernels AS SELECT S.display_name AS name, COUNT(*) AS total_calls, TOTAL(K.\"end\" - "
    "K.start) / 1000.0 AS total_duration, AVG(CASE WHEN K.start <> 0 OR K.\"end\" <> 0 THEN "
    "K.\"end\" - K.start END) / 1000.0 AS average, 100.0 * "
    "TOTAL(K.\"end\" "
    "- K.start) / NULLIF((SELECT TOTAL(\"end\" - start) FROM rocpd_kernel_dispatch), 0) AS percentage FROM "
    "rocpd_kernel_dispatch K JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid GROUP "
    "BY "
    "S.display_name ORDER BY total_duration DESC;\n"
    "CREATE VIEW busy AS SELECT U.agent_id, A.type, U.GpuTime, W.WallTime, U.GpuTime * 1.0 / "
    "NULLIF(W.WallTime, "
    "0) AS Busy FROM (SELECT agent_id, guid, TOTAL(\"end\" - start) AS GpuTime FROM (SELECT agent_id, guid, "
    "start, \"end\" FROM rocpd_kernel_dispatch UNION ALL SELECT dst_agent_id, guid, start, \"end\" FROM "
    "rocpd_memory_copy) GROUP BY agent_id, guid) U JOIN (SELECT MAX(\"end\") - MIN(start) AS WallTime FROM "
    "(SELECT start, \"end\" FROM rocpd_kernel_dispatch WHERE start <> 0 OR \"end\" <> 0 UNION ALL SELECT "
    "start, \"end\" FROM rocpd_memory_copy)) "
    "W JOIN rocpd_info_agent A ON A.id = U.agent_id AND A.guid = U.guid;\n"
    "CREATE VIEW top AS SELECT name, COUNT(*) AS total_calls, TOTAL(duration) / 1000.0 AS total_duration, "
    "AVG(duration) / 1000.0 AS average, 100.0 * TOTAL(duration) / NULLIF((SELECT TOTAL(d) FROM (SELECT "
    "\"end\" - "
    "start AS d FROM rocpd_kernel_dispatch UNION ALL SELECT \"end\" - start FROM rocpd_memory_copy UNION ALL "
    "SELECT \"end\" - start FROM rocpd_region)), 0) AS percentage FROM (SELECT S.display_name AS name, "
    "CASE WHEN K.start <> 0 OR K.\"end\" <> 0 THEN K.\"end\" - K.start END AS duration FROM "
    "rocpd_kernel_dispatch K JOIN rocpd_info_kernel_symbol S ON S.id = "
    "K.kernel_id "
    "AND S.guid = K.guid UNION ALL SELECT N.string, M.\"end\" - M.start FROM rocpd_memory_copy M JOIN "
    "rocpd_string N ON N.id = M.name_id AND N.guid = M.guid UNION ALL SELECT N.string, R.\"end\" - R.start "
    "FROM "
    "rocpd_region R JOIN rocpd_string N ON N.id = R.name_id AND N.guid = R.guid) GROUP BY name ORDER BY "
    "total_duration DESC;\n"
    /* memory copies (hubprof trace --api): ROCm's view name and columns, with hubprof's direction */
    "CREATE VIEW memory_copies AS SELECT M.id, M.guid, 'MEMORY_COPY' AS category, M.nid, P.pid, T.tid, "
    "M.start, M.\"end\", M.\"end\" - M.start AS duration, S.string AS name, M.stream_id, M.queue_id, Q.name "
    "AS queue_name, M.size, M.dst_agent_id, A.absolute_index AS dst_agent_abs_index, A.type AS "
    "dst_agent_type, M.dst_address, M.src_agent_id, M.src_address, CASE COALESCE(json_extract(M.extdata, "
    "'$.direction'), 0) WHEN 1 THEN 'H2D' WHEN 2 THEN 'D2H' WHEN 3 THEN 'D2D' WHEN 4 THEN 'FILL' ELSE "
    "'UNKNOWN' END AS direction FROM rocpd_memory_copy M JOIN rocpd_string S ON S.id = M.name_id AND "
    "S.guid = M.guid JOIN rocpd_info_process P ON P.id = M.pid AND P.guid = M.guid LEFT JOIN "
    "rocpd_info_thread T ON T.id = M.tid AND T.guid = M.guid LEFT JOIN rocpd_info_queue Q ON Q.id = "
    "M.queue_id AND Q.guid = M.guid LEFT JOIN rocpd_info_agent A ON A.id = M.dst_agent_id AND A.guid = "
    "M.guid;\n"
    /* PC samples (issue 28): rocprofv3's columns; every sample has its rocpd_event (category PC_SAMPLE) */
    "CREATE VIEW samples AS SELECT R.id, R.guid, (SELECT string FROM rocpd_string WHERE id = E.category_id "
    "AND guid = E.guid) AS category, (SELECT string FROM rocpd_string WHERE id = T.name_id AND guid = "
    "T.guid) AS name, T.nid, P.pid, TH.tid, R.timestamp, R.event_id, E.stack_id, E.parent_stack_id, "
    "E.correlation_id AS corr_id, E.extdata, E.call_stack, E.line_info FROM rocpd_sample R JOIN rocpd_track "
    "T ON T.id = R.track_id AND T.guid = R.guid JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid "
    "JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid JOIN rocpd_info_thread TH ON TH.id = "
    "T.tid AND TH.guid = T.guid;\n";

/* Metadata tags owned by the format, never returned as user metadata. */
int rp_reserved_tag(const char *t) {
  return strcmp(t, "schema_version") == 0 || strcmp(t, "uuid") == 0 || strcmp(t, "guid") == 0 ||
         strcmp(t, RP_WRITER_TAG) == 0;
}

/* The insert statements of the tables rp_write_map does not cover, by hub table; '@name' is expanded to
 * the physical table. */
const char *const rp_ins_sql[WS_COUNT] = {
    [HP_TABLE_METADATA] = "INSERT INTO @metadata(tag, value) VALUES (?, ?)",
    [WS_STRING] = "INSERT INTO @string(id, string) VALUES (?, ?)",
    [WS_META_UPDATE] = "UPDATE @metadata SET value = ?2 WHERE tag = ?1",
};

/* The dispatch's columns after its two ids, in hp_table_describe's order, for both maps below: the rocpd
 * columns (each behind p: "@" in the read map, "" in the write map), then the extdata keys. */
#define RP_DISPATCH_COLS(p)                                                                                  \
  p "pid", p "tid", p "agent_id", p "queue_id", p "kernel_id", p "grid_size_x", p "grid_size_y",             \
      p "grid_size_z", p "workgroup_size_x", p "workgroup_size_y", p "workgroup_size_z",                     \
      p "private_segment_size", p "group_segment_size", p "start", p "end", "$enqueue_ns", "$passes",        \
      "$bytes_accessible", "$bytes_restored", "$cold", "$region_id", "$correlation_id", "$graph_id"

/* How each hub column is read, as an SQL expression, in the order of the hub's schema description
 * (hp_table_describe): '@col' is a column of the rocpd table (NULL when a file lacks it), '$key' a key of its
 * extdata JSON (NULL when absent or when extdata is not valid JSON). SQL gives every default, so the reader
 * fills rows generically by column type. NULL entries are made by the reader (joins of other tables). */
const char *const rp_read_expr[HP_TABLE_COUNT][RP_MAX_COLS] = {
    [HP_TABLE_NODE] = {"@id", "@hostname", "@machine_id", "@system_name", "@release", "@version",
                       "@hardware_name"},
    [HP_TABLE_PROCESS] = {"@id", "@nid", "@pid", "@ppid", "COALESCE($rank, -1)", "COALESCE(@start, @init)",
                          "COALESCE(@end, @fini)", "@command", "$lost_records", "COALESCE($world_size, -1)",
                          "COALESCE($local_rank, -1)", "$job_id", "$clock_offset_ns",
                          "COALESCE($exit_code, -1)", "COALESCE($exit_signal, -1)"},
    [HP_TABLE_THREAD] = {"@id", "@pid", "@tid", "@start", "@end", "@name"},
    /* rocprofv3 keeps device properties in extdata under its own names (cu_count, …) */
    [HP_TABLE_AGENT] =
        {"@id", "@nid",
         "COALESCE($type, CASE @type WHEN 'CPU' THEN 1 WHEN 'GPU' THEN 2 WHEN 'NIC' THEN 3 ELSE 0 END)",
         "@logical_index", "@vendor_name", "@name", "@product_name", "$runtime",
         "COALESCE($compute_units, $cu_count)", "COALESCE($max_clock_mhz, $max_engine_clk_fcompute)",
         "$global_mem_bytes", "COALESCE($local_mem_bytes, $lds_size_in_kb * 1024)",
         "COALESCE($wave_size, $wave_front_size)"},
    [HP_TABLE_QUEUE] = {"@id", "@pid", "$agent_id", "@name"},
    [HP_TABLE_CODE_OBJECT] = {"@id", "@pid", "@agent_id", "@uri", "@load_base", "@load_size", "$hash",
                              "$code_size", "$build_options", "$source", "$ir_hash"},
    [HP_TABLE_KERNEL_SYMBOL] = {"@id", "@code_object_id", "@kernel_name",
                                "COALESCE($display_name, @display_name)", "@private_segment_size",
                                "@group_segment_size", "$program_hash", "$registers"},
    [HP_TABLE_DISPATCH] = {"@id", "COALESCE($dispatch_id, @dispatch_id)", RP_DISPATCH_COLS("@")},
    [HP_TABLE_COUNTER_INFO] = {"@id", "COALESCE($agent_id, @agent_id)", "@name", "@description", "@block",
                               "@units", "@expression"},
    /* dispatch_id and pass depend on who wrote the file (the reader); extdata follows the columns and is
     * decoded once per distinct text (rocpd_read.c), not per row */
    [HP_TABLE_COUNTER_VALUE] = {NULL, "@pmc_id", NULL, "0", "@value", "0", "@extdata"},
    [HP_TABLE_REGION] = {"@id", "@pid", "@tid", NULL, NULL, "@start", "@end"},
    [HP_TABLE_METADATA] = {"@tag", "@value"},
    /* PC samples are rocpd_sample rows on the executing thread's track (track id = thread row id) */
    [HP_TABLE_PC_SAMPLE] = {"@id", "$dispatch_id", "$code_object_id", "$offset", "@timestamp", "@track_id",
                            "$weight", "$stall_reason", "$samples"},
    [HP_TABLE_COUNTER_SAMPLE] =
        {"@id", "@dispatch_id", "@pmc_id", "@timestamp",
         "CASE WHEN $value_bits IS NOT NULL AND @value IS NOT NULL THEN -0.0 ELSE @value END", "$sample_set",
         "$process_id"},
    [HP_TABLE_CODE_BLOB] = {"@id", "@hash", "@offset", "@total_size", "@data"},
    /* the name through rocpd_string (the reader's join) */
    [HP_TABLE_MEMORY_COPY] = {"@id", "@pid", "@tid", "COALESCE(@dst_agent_id, @src_agent_id)", "@queue_id",
                              NULL, "$direction", "@size", "$enqueue_ns", "@start", "@end", "$region_id"},
    [HP_TABLE_CEILING] =
        {"@id", "@agent_id", "@name",
         "CASE WHEN $value_bits IS NOT NULL AND @value IS NOT NULL THEN -0.0 ELSE @value END", "@unit",
         "@method", "@note", "@measured"},
};

/* Where each hub column is written, in the order of hp_table_describe, for the tables whose rows map
 * column by column (the others are written by rocpd_write.c's own code: counter values on the hot path
 * with their exact-bits extdata, metadata keyed by tag): "a" a rocpd column, "a,b" the same value in
 * several, "$key" an extdata key left out at its default ("$key=-1": default -1; "$key=@col": default the
 * value of hub column col), "?a" a column where 0 or "" is written as NULL (unknown, as NULL in Parquet: a
 * process end never recorded, a thread without a name; only where ROCm's schema allows NULL; read back as
 * 0 / ""), an extdata key absent is NULL too, "#a" a string stored as its rocpd_string id, "%a" a real whose
 * -0.0 and NaN (which SQLite cannot keep) also go to extdata as "a_bits", "" a value the writer derives
 * itself (rp_write_extra names the columns it fills). A hub column added to a table here is written by every
 * path; dispatches also go through the page writer (rocpd_pages.c), which takes the same extdata text and
 * encodes the rocpd columns itself: a new dispatch column mapped to an extdata key needs nothing there. */
const char *const rp_write_map[HP_TABLE_COUNT][RP_MAX_COLS] = {
    [HP_TABLE_NODE] = {"id", "?hostname", "machine_id", "?system_name", "?release", "?version",
                       "?hardware_name"},
    [HP_TABLE_PROCESS] = {"id", "nid", "pid", "?ppid", "$rank=-1", "?start,init", "?end,fini", "?command",
                          "$lost_records", "$world_size=-1", "$local_rank=-1", "$job_id", "$clock_offset_ns",
                          "$exit_code=-1", "$exit_signal=-1"},
    [HP_TABLE_THREAD] = {"id", "pid", "tid", "?start", "?end", "?name"},
    [HP_TABLE_AGENT] = {"id", "nid", "", "absolute_index,logical_index,type_index", "vendor_name", "name",
                        "product_name", "$runtime", "$compute_units", "$max_clock_mhz", "$global_mem_bytes",
                        "$local_mem_bytes", "$wave_size"},
    [HP_TABLE_QUEUE] = {"id", "pid", "$agent_id", "?name"},
    [HP_TABLE_CODE_OBJECT] = {"id", "pid", "agent_id", "?uri", "load_base", "load_size", "$hash",
                              "$code_size", "$build_options", "$source", "$ir_hash"},
    [HP_TABLE_KERNEL_SYMBOL] = {"id", "code_object_id", "kernel_name", "", "private_segment_size",
                                "group_segment_size", "$program_hash", "$registers"},
    [HP_TABLE_COUNTER_INFO] = {"id", "agent_id", "name,symbol", "?description", "?block", "units",
                               "?expression"},
    /* rocpd's dispatch_id (and the event) is the row id, unique in the file; the collector's id goes to
     * extdata when it differs */
    [HP_TABLE_DISPATCH] = {"id,dispatch_id,event_id", "$dispatch_id=@id", RP_DISPATCH_COLS("")},
    /* the row id is a running number of the file (rocpd_pmc_event has no hub id: bind_extra) */
    [HP_TABLE_COUNTER_VALUE] = {"event_id", "pmc_id", "$pass", "$imputed", "%value", "$region_id"},
    /* the category's string id waits in event_id until commit gives the region its event */
    [HP_TABLE_REGION] = {"id", "pid", "tid", "#name_id", "#event_id", "start", "end"},
    [HP_TABLE_PC_SAMPLE] = {"id", "$dispatch_id", "$code_object_id", "$offset", "timestamp", "track_id",
                            "$weight", "$stall_reason", "$samples"},
    [HP_TABLE_COUNTER_SAMPLE] = {"id", "dispatch_id", "pmc_id", "timestamp", "%value", "$sample_set",
                                 "$process_id"},
    [HP_TABLE_CODE_BLOB] = {"id", "hash", "offset", "total_size", "data"},
    /* the device is both ends' agent (hubprof has no host agent row); the direction says which way */
    [HP_TABLE_MEMORY_COPY] = {"id", "pid", "tid", "dst_agent_id,src_agent_id", "queue_id", "#name_id",
                              "$direction", "size", "$enqueue_ns", "start", "end", "$region_id"},
    [HP_TABLE_CEILING] = {"id", "agent_id", "name", "%value", "unit", "?method", "?note", "?measured"},
};

/* The columns the writer derives for a row of those tables (from other tables' rows, or constants), in the
 * order rocpd_write.c binds them. */
const char *const rp_write_extra[HP_TABLE_COUNT] = {
    [HP_TABLE_NODE] = "hash",
    [HP_TABLE_THREAD] = "nid, ppid",
    [HP_TABLE_AGENT] = "pid, type",
    [HP_TABLE_QUEUE] = "nid",
    [HP_TABLE_CODE_OBJECT] = "nid, load_delta, storage_type",
    [HP_TABLE_KERNEL_SYMBOL] = "nid, pid, display_name",
    [HP_TABLE_COUNTER_INFO] = "nid, pid, target_arch, value_type, is_constant, is_derived, spm_support",
    [HP_TABLE_DISPATCH] = "nid, stream_id, region_name_id",
    [HP_TABLE_COUNTER_VALUE] = "id",
    [HP_TABLE_REGION] = "nid",
    [HP_TABLE_MEMORY_COPY] = "nid, stream_id",
};

/* The rocpd table (RT_*) of each hub table. */
const int rp_table_base[HP_TABLE_COUNT] = {
    [HP_TABLE_NODE] = RT_NODE,
    [HP_TABLE_PROCESS] = RT_PROCESS,
    [HP_TABLE_THREAD] = RT_THREAD,
    [HP_TABLE_AGENT] = RT_AGENT,
    [HP_TABLE_QUEUE] = RT_QUEUE,
    [HP_TABLE_CODE_OBJECT] = RT_CODE_OBJECT,
    [HP_TABLE_KERNEL_SYMBOL] = RT_KERNEL_SYMBOL,
    [HP_TABLE_DISPATCH] = RT_KERNEL_DISPATCH,
    [HP_TABLE_COUNTER_INFO] = RT_PMC,
    [HP_TABLE_COUNTER_VALUE] = RT_PMC_EVENT,
    [HP_TABLE_REGION] = RT_REGION,
    [HP_TABLE_METADATA] = RT_METADATA,
    [HP_TABLE_PC_SAMPLE] = RT_SAMPLE,
    [HP_TABLE_COUNTER_SAMPLE] = RT_HP_COUNTER_SAMPLE,
    [HP_TABLE_CODE_BLOB] = RT_HP_CODE_BLOB,
    [HP_TABLE_MEMORY_COPY] = RT_MEMORY_COPY,
    [HP_TABLE_CEILING] = RT_HP_CEILING,
};
