/* The OpenCL runtime provider (provider.h): the entry points it intercepts, one body shared by the ICD layer
 * (prov_opencl_layer.c) and the LD_PRELOAD shim (prov_opencl_preload.c), its devices
 * (prov_opencl_device.c), code objects (prov_opencl_codeobj.c), --api (prov_opencl_api.c) and kernel replay
 * (prov_opencl_replay.c). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_PROV_OPENCL_H
#define HUBPROF_COLLECTOR_PROV_OPENCL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl_icd.h>

#include "collector.h"
#include "select.h"

#include <stddef.h>

/* 1 once an ICD loader initialised us as a layer: the preload wrappers then forward without recording. */
extern _Atomic int hpc_layer_active HPC_HIDDEN;

/* The table the intercept code calls through: the layer's target table when the layer is active,
 * otherwise one filled with dlsym(RTLD_NEXT) (prov_opencl_preload.c). Never NULL after hpc_preload_next()
 * returned non-NULL. */
extern const cl_icd_dispatch *_Atomic hpc_layer_next HPC_HIDDEN;
HPC_HIDDEN const cl_icd_dispatch *hpc_preload_next(void);

/* ---- intercepted entry points: same code for the layer and the preload shim -------------------------- */
/* `n` is the table to forward to. Each preserves errno and returns what the real call returned. */
HPC_HIDDEN cl_command_queue hpc_CreateCommandQueue(const cl_icd_dispatch *n, cl_context c, cl_device_id d,
                                                   cl_command_queue_properties p, cl_int *err);
HPC_HIDDEN cl_command_queue hpc_CreateCommandQueueWithProperties(const cl_icd_dispatch *n, cl_context c,
                                                                 cl_device_id d, const cl_queue_properties *p,
                                                                 cl_int *err);
HPC_HIDDEN cl_int hpc_ReleaseCommandQueue(const cl_icd_dispatch *n, cl_command_queue q);
HPC_HIDDEN cl_kernel hpc_CreateKernel(const cl_icd_dispatch *n, cl_program p, const char *name, cl_int *err);
HPC_HIDDEN cl_int hpc_CreateKernelsInProgram(const cl_icd_dispatch *n, cl_program p, cl_uint num,
                                             cl_kernel *k, cl_uint *num_ret);
HPC_HIDDEN cl_kernel hpc_CloneKernel(const cl_icd_dispatch *n, cl_kernel k, cl_int *err);
HPC_HIDDEN cl_int hpc_EnqueueNDRangeKernel(const cl_icd_dispatch *n, cl_command_queue q, cl_kernel k,
                                           cl_uint dim, const size_t *offset, const size_t *global,
                                           const size_t *local, cl_uint nwait, const cl_event *wait,
                                           cl_event *ev);
HPC_HIDDEN cl_int hpc_EnqueueTask(const cl_icd_dispatch *n, cl_command_queue q, cl_kernel k, cl_uint nwait,
                                  const cl_event *wait, cl_event *ev);
HPC_HIDDEN cl_int hpc_Finish(const cl_icd_dispatch *n, cl_command_queue q);
HPC_HIDDEN cl_int hpc_WaitForEvents(const cl_icd_dispatch *n, cl_uint num, const cl_event *list);
/* Profile mode only (prov_opencl_replay.c): what kernel replay must know about buffers and kernel arguments.
 * In other modes each forwards untouched. */
HPC_HIDDEN cl_mem hpc_CreateBuffer(const cl_icd_dispatch *n, cl_context c, cl_mem_flags f, size_t size,
                                   void *host, cl_int *err);
HPC_HIDDEN cl_mem hpc_CreateBufferWithProperties(const cl_icd_dispatch *n, cl_context c,
                                                 const cl_mem_properties *props, cl_mem_flags f, size_t size,
                                                 void *host, cl_int *err);
HPC_HIDDEN cl_mem hpc_CreateSubBuffer(const cl_icd_dispatch *n, cl_mem parent, cl_mem_flags f,
                                      cl_buffer_create_type t, const void *info, cl_int *err);
