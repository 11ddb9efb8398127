/* hubprof hub: the one storage library for profiling data (public C API).
 * Code outside the hub reads and writes profiles only through this header; it never names a format's files.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HUB_H
#define HUBPROF_HUB_H

#include <stddef.h>
#include <stdint.h>

#include "hubprof/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status: every hub function that can fail returns one of these. ---------------------------- */
typedef enum hp_status {
  HP_OK = 0,           /* success */
  HP_END = 1,          /* a cursor has no more rows (not an error) */
  HP_ERR_INVALID = -1, /* bad argument: NULL handle, unknown table, struct size too small, bad mode */
  HP_ERR_NOMEM = -2,   /* out of memory */
  HP_ERR_IO = -3, /* a system call failed (open, write, mmap, rename, disk full …); see hp_store_error */
  HP_ERR_NOT_FOUND = -4, /* the path does not exist */
  HP_ERR_FORMAT = -5,    /* not a hubprof store of any known format (foreign file) or unknown format name */
  HP_ERR_VERSION = -6,   /* a known format, but a version this build cannot read */
  HP_ERR_CORRUPT =
      -7, /* the store is damaged (bad checksum, bad structure); complete parts may be readable */
  HP_ERR_TRUNCATED = -8, /* the store ends early; every complete part before the cut is readable */
  HP_ERR_UNSUPPORTED =
      -9, /* the operation is not supported by this format or mode (e.g. writing a read store) */
  HP_ERR_CONSTRAINT = -10, /* the data breaks a rule of the model (duplicate id, dangling reference) */
  HP_ERR_CANCELLED = -11,  /* stopped on request (hp_assemble_opts.cancel): nothing was committed */
} hp_status;

/* A short constant English text for a status ("corrupt data"); never NULL. */
HP_API const char *hp_status_str(hp_status s);

/* ---- Tables of the data model ----------------------------------------------------------------- */
typedef enum hp_table {
  HP_TABLE_NODE = 0,
  HP_TABLE_PROCESS,
  HP_TABLE_THREAD,
  HP_TABLE_AGENT,
  HP_TABLE_QUEUE,
  HP_TABLE_CODE_OBJECT,
  HP_TABLE_KERNEL_SYMBOL,
  HP_TABLE_DISPATCH,
  HP_TABLE_COUNTER_INFO,
  HP_TABLE_COUNTER_VALUE,
  HP_TABLE_REGION,
  HP_TABLE_METADATA,
  HP_TABLE_PC_SAMPLE,      /* PC samples of kernel code (hubprof sample) */
  HP_TABLE_COUNTER_SAMPLE, /* counter values read during a dispatch (a timeline) */
  HP_TABLE_CODE_BLOB,      /* the bytes of code objects, once per distinct hash, in chunks */
  HP_TABLE_MEMORY_COPY, /* transfer commands: buffer/image/SVM reads, writes, copies, fills, maps (--api) */
  HP_TABLE_CEILING,     /* a device's measured peaks (hubprof roofline): the first analysis result kept */
  HP_TABLE_COUNT        /* number of tables; not a table */
} hp_table;

/* Row structs. Every struct begins with `size`, which the caller sets to sizeof(the struct it was
 * compiled with) before writing or reading, so fields can be added at the end without breaking the ABI.
 * Ids (`id` and every `*_id`) are chosen by the writer, unique per table within one store, and
 * never 0 for a present row; 0 in a reference means "none". Merge remaps them.
 * Strings are UTF-8, never NULL when read (missing = ""); when written, NULL is taken as "".
 * Strings returned by a cursor stay valid until the next call on that cursor.
 * Times are nanoseconds on one clock per node (CLOCK_MONOTONIC_RAW for OpenCL on PoCL); 0 = unknown. */

typedef struct hp_node {
  uint32_t size;
  uint64_t id;
  const char *hostname;    /* identity of a node together with machine_id */
  const char *machine_id;  /* /etc/machine-id when present */
  const char *system_name; /* uname sysname, release, version, machine */
  const char *release;
  const char *version;
  const char *machine;
} hp_node;

