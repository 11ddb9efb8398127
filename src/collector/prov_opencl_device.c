/* The OpenCL provider's answers about devices (provider.h agent_describe): the agent row of a device, and
 * whether a device runs commands on the enqueuing thread (also asked by kernel replay). */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"
#include "hubprof/hub.h"

#include <stdlib.h>
#include <string.h>

static char *dev_str(const cl_icd_dispatch *n, cl_device_id d, cl_device_info what) {
  size_t len = 0;
  if (n->clGetDeviceInfo(d, what, 0, NULL, &len) != CL_SUCCESS || len == 0) return strdup("");
  char *s = calloc(1, len + 1);
  if (s && n->clGetDeviceInfo(d, what, len, s, NULL) != CL_SUCCESS) s[0] = 0;
  return s ? s : strdup("");
}

static int64_t dev_num(const cl_icd_dispatch *n, cl_device_id d, cl_device_info what, size_t size) {
  uint64_t v = 0;
  if (n->clGetDeviceInfo(d, what, size, &v, NULL) != CL_SUCCESS) return 0;
  if (size == sizeof(cl_uint)) return (int64_t)(uint32_t)v;
  return (int64_t)v;
}

/* The agent row of a device: type, vendor, names, the platform's version as runtime, the index among the
 * platform's devices, compute units, clock, memory sizes. */
void hpc_cl_agent_describe(void *h, const void *rt, uintptr_t dev, hp_agent *r, int *caller) {
  const cl_icd_dispatch *n = rt;
  cl_device_id d = (cl_device_id)dev;
  *caller = hpc_runs_on_caller(n, d);
  cl_device_type t = 0;
  n->clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  r->type = t & CL_DEVICE_TYPE_GPU           ? HP_AGENT_GPU
            : t & CL_DEVICE_TYPE_CPU         ? HP_AGENT_CPU
            : t & CL_DEVICE_TYPE_ACCELERATOR ? HP_AGENT_ACCEL
                                             : HP_AGENT_UNKNOWN;
  r->vendor = dev_str(n, d, CL_DEVICE_VENDOR);
  r->name = dev_str(n, d, CL_DEVICE_NAME);
  r->product_name = dev_str(n, d, CL_DEVICE_NAME);
  /* runtime: the platform's version ("OpenCL 3.0 PoCL 3.1 ..."), else the device's */
  cl_platform_id plat = NULL;
  char *rts = NULL;
  size_t len = 0;
  if (n->clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL) == CL_SUCCESS && plat &&
      n->clGetPlatformInfo(plat, CL_PLATFORM_VERSION, 0, NULL, &len) == CL_SUCCESS && len &&
      (rts = calloc(1, len + 1)) != NULL &&
      n->clGetPlatformInfo(plat, CL_PLATFORM_VERSION, len, rts, NULL) != CL_SUCCESS)
    rts[0] = 0;
  r->runtime = rts ? rts : dev_str(n, d, CL_DEVICE_VERSION);
  /* index among the platform's devices */
  cl_device_id devs[64];
  cl_uint nd = 0;
  r->device_index = 0;
  if (plat && n->clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 64, devs, &nd) == CL_SUCCESS)
    for (cl_uint i = 0; i < nd && i < 64; i++)
      if (devs[i] == d) r->device_index = (int32_t)i;
  r->compute_units = dev_num(n, d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint));
  r->max_clock_mhz = dev_num(n, d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(cl_uint));
  r->global_mem_bytes = dev_num(n, d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong));
  r->local_mem_bytes = dev_num(n, d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong));
}

/* PoCL's basic device ("basic-<cpu>") executes a command that is ready when it is enqueued inside
 * clEnqueue*, on the calling thread, under its device lock (no worker thread of its own). */
int hpc_runs_on_caller(const cl_icd_dispatch *n, cl_device_id dev) {
  char name[64] = "", plat[64] = "";
  cl_platform_id pl = NULL;
  return n->clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof pl, &pl, NULL) == CL_SUCCESS && pl &&
         n->clGetPlatformInfo(pl, CL_PLATFORM_NAME, sizeof plat, plat, NULL) == CL_SUCCESS &&
         strcmp(plat, "Portable Computing Language") == 0 &&
         n->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL) == CL_SUCCESS &&
         strncmp(name, "basic-", 6) == 0;
}