HPC_HIDDEN cl_int hpc_ReleaseMemObject(const cl_icd_dispatch *n, cl_mem m);
HPC_HIDDEN cl_int hpc_EnqueueWriteBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem b, cl_bool blk,
                                         size_t off, size_t size, const void *p, cl_uint nw,
                                         const cl_event *w, cl_event *ev);
HPC_HIDDEN cl_int hpc_EnqueueCopyBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem src, cl_mem dst,
                                        size_t so, size_t dof, size_t size, cl_uint nw, const cl_event *w,
                                        cl_event *ev);
HPC_HIDDEN cl_int hpc_EnqueueFillBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem b,
                                        const void *pat, size_t psize, size_t off, size_t size, cl_uint nw,
                                        const cl_event *w, cl_event *ev);
HPC_HIDDEN void *hpc_EnqueueMapBuffer(const cl_icd_dispatch *n, cl_command_queue q, cl_mem b, cl_bool blk,
                                      cl_map_flags f, size_t off, size_t size, cl_uint nw, const cl_event *w,
                                      cl_event *ev, cl_int *e);
HPC_HIDDEN cl_int hpc_SetKernelArg(const cl_icd_dispatch *n, cl_kernel k, cl_uint i, size_t size,
                                   const void *v);
HPC_HIDDEN cl_int hpc_SetKernelArgSVMPointer(const cl_icd_dispatch *n, cl_kernel k, cl_uint i, const void *p);
HPC_HIDDEN cl_int hpc_SetKernelExecInfo(const cl_icd_dispatch *n, cl_kernel k, cl_kernel_exec_info what,
                                        size_t size, const void *v);
HPC_HIDDEN void *hpc_SVMAlloc(const cl_icd_dispatch *n, cl_context c, cl_svm_mem_flags f, size_t size,
                              cl_uint align);
HPC_HIDDEN void hpc_SVMFree(const cl_icd_dispatch *n, cl_context c, void *p);
HPC_HIDDEN cl_int hpc_ReleaseKernel(const cl_icd_dispatch *n, cl_kernel k);
HPC_HIDDEN cl_int hpc_ReleaseContext(const cl_icd_dispatch *n, cl_context c);
/* Programs (prov_opencl_codeobj.c): code_object rows per program and device, in every mode. */
HPC_HIDDEN cl_program hpc_CreateProgramWithSource(const cl_icd_dispatch *n, cl_context c, cl_uint count,
                                                  const char **strings, const size_t *lengths, cl_int *err);
HPC_HIDDEN cl_program hpc_CreateProgramWithBinary(const cl_icd_dispatch *n, cl_context c, cl_uint nd,
                                                  const cl_device_id *d, const size_t *lengths,
                                                  const unsigned char **bins, cl_int *status, cl_int *err);
HPC_HIDDEN cl_int hpc_BuildProgram(const cl_icd_dispatch *n, cl_program p, cl_uint nd, const cl_device_id *d,
                                   const char *options, void(CL_CALLBACK *notify)(cl_program, void *),
                                   void *data);
HPC_HIDDEN cl_int hpc_CompileProgram(const cl_icd_dispatch *n, cl_program p, cl_uint nd,
                                     const cl_device_id *d, const char *options, cl_uint nh,
                                     const cl_program *hdrs, const char **names,
                                     void(CL_CALLBACK *notify)(cl_program, void *), void *data);
HPC_HIDDEN cl_program hpc_LinkProgram(const cl_icd_dispatch *n, cl_context c, cl_uint nd,
                                      const cl_device_id *d, const char *options, cl_uint np,
                                      const cl_program *progs, void(CL_CALLBACK *notify)(cl_program, void *),
                                      void *data, cl_int *err);
/* The code object of a built program's first device, 0 when unknown (prov_opencl_codeobj.c). */
HPC_HIDDEN uint64_t hpc_program_code_object(cl_program p);
/* A built program's identity (provider.h kernel_program; prov_opencl_codeobj.c): 1 with id set, 0 unknown. */
HPC_HIDDEN int hpc_program_identity(cl_program p, char id[HPC_PROGRAM_ID]);
HPC_HIDDEN extern int hpc_cl_code; /* HUBPROF_CODE: HPC_CODE_* (env.h), set at init */