typedef struct hp_process {
  uint32_t size;
  uint64_t id;
  uint64_t node_id;
  int64_t pid;
  int64_t ppid;
  int64_t rank; /* MPI rank from the launcher's environment, -1 when none */
  int64_t start_ns;
  int64_t end_ns;        /* 0 while running or when the process died without saying */
  const char *command;   /* command line, arguments separated by spaces */
  uint64_t lost_records; /* records the collector could not store (out of space), reported by info/analyze */
  /* cluster runs (docs/cluster.md), from the launcher's environment: */
  int64_t world_size;      /* ranks in the job, -1 when none */
  int64_t local_rank;      /* rank among the job's ranks on this node, -1 when none */
  const char *job_id;      /* the launcher's job id ("" when none) */
  int64_t clock_offset_ns; /* this node's CLOCK_REALTIME - CLOCK_MONOTONIC_RAW when the process's log opened:
                              t + clock_offset_ns is wall-clock (UTC) time; 0 = unknown */
  /* how the process ended: its exit code (0-255) and the signal that ended it (0 = none: it exited), each
     -1 where unknown (NULL in rocpd and Parquet): killed with SIGKILL, or a child that returned from main */
  int64_t exit_code;
  int64_t exit_signal;
} hp_process;

typedef struct hp_thread {
  uint32_t size;
  uint64_t id;
  uint64_t process_id;
  int64_t tid;
  int64_t start_ns;
  int64_t end_ns;
  const char *name;
} hp_thread;

typedef enum hp_agent_type {
  HP_AGENT_UNKNOWN = 0,
  HP_AGENT_CPU = 1,
  HP_AGENT_GPU = 2,
  HP_AGENT_ACCEL = 3
} hp_agent_type;

typedef struct hp_agent {
  uint32_t size;
  uint64_t id;
  uint64_t node_id;
  int32_t type;         /* hp_agent_type */
  int32_t device_index; /* index among the node's devices of its runtime */
  const char *vendor;
  const char *name;         /* short device name, e.g. "gfx942" or "cpu-haswell" */
  const char *product_name; /* marketing name when known */
  const char *runtime;      /* "OpenCL 3.0 PoCL …", "CUDA 13.0" */
  int64_t compute_units;
  int64_t max_clock_mhz;
  int64_t global_mem_bytes;
  int64_t local_mem_bytes;
  int64_t wave_size; /* SIMD width / warp / wavefront size, 0 unknown */
} hp_agent;

typedef struct hp_queue {
  uint32_t size;
  uint64_t id;
  uint64_t process_id;
  uint64_t agent_id;
  const char *name;
} hp_queue;

typedef struct hp_code_object {
  uint32_t size;
  uint64_t id;
  uint64_t process_id;
  uint64_t agent_id;
  const char *uri; /* where the code came from (file, memory://, program hash) */
  uint64_t load_base;
  uint64_t load_size;
  /* since schema 2 (hubprof sample): what was built and the bytes that ran */
  const char *hash;          /* SHA-256 (hex) of the bytes in code_blob, "" when they were not captured */
  uint64_t code_size;        /* bytes of the captured code (the shared object PoCL ran), 0 when none */
  const char *build_options; /* options given to clBuildProgram / clCompileProgram / clLinkProgram */
  const char *source;        /* OpenCL C source when the program was created from source, else "" */
  /* the IR the code was generated from (PoCL's parallel.bc beside the kernel's .so), its SHA-256 (hex) in
   * code_blob, "" when none was kept; analysis compiles it again for the source lines of `-g` alone */
  const char *ir_hash;
} hp_code_object;

