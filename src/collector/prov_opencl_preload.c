/* The LD_PRELOAD fallback: exports the intercepted OpenCL entry points and forwards to the next definition
 * (dlsym(RTLD_NEXT), looked up at the first call). When the ICD layer is active in the same process these
 * wrappers forward without recording, so nothing is counted twice. Never links or loads libOpenCL itself. */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"

#include <dlfcn.h>
#include <pthread.h>

static cl_icd_dispatch g_next;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const cl_icd_dispatch *_Atomic g_ready;

static void fill(void) {
#define SYM(f) g_next.f = (__typeof__(g_next.f))dlsym(RTLD_NEXT, #f)
  SYM(clCreateCommandQueue);
  SYM(clCreateCommandQueueWithProperties);
  SYM(clReleaseCommandQueue);
  SYM(clCreateKernel);
  SYM(clCreateProgramWithSource);
  SYM(clCreateProgramWithBinary);
  SYM(clBuildProgram);
  SYM(clCompileProgram);
  SYM(clLinkProgram);
  SYM(clGetProgramInfo);
  SYM(clCreateKernelsInProgram);
  SYM(clCloneKernel);
  SYM(clEnqueueNDRangeKernel);
  SYM(clEnqueueTask);
  SYM(clFinish);
  SYM(clWaitForEvents);
  SYM(clGetEventInfo);
  SYM(clGetEventProfilingInfo);
  SYM(clRetainEvent);
  SYM(clReleaseEvent);
  SYM(clGetKernelInfo);
  SYM(clGetCommandQueueInfo);
  SYM(clGetDeviceInfo);
  SYM(clGetPlatformInfo);
  SYM(clGetDeviceIDs);
  SYM(clGetPlatformIDs);
  /* kernel replay */
  SYM(clCreateBuffer);
  SYM(clCreateBufferWithProperties);
  SYM(clCreateSubBuffer);
  SYM(clReleaseMemObject);
  SYM(clSetKernelArg);
  SYM(clSetKernelArgSVMPointer);
  SYM(clSetKernelExecInfo);
  SYM(clSVMAlloc);
  SYM(clSVMFree);
  SYM(clReleaseKernel);
  SYM(clReleaseContext);
  SYM(clGetKernelArgInfo);
  SYM(clGetMemObjectInfo);
  SYM(clEnqueueReadBuffer);
  SYM(clEnqueueWriteBuffer);
  SYM(clEnqueueCopyBuffer);
  SYM(clEnqueueFillBuffer);
  SYM(clEnqueueMapBuffer);
  SYM(clEnqueueUnmapMemObject);
  SYM(clEnqueueSVMMemcpy);
  SYM(clEnqueueSVMMap);
  SYM(clEnqueueSVMUnmap);
#undef SYM
  atomic_store(&g_ready, &g_next);
}

const cl_icd_dispatch *hpc_preload_next(void) {
  const cl_icd_dispatch *n = atomic_load_explicit(&g_ready, memory_order_acquire);
  if (HPC_LIKELY(n)) return n;
  pthread_once(&g_once, fill);
  return &g_next;
}

/* The loader already passes every call through the layer: forward untouched. */
static inline int layered(void) { return atomic_load_explicit(&hpc_layer_active, memory_order_relaxed); }

/* The forwarding rule of the wrappers below, in one place: the next definition (when the runtime lacks it:
 * `none`), called untouched when the ICD layer already records (layered), else through hubprof's own
 * hpc_NAME with the table. A macro, not a function: the enqueue path makes no extra call. */
#define FORWARD_OR(NAME, none, ...)                                                                          \
  const cl_icd_dispatch *n = hpc_preload_next();                                                             \
  if (!n->cl##NAME) {                                                                                        \
    none;                                                                                                    \
  }                                                                                                          \
  return layered() ? n->cl##NAME(__VA_ARGS__) : hpc_##NAME(n, __VA_ARGS__)
