/* The status file of a run's log folder: hubprof makes it empty before the application starts (log_dir.c), a
 * collector that keeps no log appends one line there saying why (collector.c), and hubprof reads it back to
 * say what happened instead of "no activity" (docs/collector.md#failures). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_COLLECTOR_STATUS_H
#define HUBPROF_HU_COLLECTOR_STATUS_H

/* The file's name in the log folder: hidden, so `hubprof merge FOLDER` and the log listings pass it by. Each
 * line: the process id, a tab, the collector's message (the one it wrote on stderr), a newline. A process
 * that keeps its log but stopped adding to it (the disk filled) writes HU_COLLECTOR_STOPPED right after the
 * tab: hubprof stores such lines in the store's metadata (collector_stopped.PID) instead of counting the
 * process as one without a log. */
#define HU_COLLECTOR_STATUS ".collector-status"
#define HU_COLLECTOR_STOPPED "stopped: "
/* Room hubprof reserves for it (FALLOC_FL_KEEP_SIZE), so the lines fit on a disk that has filled up since. */
#define HU_COLLECTOR_STATUS_ROOM 65536

#endif