typedef struct hp_kernel_symbol {
  uint32_t size;
  uint64_t id;
  uint64_t code_object_id;  /* 0 when unknown */
  const char *name;         /* mangled / runtime name */
  const char *display_name; /* demangled or shortened name for people */
  int64_t private_size;     /* static private (scratch) bytes per work-item, 0 unknown */
  int64_t group_size;       /* static local (LDS/shared) bytes per work-group */
  const char
      *program_hash; /* identity of the kernel's program: 16 hex digits of a hash of what the application
                        gave the runtime (sources and build options, binaries, linked inputs); "" unknown.
                        A kernel is its name and its program: merge keeps rows apart by it */
  int64_t registers; /* registers per work-item (CUDA: per thread), 0 unknown */
} hp_kernel_symbol;

typedef struct hp_dispatch {
  uint32_t size;
  uint64_t id; /* row id, unique in the store */
  uint64_t
      dispatch_id; /* assigned once by the collector, unique in its process, the same for every replay pass */
  uint64_t process_id;
  uint64_t thread_id;
  uint64_t agent_id;
  uint64_t queue_id;
  uint64_t kernel_id;
  uint32_t grid[3];          /* global work size per dimension (work-items) */
  uint32_t workgroup[3];     /* local work size per dimension, 0 when the runtime chose */
  int64_t private_size;      /* dynamic private bytes per work-item */
  int64_t group_size;        /* dynamic local bytes per work-group */
  int64_t start_ns;          /* device start */
  int64_t end_ns;            /* device end */
  int64_t enqueue_ns;        /* host time of the enqueue call */
  uint32_t passes;           /* replay passes this dispatch ran (1 = not replayed, 0 = unknown) */
  uint64_t bytes_accessible; /* bytes the kernel could write (kernel replay), 0 unknown */
  uint64_t bytes_restored;   /* bytes restored across all later passes (kernel replay) */
  uint32_t cold; /* 1: the first dispatch of its kernel in its process (its launch too under multiplexing),
                  * whose time and counters hold first-use (JIT) cost: left out of the imputed medians under
                  * multiplexing; marked by the collector under trace; 0 otherwise */
  uint64_t
      region_id; /* innermost region (hp_region.id) open on the enqueuing thread at the enqueue, 0 none */
  /* added for CUDA (issue 25): */
  uint64_t correlation_id; /* the launch call's id in the runtime's tracing (CUPTI's correlationId), 0 none */
  uint64_t graph_id;       /* the graph a kernel node ran in (CUPTI's graphId), 0 not a graph's */
} hp_dispatch;

typedef struct hp_counter_info {
  uint32_t size;
  uint64_t id;
  uint64_t agent_id; /* 0 when the counter is not specific to one agent */
  const char *name;
  const char *description;
  const char *block; /* hardware block, e.g. "SQ", "TCC", "sw" */
  const char *unit;
  const char *expression; /* for derived counters; "" for raw */
} hp_counter_info;

typedef struct hp_counter_value {
  uint32_t size;
  uint64_t dispatch_id; /* row id of the dispatch (hp_dispatch.id), not the collector's dispatch id */
  uint64_t counter_id;
  uint32_t pass;    /* pass that measured it, 1-based; 0 = not tied to a pass */
  uint32_t imputed; /* 1 when the value was imputed (multiplexing), not measured */
  double value;
  uint64_t region_id; /* a region's host part (dispatch_id 0): hp_region.id; 0 for a dispatch's value */
} hp_counter_value;
/* A region's host part (docs/api-regions.md): a value of no dispatch that names its region. The one test for
 * it, shared by the readers that keep host parts apart from dispatches' values (analysis, export, merge). */
static inline int hp_counter_value_is_host_part(const hp_counter_value *v) {
  return v->dispatch_id == 0 && v->region_id != 0;
}

typedef struct hp_region {
  uint32_t size;
  uint64_t id;
  uint64_t process_id;
  uint64_t thread_id;
  const char *name;
  const char *category;
  int64_t start_ns;
  int64_t end_ns;
} hp_region;

typedef struct hp_metadata {
  uint32_t size;
  const char *key; /* unique within a store */
  const char *value;
} hp_metadata;

/* One PC sample of a thread that was executing a kernel (since schema 2). The program counter is kept as
 * an offset into the code object's bytes (code_blob), so it means the same on any machine. */