/* ---- kernel replay (prov_opencl_replay.c), HUBPROF_MODE=profile ------------------------------------------
 */
struct hpc_env;
struct hp_store;
/* Parse the plan, open the provider and one counter session per pass (at init: before the runtime starts
 * its worker threads). Returns 0, or -1 with a static reason in *why (profiling is then disabled). */
HPC_HIDDEN int hpc_replay_init(const struct hpc_env *e, const char **why);
/* The log was opened: write the profile's metadata and counter_info rows. */
HPC_HIDDEN void hpc_replay_log_opened(struct hp_store *s);
/* Run one dispatch once per pass (snapshot, restore, counters) and record it; returns what the app's own
 * enqueue would have returned. `task`: it was clEnqueueTask. */
HPC_HIDDEN cl_int hpc_replay_dispatch(const cl_icd_dispatch *n, cl_command_queue q, cl_kernel k, cl_uint dim,
                                      const size_t *offset, const size_t *global, const size_t *local,
                                      cl_uint nwait, const cl_event *wait, cl_event *ev, int task);
/* A kernel object was created (clone: `src` is the kernel it copies, its arguments come along). */
HPC_HIDDEN void hpc_replay_kernel_new(const cl_icd_dispatch *n, cl_kernel k, cl_kernel src);
HPC_HIDDEN void hpc_replay_fork_child(void);  /* a forked child: its counters are re-opened at need */
HPC_HIDDEN uint64_t hpc_replay_written(void); /* dispatch rows profile mode wrote in this process */
HPC_HIDDEN void hpc_replay_exit(int debug);   /* at exit: the summary line (HUBPROF_DEBUG) */

/* Devices (prov_opencl_device.c). 1: device d runs a ready command inside clEnqueue*, on the enqueuing
 * thread (PoCL's basic device). */
HPC_HIDDEN int hpc_runs_on_caller(const cl_icd_dispatch *n, cl_device_id d);
/* provider.h agent_describe: device `dev`'s agent row (rt: the table to ask through). */
HPC_HIDDEN void hpc_cl_agent_describe(void *h, const void *rt, uintptr_t dev, struct hp_agent *r,
                                      int *caller);

/* The core's registries and rings for OpenCL objects (the provider's questions asked through table n). Out
 * of line, with the arguments of old, so the enqueue wrappers that call them on their cold paths compile to
 * the same code as before the provider seam (no extra argument to keep in a register). */
HPC_HIDDEN uint32_t hpc_cl_kernel_slow(const cl_icd_dispatch *n, cl_kernel k);
HPC_HIDDEN uint64_t hpc_cl_queue_slow(const cl_icd_dispatch *n, cl_command_queue q);
HPC_HIDDEN hpc_thread *hpc_cl_thread_attach(const cl_icd_dispatch *n);
HPC_HIDDEN int hpc_select_dispatch(const cl_icd_dispatch *n,
                                   cl_kernel k); /* hpc_select_kernel, for kernel k */

/* ---- dispatch selection (select.h) for an OpenCL kernel ---- */
/* The dispatch fast path's test: one relaxed load when nothing is filtered. */
static inline int hpc_selected(const cl_icd_dispatch *n, cl_kernel k) {
  return HPC_LIKELY(!atomic_load_explicit(&hpc_select_on, memory_order_relaxed)) || hpc_select_dispatch(n, k);
}

/* ---- host API calls and memory copies (prov_opencl_api.c, hubprof --api) ---- */
/* Category of the API call regions ("api"). */
extern const char hpc_api_cat[] HPC_HIDDEN;
/* HUBPROF_API (at init, before the layer's table is made). */
HPC_HIDDEN void hpc_api_enable(int on);
/* With --api, put the wrappers into the layer's table `ours` (nent entries); `target` is the runtime. */
HPC_HIDDEN void hpc_api_install(cl_icd_dispatch *ours, const cl_icd_dispatch *target, size_t nent);
/* Exit handler: write every pending memory copy (device times where its command completed). */
HPC_HIDDEN void hpc_api_exit(struct hp_store *s);

#endif
