/* rocpd format: a profile as ONE SQLite file in ROCm's rocpd 3.x layout (uuid-suffixed tables, base-name
 * views, data and summary views), readable by ROCm's tools and any SQLite client. This file is the format's
 * entry in the hub; the parts: rocpd_schema.c (schema text), rocpd_write.c (writer), rocpd_sql.c (the
 * writer's statements), rocpd_pages.c (page writer), rocpd_read.c (reader), rocpd_util.c (helpers);
 * rocpd_internal.h holds what they share. Mapping and invariants: docs/formats/rocpd.md. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

const hp_format_ops hp_fmt_rocpd = {
    HP_FORMAT(rp, "rocpd", 0),
    .cursor_columns = rp_cursor_columns,
    .cursor_part = rp_cursor_part,
    .row_span = rp_id_span,
};