typedef struct hp_pc_sample {
  uint32_t size;
  uint64_t id;
  uint64_t dispatch_id;    /* row id of the dispatch running on that thread at that time */
  uint64_t code_object_id; /* code object holding the sampled instruction, 0 when unknown */
  uint64_t offset;         /* byte offset of the sampled instruction in the code object's bytes */
  int64_t timestamp_ns;    /* when the sample was taken */
  uint64_t thread_id;      /* thread row of the executing thread */
  uint64_t weight;         /* what one sample stands for: nanoseconds of the sampling period (CPU clock) */
  /* since stall reasons (GPU PC sampling, docs/sampling.md): */
  const char *stall_reason; /* what the sampled warp was waiting on, the runtime's own name for it (CUPTI:
                               "smsp__pcsamp_warps_issue_stalled_long_scoreboard"); "" when unknown or not
                               given (CPU samples) */
  uint64_t samples;         /* samples this row stands for (CUPTI counts per instruction and reason); 0 = 1 */
} hp_pc_sample;

/* One read of one counter during a dispatch (a counter timeline; since schema 2). */
typedef struct hp_counter_sample {
  uint32_t size;
  uint64_t id;
  uint64_t dispatch_id; /* row id of the dispatch */
  uint64_t counter_id;  /* counter_info row */
  int64_t timestamp_ns;
  double value; /* the counter's value since the dispatch began (cumulative counters) */
  /* added for sampling beyond one pass (issue 32): */
  uint64_t sample_set; /* the counter set (1-based) whose slice took it, when sampled counters rotate over
                          more sets than one pass holds; 1 with one set, 0 in stores from before */
  uint64_t process_id; /* the process that took it (a sample of no dispatch names its process only here);
                          0 in stores from before */
} hp_counter_sample;

/* A chunk of a code object's bytes (since schema 2): the bytes of one hash are the chunks of that hash
 * ordered by offset; each distinct hash is stored once per store. */
typedef struct hp_code_blob {
  uint32_t size;
  uint64_t id;
  const char *hash;    /* SHA-256 of all the bytes (hex), as in hp_code_object.hash */
  uint64_t offset;     /* where this chunk starts */
  uint64_t total_size; /* bytes of the whole object */
  const char *data;    /* this chunk, base64 (RFC 4648) */
} hp_code_blob;

/* Direction of a memory copy (hp_memory_copy.direction). */
typedef enum hp_copy_direction {
  HP_COPY_UNKNOWN = 0,
  HP_COPY_H2D = 1,  /* host to device: write, unmap of a mapping, SVM copy into device memory */
  HP_COPY_D2H = 2,  /* device to host: read, map */
  HP_COPY_D2D = 3,  /* device to device: copy between memory objects, SVM copy */
  HP_COPY_FILL = 4, /* a fill of device memory with a pattern */
} hp_copy_direction;

/* One transfer command (since store version with memory_copy; hubprof trace --api): the OpenCL call that
 * enqueued it, its bytes and direction, its queue, and the device's start and end from the event's
 * profiling info (0 when the command had none). */
typedef struct hp_memory_copy {
  uint32_t size;
  uint64_t id;
  uint64_t process_id;
  uint64_t thread_id; /* the enqueuing thread */
  uint64_t agent_id;  /* the queue's device */
  uint64_t queue_id;
  const char *name;   /* the OpenCL call, e.g. "clEnqueueReadBuffer" */
  uint32_t direction; /* hp_copy_direction */
  uint64_t bytes;     /* bytes moved (a fill: bytes filled; a rectangle or image: its region's bytes) */
  int64_t enqueue_ns; /* host time of the enqueue call */
  int64_t start_ns;   /* device start */
  int64_t end_ns;     /* device end */
  uint64_t region_id; /* innermost region open on the enqueuing thread, 0 none */
} hp_memory_copy;

