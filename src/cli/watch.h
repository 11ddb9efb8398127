/* The live progress line while an application runs under the collector (trace, kernel replay, multiplexing,
 * each pass of application replay): dispatches its logs hold so far, read by the CLI, never by the
 * application. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_WATCH_H
#define HUBPROF_CLI_WATCH_H

#include <sys/types.h>

typedef struct cli_watch cli_watch;

/* Watch the logs (hubprof-*.log) of the run folder dir under the label `what` ("tracing", "pass 2/3").
 * NULL (and nothing drawn) when quiet, off a terminal or out of memory, as cli_progress_start. */
cli_watch *cli_watch_start(const char *dir, const char *what, int quiet);
/* waitpid(-1, status, 0) for any child; with a watch, polls the children and counts the logs' dispatches
 * meanwhile (each count reopens the logs: the next one waits at least 10 times as long as it took, 250 ms
 * at least, so watching costs the CLI a tenth of a core at most). Returns what waitpid returns. */
pid_t cli_watch_wait(cli_watch *w, int *status);
/* Clear the line and free. */
void cli_watch_end(cli_watch *w);

#endif