/* An entry point that returns a status: CL_INVALID_OPERATION when the runtime lacks it. */
#define FORWARD(NAME, ...) FORWARD_OR(NAME, return CL_INVALID_OPERATION, __VA_ARGS__)
/* An entry point that returns an object and its status through its parameter e: NULL and
 * CL_INVALID_OPERATION when the runtime lacks it. */
#define FORWARD_E(NAME, ...) FORWARD_OR(NAME, if (e) *e = CL_INVALID_OPERATION; return NULL, __VA_ARGS__)

HPC_EXPORT CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context c, cl_device_id d,
                                                                          cl_command_queue_properties p,
                                                                          cl_int *e) {
  FORWARD_E(CreateCommandQueue, c, d, p, e);
}

HPC_EXPORT CL_API_ENTRY cl_command_queue CL_API_CALL
clCreateCommandQueueWithProperties(cl_context c, cl_device_id d, const cl_queue_properties *p, cl_int *e) {
  FORWARD_E(CreateCommandQueueWithProperties, c, d, p, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q) {
  FORWARD(ReleaseCommandQueue, q);
}

HPC_EXPORT CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program p, const char *name, cl_int *e) {
  FORWARD_E(CreateKernel, p, name, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clCreateKernelsInProgram(cl_program p, cl_uint num, cl_kernel *k,
                                                                    cl_uint *num_ret) {
  FORWARD(CreateKernelsInProgram, p, num, k, num_ret);
}

HPC_EXPORT CL_API_ENTRY cl_kernel CL_API_CALL clCloneKernel(cl_kernel k, cl_int *e) {
  FORWARD_E(CloneKernel, k, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                                  cl_uint dim, const size_t *off,
                                                                  const size_t *g, const size_t *l,
                                                                  cl_uint nw, const cl_event *w,
                                                                  cl_event *ev) {
  FORWARD(EnqueueNDRangeKernel, q, k, dim, off, g, l, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw,
                                                         const cl_event *w, cl_event *ev) {
  FORWARD(EnqueueTask, q, k, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue q) { FORWARD(Finish, q); }

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num, const cl_event *list) {
  FORWARD(WaitForEvents, num, list);
}

/* ---- profile mode: the collector decides at the application's first OpenCL call, so that the counters
 * are open before the runtime starts its worker threads (PoCL starts them in clGetDeviceIDs) ---- */
HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint num, cl_platform_id *p,
                                                            cl_uint *num_ret) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clGetPlatformIDs) return CL_INVALID_OPERATION;
  if (!layered() && !atomic_load_explicit(&hpc_enabled, memory_order_relaxed)) hpc_init_slow();
  return n->clGetPlatformIDs(num, p, num_ret);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint num,
                                                          cl_device_id *d, cl_uint *num_ret) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clGetDeviceIDs) return CL_INVALID_OPERATION;
  if (!layered() && !atomic_load_explicit(&hpc_enabled, memory_order_relaxed)) hpc_init_slow();
  return n->clGetDeviceIDs(p, t, num, d, num_ret);
}

HPC_EXPORT CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags f, size_t size, void *h,
                                                          cl_int *e) {
  FORWARD_E(CreateBuffer, c, f, size, h, e);
}

HPC_EXPORT CL_API_ENTRY cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context c,
                                                                        const cl_mem_properties *p,
                                                                        cl_mem_flags f, size_t size, void *h,
                                                                        cl_int *e) {
  FORWARD_E(CreateBufferWithProperties, c, p, f, size, h, e);
}