/* One ceiling of a device (an analysis result; hubprof roofline): the best rate a micro-benchmark reached for
 * one kind of work, the roof of the roofline. The rows of one measurement share agent and measured_ns. */
typedef struct hp_ceiling {
  uint32_t size;
  uint64_t id;
  uint64_t agent_id;   /* the device measured (its node: the machine) */
  const char *name;    /* "fp64", "fp32", "fp16" (FLOP/s), "int32" (op/s), "dram", "l1".."l4" (GB/s) */
  double value;        /* in `unit`; < 0 when it could not be measured (`note` says why) */
  const char *unit;    /* "GFLOP/s", "GOP/s", "GB/s" */
  const char *method;  /* what measured it: tool and version ("hubprof roofline 0.1.0", "... --quick") */
  const char *note;    /* the benchmark that gave the value (kernel, sizes), or why there is none */
  int64_t measured_ns; /* when it was measured: Unix time (UTC) in nanoseconds, 0 unknown */
} hp_ceiling;

/* ---- Table descriptions: let bindings (Python) and generic code walk any row without knowing it. ---- */
typedef enum hp_col_type {
  HP_COL_U32 = 1,
  HP_COL_I32,
  HP_COL_U64,
  HP_COL_I64,
  HP_COL_F64,
  HP_COL_STR, /* const char * */
} hp_col_type;

typedef struct hp_column {
  const char *name; /* e.g. "grid_x" */
  hp_col_type type;
  size_t offset;   /* offset in the row struct */
  const char *ref; /* name of the table this column refers to by id, or NULL */
} hp_column;

typedef struct hp_table_desc {
  const char *name; /* "dispatch" */
  hp_table table;
  size_t row_size; /* sizeof the row struct in this build */
  size_t ncolumns;
  const hp_column *columns;
} hp_table_desc;

/* Description of a table, or NULL when t is not a table. */
HP_API const hp_table_desc *hp_table_describe(hp_table t);
/* Table by name ("dispatch"), HP_TABLE_COUNT when unknown. */
HP_API hp_table hp_table_from_name(const char *name);

/* ---- Stores ----------------------------------------------------------------------------------- */
typedef struct hp_store hp_store;   /* opaque: one open store */
typedef struct hp_cursor hp_cursor; /* opaque: one read cursor over one table */

typedef enum hp_mode {
  HP_READ = 0,        /* open an existing store */
  HP_CREATE = 1,      /* create a new store; it appears at `path` only when hp_store_close succeeds */
  HP_CREATE_LIVE = 2, /* create directly at `path`, readable while written and after a crash ("log" only) */
} hp_mode;

/* Open or create a store. `format` is a format name ("rocpd", "log"), or NULL / "auto" to detect it
 * when reading (to create, NULL means "rocpd"). On failure returns non-OK and, when `out` is not NULL,
 * may still set *out to a store whose hp_store_error explains; always close it. */
HP_API hp_status hp_store_open(const char *path, const char *format, hp_mode mode, hp_store **out);

/* Finish and close. For a created store this commits: the output appears at its path (atomic rename
 * where the format allows) only if every step succeeded; otherwise nothing is left behind.
 * Returns the first error of the store's life, if any. Accepts NULL. */
HP_API hp_status hp_store_close(hp_store *s);

/* Commit a created store now (what hp_store_close does first), keeping the handle so hp_store_error
 * can explain a failure; hp_store_close then only releases it. */
HP_API hp_status hp_store_commit(hp_store *s);

/* Close a created store without committing: nothing is left at its path. Accepts NULL. */
HP_API void hp_store_abort(hp_store *s);

/* One line naming the file and the problem of the last failure ("x.db: truncated at byte 4096"),
 * or "" when none. Valid until the next call on the store. */
HP_API const char *hp_store_error(const hp_store *s);

/* Name of the store's format ("rocpd"). */
HP_API const char *hp_store_format(const hp_store *s);
/* Path given at open. */
HP_API const char *hp_store_path(const hp_store *s);

