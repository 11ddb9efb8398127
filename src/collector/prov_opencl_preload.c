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

HPC_EXPORT CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context c, cl_device_id d,
                                                                          cl_command_queue_properties p,
                                                                          cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateCommandQueue) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateCommandQueue(c, d, p, e) : hpc_CreateCommandQueue(n, c, d, p, e);
}

HPC_EXPORT CL_API_ENTRY cl_command_queue CL_API_CALL
clCreateCommandQueueWithProperties(cl_context c, cl_device_id d, const cl_queue_properties *p, cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateCommandQueueWithProperties) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateCommandQueueWithProperties(c, d, p, e)
                   : hpc_CreateCommandQueueWithProperties(n, c, d, p, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clReleaseCommandQueue) return CL_INVALID_OPERATION;
  return layered() ? n->clReleaseCommandQueue(q) : hpc_ReleaseCommandQueue(n, q);
}

HPC_EXPORT CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program p, const char *name, cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateKernel) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateKernel(p, name, e) : hpc_CreateKernel(n, p, name, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clCreateKernelsInProgram(cl_program p, cl_uint num, cl_kernel *k,
                                                                    cl_uint *num_ret) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateKernelsInProgram) return CL_INVALID_OPERATION;
  return layered() ? n->clCreateKernelsInProgram(p, num, k, num_ret)
                   : hpc_CreateKernelsInProgram(n, p, num, k, num_ret);
}

HPC_EXPORT CL_API_ENTRY cl_kernel CL_API_CALL clCloneKernel(cl_kernel k, cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCloneKernel) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCloneKernel(k, e) : hpc_CloneKernel(n, k, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                                  cl_uint dim, const size_t *off,
                                                                  const size_t *g, const size_t *l,
                                                                  cl_uint nw, const cl_event *w,
                                                                  cl_event *ev) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clEnqueueNDRangeKernel) return CL_INVALID_OPERATION;
  return layered() ? n->clEnqueueNDRangeKernel(q, k, dim, off, g, l, nw, w, ev)
                   : hpc_EnqueueNDRangeKernel(n, q, k, dim, off, g, l, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw,
                                                         const cl_event *w, cl_event *ev) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clEnqueueTask) return CL_INVALID_OPERATION;
  return layered() ? n->clEnqueueTask(q, k, nw, w, ev) : hpc_EnqueueTask(n, q, k, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue q) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clFinish) return CL_INVALID_OPERATION;
  return layered() ? n->clFinish(q) : hpc_Finish(n, q);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num, const cl_event *list) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clWaitForEvents) return CL_INVALID_OPERATION;
  return layered() ? n->clWaitForEvents(num, list) : hpc_WaitForEvents(n, num, list);
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
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateBuffer) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateBuffer(c, f, size, h, e) : hpc_CreateBuffer(n, c, f, size, h, e);
}

HPC_EXPORT CL_API_ENTRY cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context c,
                                                                        const cl_mem_properties *p,
                                                                        cl_mem_flags f, size_t size, void *h,
                                                                        cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateBufferWithProperties) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateBufferWithProperties(c, p, f, size, h, e)
                   : hpc_CreateBufferWithProperties(n, c, p, f, size, h, e);
}

HPC_EXPORT CL_API_ENTRY cl_mem CL_API_CALL clCreateSubBuffer(cl_mem m, cl_mem_flags f,
                                                             cl_buffer_create_type t, const void *info,
                                                             cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateSubBuffer) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateSubBuffer(m, f, t, info, e) : hpc_CreateSubBuffer(n, m, f, t, info, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem m) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clReleaseMemObject) return CL_INVALID_OPERATION;
  return layered() ? n->clReleaseMemObject(m) : hpc_ReleaseMemObject(n, m);
}

