/* The code plugin's one export (code_plugin.h): the table of the readers libhubprof loads with dlopen. */
/* SPDX-License-Identifier: MIT */
#include "code_lines.h"
#include "code_plugin.h"

static const cp_api api = {CP_VERSION, sizeof(cr_code), cr_read, cl_lines_from_ir};

__attribute__((visibility("default"))) const cp_api *hubprof_code_api(void);
const cp_api *hubprof_code_api(void) { return &api; }