/* Schema version of the data as stored, e.g. "3.0.4" for rocpd, "1" for log. */
HP_API const char *hp_store_schema_version(const hp_store *s);

/* Write one row. `row` points at the struct matching the table, with `size` set. Thread-safe for
 * the "log" format (each thread appends on its own, without locks); other formats serialise. */
HP_API hp_status hp_write(hp_store *s, hp_table t, const void *row);

/* Typed conveniences around hp_write. */
HP_API hp_status hp_write_node(hp_store *s, const hp_node *r);
HP_API hp_status hp_write_process(hp_store *s, const hp_process *r);
HP_API hp_status hp_write_thread(hp_store *s, const hp_thread *r);
HP_API hp_status hp_write_agent(hp_store *s, const hp_agent *r);
HP_API hp_status hp_write_queue(hp_store *s, const hp_queue *r);
HP_API hp_status hp_write_code_object(hp_store *s, const hp_code_object *r);
HP_API hp_status hp_write_kernel_symbol(hp_store *s, const hp_kernel_symbol *r);
HP_API hp_status hp_write_dispatch(hp_store *s, const hp_dispatch *r);
HP_API hp_status hp_write_counter_info(hp_store *s, const hp_counter_info *r);
HP_API hp_status hp_write_counter_value(hp_store *s, const hp_counter_value *r);
HP_API hp_status hp_write_region(hp_store *s, const hp_region *r);
HP_API hp_status hp_write_metadata(hp_store *s, const char *key, const char *value);
HP_API hp_status hp_write_pc_sample(hp_store *s, const hp_pc_sample *r);
HP_API hp_status hp_write_counter_sample(hp_store *s, const hp_counter_sample *r);
HP_API hp_status hp_write_memory_copy(hp_store *s, const hp_memory_copy *r);
HP_API hp_status hp_write_ceiling(hp_store *s, const hp_ceiling *r);
/* Store the bytes of a code object as code_blob chunks, hashed (SHA-256); `hash_hex` (65 bytes, may be
 * NULL) gets the hash. The caller writes each distinct hash once per store. */
HP_API hp_status hp_write_code_bytes(hp_store *s, const void *bytes, size_t n, char *hash_hex);
/* Read back the bytes of a hash from the store's code_blob table: *out (malloc'd) and *n. HP_ERR_NOT_FOUND
 * when the store has no chunk of that hash; HP_ERR_CORRUPT when chunks are missing, overlap, or their
 * bytes do not have that hash. */
HP_API hp_status hp_read_code_bytes(hp_store *s, const char *hash_hex, void **out, size_t *n);

/* Rows of table t (counts what is readable; for a damaged log, the rows of its complete blocks). */
HP_API hp_status hp_store_count(hp_store *s, hp_table t, uint64_t *n);

/* Read cursors. Rows come in the order they were written (for rocpd: by id). */
HP_API hp_status hp_cursor_open(hp_store *s, hp_table t, hp_cursor **out);
/* Fill `row` (its `size` set by the caller) with the next row: HP_OK, HP_END, or an error. */
HP_API hp_status hp_cursor_next(hp_cursor *c, void *row);
HP_API void hp_cursor_close(hp_cursor *c);

/* Columnar read for bindings: up to `max` rows into `cols`, one array per column of the table in the
 * order of hp_table_describe(t)->columns, each of max elements of the column's type (uint32_t, int32_t,
 * uint64_t, int64_t, double, or const char * for strings; a NULL array skips that column, and a columnar
 * format does not even decode it). Strings stay valid until the next call on the cursor; when the hub
 * builds the batch (row formats) they lie in one buffer, row after row, column after column. *n gets the rows
 * read; returns HP_OK (rows may follow), HP_END (no rows were left: *n == 0) or an error. */
HP_API hp_status hp_cursor_next_batch(hp_cursor *c, void *const *cols, size_t max, size_t *n);

/* Value of a metadata key, or NULL. The string stays valid until the store is closed. */
HP_API const char *hp_store_metadata(hp_store *s, const char *key);