HPC_EXPORT CL_API_ENTRY void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
                                                             cl_map_flags f, size_t off, size_t size,
                                                             cl_uint nw, const cl_event *w, cl_event *ev,
                                                             cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clEnqueueMapBuffer) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clEnqueueMapBuffer(q, b, blk, f, off, size, nw, w, ev, e)
                   : hpc_EnqueueMapBuffer(n, q, b, blk, f, off, size, nw, w, ev, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blk,
                                                                size_t off, size_t size, const void *p,
                                                                cl_uint nw, const cl_event *w, cl_event *ev) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clEnqueueWriteBuffer) return CL_INVALID_OPERATION;
  return layered() ? n->clEnqueueWriteBuffer(q, b, blk, off, size, p, nw, w, ev)
                   : hpc_EnqueueWriteBuffer(n, q, b, blk, off, size, p, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                               size_t so, size_t dof, size_t size, cl_uint nw,
                                                               const cl_event *w, cl_event *ev) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clEnqueueCopyBuffer) return CL_INVALID_OPERATION;
  return layered() ? n->clEnqueueCopyBuffer(q, src, dst, so, dof, size, nw, w, ev)
                   : hpc_EnqueueCopyBuffer(n, q, src, dst, so, dof, size, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *pat,
                                                               size_t psize, size_t off, size_t size,
                                                               cl_uint nw, const cl_event *w, cl_event *ev) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clEnqueueFillBuffer) return CL_INVALID_OPERATION;
  return layered() ? n->clEnqueueFillBuffer(q, b, pat, psize, off, size, nw, w, ev)
                   : hpc_EnqueueFillBuffer(n, q, b, pat, psize, off, size, nw, w, ev);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel k, cl_uint i, size_t size,
                                                          const void *v) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clSetKernelArg) return CL_INVALID_OPERATION;
  return layered() ? n->clSetKernelArg(k, i, size, v) : hpc_SetKernelArg(n, k, i, size, v);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clSetKernelArgSVMPointer(cl_kernel k, cl_uint i, const void *p) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clSetKernelArgSVMPointer) return CL_INVALID_OPERATION;
  return layered() ? n->clSetKernelArgSVMPointer(k, i, p) : hpc_SetKernelArgSVMPointer(n, k, i, p);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clSetKernelExecInfo(cl_kernel k, cl_kernel_exec_info w,
                                                               size_t size, const void *v) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clSetKernelExecInfo) return CL_INVALID_OPERATION;
  return layered() ? n->clSetKernelExecInfo(k, w, size, v) : hpc_SetKernelExecInfo(n, k, w, size, v);
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

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel k) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clReleaseKernel) return CL_INVALID_OPERATION;
  return layered() ? n->clReleaseKernel(k) : hpc_ReleaseKernel(n, k);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clReleaseContext(cl_context c) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clReleaseContext) return CL_INVALID_OPERATION;
  return layered() ? n->clReleaseContext(c) : hpc_ReleaseContext(n, c);
}

/* programs: code objects (codeobj.c) */
HPC_EXPORT CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithSource(cl_context c, cl_uint k,
                                                                         const char **s, const size_t *l,
                                                                         cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateProgramWithSource) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateProgramWithSource(c, k, s, l, e)
                   : hpc_CreateProgramWithSource(n, c, k, s, l, e);
}

HPC_EXPORT CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBinary(cl_context c, cl_uint k,
                                                                         const cl_device_id *d,
                                                                         const size_t *l,
                                                                         const unsigned char **b, cl_int *st,
                                                                         cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCreateProgramWithBinary) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clCreateProgramWithBinary(c, k, d, l, b, st, e)
                   : hpc_CreateProgramWithBinary(n, c, k, d, l, b, st, e);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program p, cl_uint k, const cl_device_id *d,
                                                          const char *o,
                                                          void(CL_CALLBACK *f)(cl_program, void *), void *u) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clBuildProgram) return CL_INVALID_OPERATION;
  return layered() ? n->clBuildProgram(p, k, d, o, f, u) : hpc_BuildProgram(n, p, k, d, o, f, u);
}

HPC_EXPORT CL_API_ENTRY cl_int CL_API_CALL clCompileProgram(cl_program p, cl_uint k, const cl_device_id *d,
                                                            const char *o, cl_uint nh, const cl_program *h,
                                                            const char **hn,
                                                            void(CL_CALLBACK *f)(cl_program, void *),
                                                            void *u) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clCompileProgram) return CL_INVALID_OPERATION;
  return layered() ? n->clCompileProgram(p, k, d, o, nh, h, hn, f, u)
                   : hpc_CompileProgram(n, p, k, d, o, nh, h, hn, f, u);
}

HPC_EXPORT CL_API_ENTRY cl_program CL_API_CALL clLinkProgram(cl_context c, cl_uint k, const cl_device_id *d,
                                                             const char *o, cl_uint np, const cl_program *ps,
                                                             void(CL_CALLBACK *f)(cl_program, void *),
                                                             void *u, cl_int *e) {
  const cl_icd_dispatch *n = hpc_preload_next();
  if (!n->clLinkProgram) {
    if (e) *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return layered() ? n->clLinkProgram(c, k, d, o, np, ps, f, u, e)
                   : hpc_LinkProgram(n, c, k, d, o, np, ps, f, u, e);
}