HPC_EXPORT CL_API_ENTRY cl_mem CL_API_CALL clCreateSubBuffer(cl_mem m, cl_mem_flags f,
                                                             cl_buffer_create_type t, const void *info,
                                                             cl_int *e) {
  FORWARD_E(CreateSubBuffer, m, f, t, info, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem m) { FORWARD(ReleaseMemObject, m); }

HPC_EXPORT CL_API_ENTRY void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
                                                             cl_map_flags f, size_t off, size_t size,
                                                             cl_uint nw, const cl_event *w, cl_event *ev,
                                                             cl_int *e) {
  FORWARD_E(EnqueueMapBuffer, q, b, blk, f, off, size, nw, w, ev, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
                                                                size_t off, size_t size, const void *p,
                                                                cl_uint nw, const cl_event *w, cl_event *ev) {
  FORWARD(EnqueueWriteBuffer, q, b, blk, off, size, p, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                               size_t so, size_t dof, size_t size, cl_uint nw,
                                                               const cl_event *w, cl_event *ev) {
  FORWARD(EnqueueCopyBuffer, q, src, dst, so, dof, size, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *pat,
                                                               size_t psize, size_t off, size_t size,
                                                               cl_uint nw, const cl_event *w, cl_event *ev) {
  FORWARD(EnqueueFillBuffer, q, b, pat, psize, off, size, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel k, cl_uint i, size_t size,
                                                          const void *v) {
  FORWARD(SetKernelArg, k, i, size, v);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clSetKernelArgSVMPointer(cl_kernel k, cl_uint i, const void *p) {
  FORWARD(SetKernelArgSVMPointer, k, i, p);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clSetKernelExecInfo(cl_kernel k, cl_kernel_exec_info w,
                                                               size_t size, const void *v) {
  FORWARD(SetKernelExecInfo, k, w, size, v);
}

HPC_EXPORT CL_API_ENTRY void *CL_API_CALL clSVMAlloc(cl_context c, cl_svm_mem_flags f, size_t size,
                                                     cl_uint a) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clSVMAlloc) return NULL;
  return layered() ? n->clSVMAlloc(c, f, size, a) : hpc_SVMAlloc(n, c, f, size, a);
}

HPC_EXPORT CL_API_ENTRY void CL_API_CALL clSVMFree(cl_context c, void *p) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clSVMFree) return;
  if (layered())
    n->clSVMFree(c, p);
  else
    hpc_SVMFree(n, c, p);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel k) { FORWARD(ReleaseKernel, k); }

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseContext(cl_context c) { FORWARD(ReleaseContext, c); }

/* programs: code objects (codeobj.c) */
HPC_EXPORT CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithSource(cl_context c, cl_uint k,
                                                                         const char **s, const size_t *l,
                                                                         cl_int *e) {
  FORWARD_E(CreateProgramWithSource, c, k, s, l, e);
}

HPC_EXPORT CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBinary(cl_context c, cl_uint k,
                                                                         const cl_device_id *d,
                                                                         const size_t *l,
                                                                         const unsigned char **b, cl_int *st,
                                                                         cl_int *e) {
  FORWARD_E(CreateProgramWithBinary, c, k, d, l, b, st, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program p, cl_uint k, const cl_device_id *d,
                                                          const char *o,
                                                          void(CL_CALLBACK *f)(cl_program, void *), void *u) {
  FORWARD(BuildProgram, p, k, d, o, f, u);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clCompileProgram(cl_program p, cl_uint k, const cl_device_id *d,
                                                            const char *o, cl_uint nh, const cl_program *h,
                                                            const char **hn,
                                                            void(CL_CALLBACK *f)(cl_program, void *),
                                                            void *u) {
  FORWARD(CompileProgram, p, k, d, o, nh, h, hn, f, u);
}

HPC_EXPORT CL_API_ENTRY cl_program CL_API_CALL clLinkProgram(cl_context c, cl_uint k, const cl_device_id *d,
                                                             const char *o, cl_uint np, const cl_program *ps,
                                                             void(CL_CALLBACK *f)(cl_program, void *),
                                                             void *u, cl_int *e) {
  FORWARD_E(LinkProgram, c, k, d, o, np, ps, f, u, e);
}