/* One line about the first thing found while opening that is worth a warning but is not damage, e.g. a
 * Parquet file rewritten since the store's manifest was written and read by its own footer; "" when none.
 * For a created store after hp_store_commit returned HP_OK: what the commit could not confirm although the
 * store is complete and in place (its folder could not be synced). Valid until the store is closed. */
HP_API const char *hp_store_note(const hp_store *s);

/* Damage found while reading (a store may be readable up to a point): HP_OK when none, otherwise
 * the status, and *offset (if not NULL) gets the byte where damage starts. Details in hp_store_error. */
HP_API hp_status hp_store_damage(const hp_store *s, uint64_t *offset);

/* A read cursor over part `part` (0 to nparts - 1) of table t, for scans shared out to threads: the parts
 * together hold every row once, part i's rows before part i + 1's, each part in hp_cursor_open's order.
 * Parquet shares out whole row groups (balanced by their rows); rocpd files written by hubprof equal ranges
 * of the dispatch table's ids; other tables and stores give every row to part 0 (the others are empty).
 * Cursors of different parts may be read from different threads at once; a rocpd store has one SQLite
 * connection, which they then take in turn: to read rocpd in parallel, open the store once per thread and
 * each thread's part on its own store. */
HP_API hp_status hp_cursor_open_part(hp_store *s, hp_table t, unsigned part, unsigned nparts,
                                     hp_cursor **out);

/* What a format knows of one column over a group of rows it may pass over (a Parquet row group's statistics):
 * known = 1 when every value of the group, as a cursor would return it, lies in [min, max] (integer columns).
 */
typedef struct hp_col_range {
  int known;
  int64_t min, max;
} hp_col_range;
/* Before reading a group of rows, ask keep(ctx, cols) (cols: one per column of the table, in
 * hp_table_describe's order) and pass the group over unread when it returns 0: for queries that can tell from
 * the ranges that none of its rows matters (a dispatch id range, a set of kernel ids). Call before the first
 * read; the rows of the groups read still all come. HP_ERR_UNSUPPORTED for a format without such groups
 * (rocpd, log: every row comes). */
HP_API hp_status hp_cursor_filter(hp_cursor *c, int (*keep)(void *ctx, const hp_col_range *cols), void *ctx);

/* ---- Merge ------------------------------------------------------------------------------------ */
/* Per-table arrays in public structs have this many slots, so that a new table does not change their
 * layout (the ABI) again; HP_TABLE_COUNT is at most this. */
#define HP_TABLE_SLOTS 32
typedef struct hp_merge_stats {
  uint32_t size;
  uint64_t inputs;
  uint64_t rows_in[HP_TABLE_SLOTS];  /* rows read per table (slots from HP_TABLE_COUNT on stay 0) */
  uint64_t rows_out[HP_TABLE_SLOTS]; /* rows written per table (after de-duplication) */
  uint64_t damaged_inputs;           /* inputs read only up to their damage */
  uint64_t duplicate_processes; /* processes found in an earlier input too (the same profile given twice) */
  uint64_t duplicate_rows;      /* their dispatches, regions and counter values, not written again; and
                                   counter values whose dispatch is not in the input (damage) */
  uint64_t metadata_conflicts;  /* metadata keys whose later inputs had another value (the first one kept) */
} hp_merge_stats;

/* Merge n stores (any formats) into `out` (an open HP_CREATE store): ids remapped; nodes, agents,
 * kernels, code objects and counter infos de-duplicated; processes kept apart by node + pid + start;
 * passes kept apart. Streams: memory depends on the small tables only. Damaged inputs are merged up to
 * their damage and counted in stats. Errors name the input; `out` is left for the caller to close or abort.
 */
HP_API hp_status hp_merge(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *stats);

/* Names of the formats compiled in, NULL-terminated. */
HP_API const char *const *hp_formats(void);

/* Library version string ("0.1.0"). */
HP_API const char *hp_version(void);

#ifdef __cplusplus
}
#endif
#endif /* HUBPROF_HUB_H */
