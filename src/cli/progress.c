/* The CLI's live progress line (progress.h): drawn on stderr when it is a terminal, at most ten times a
 * second, with the rate and the time left when the total is known; cleared at the end. */
/* SPDX-License-Identifier: MIT */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_NS 100000000LL /* 10 redraws a second at most */

struct cli_progress {
  char what[96], unit[32];
  uint64_t total, done;
  int64_t start_ns, stage_ns, last_draw_ns, delay_ns;
  int drawn;
  int pin;  /* the line keeps the terminal's last row (cli_progress_pin) */
  int rows; /* pinned: the terminal's rows when the scrolling region above the line was set; 0 = not set */
};

/* The terminal's rows, 0 when unknown. */
static int term_rows(void) {
  struct winsize ws;
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_row : 0;
}

/* Escape sequences in one write(2): the terminal takes a write whole, so the application's own output,
 * written at any moment, never lands between a cursor save and its restore. */
static void put(const char *seq, size_t n) {
  fflush(stderr);
  while (n) {
    ssize_t w = write(STDERR_FILENO, seq, n);
    if (w <= 0) return;
    seq += w;
    n -= (size_t)w;
  }
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

cli_progress *cli_progress_start(const char *what, const char *unit, uint64_t total, int quiet) {
  if (quiet || !isatty(STDERR_FILENO)) return NULL;
  const char *term = getenv("TERM");
  if (term && strcmp(term, "dumb") == 0) return NULL;
  cli_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  snprintf(p->what, sizeof p->what, "%s", what);
  snprintf(p->unit, sizeof p->unit, "%s", unit);
  p->total = total;
  p->start_ns = p->stage_ns = now_ns();
  p->delay_ns = 500000000LL;
  const char *d = getenv("HUBPROF_PROGRESS_DELAY_MS");
  if (d && *d) {
    char *end;
    long ms = strtol(d, &end, 10);
    if (!*end && ms >= 0) p->delay_ns = (int64_t)ms * 1000000LL;
  }
  return p;
}

/* 1234567 -> "1.23 M" style for rates; counts are printed in full. */
static void human(char *buf, size_t len, double v) {
  if (v >= 1e9)
    snprintf(buf, len, "%.2fG ", v / 1e9);
  else if (v >= 1e6)
    snprintf(buf, len, "%.2fM ", v / 1e6);
  else if (v >= 1e3)
    snprintf(buf, len, "%.1fk ", v / 1e3);
  else
    snprintf(buf, len, "%.0f ", v);
}

static void draw(cli_progress *p, int64_t t) {
  char line[512], rate[80] = "", left[48] = "";
  double secs = (double)(t - p->stage_ns) / 1e9;
  double r = secs > 0 ? (double)p->done / secs : 0;
  if (r > 0) {
    char h[24];
    human(h, sizeof h, r);
    snprintf(rate, sizeof rate, ", %s%s/s", h, p->unit);
  }
  int n;
  if (p->total) {
    double pct = p->done >= p->total ? 100.0 : 100.0 * (double)p->done / (double)p->total;
    if (r > 0 && p->done < p->total) {
      double rem = (double)(p->total - p->done) / r;
      if (rem >= 3600)
        snprintf(left, sizeof left, ", %dh%02dm left", (int)(rem / 3600), (int)(rem / 60) % 60);
      else if (rem >= 60)
        snprintf(left, sizeof left, ", %dm%02ds left", (int)(rem / 60), (int)rem % 60);
      else
        snprintf(left, sizeof left, ", %ds left", (int)rem + 1);
    }
    n = snprintf(line, sizeof line, "hubprof: %s: %llu/%llu %s (%.0f%%)%s%s", p->what,
                 (unsigned long long)p->done, (unsigned long long)p->total, p->unit, pct, rate, left);
  } else {
    n = snprintf(line, sizeof line, "hubprof: %s: %llu %s%s", p->what, (unsigned long long)p->done, p->unit,
                 rate);
  }
  /* never wider than the terminal: a wrapped line could not be redrawn in place */
  struct winsize ws;
  size_t width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
  if (n > 0 && (size_t)n > width) line[width] = 0;
  int rows = p->pin ? term_rows() : 0;
  if (rows >= 3) {
    /* the application writes on this terminal too: the line lives on the last row, below a scrolling region
     * of the rows above (as apt draws its progress), so what the application writes scrolls above it and
     * never runs onto it. First draw, or the terminal resized: make room below the cursor (index down, then
     * up: the column kept), then set the region, the cursor restored where it was. */
    char seq[700];
    int k = 0;
    if (rows != p->rows) k = snprintf(seq, sizeof seq, "\033D\033M\0337\033[1;%dr\0338", rows - 1);
    k += snprintf(seq + k, sizeof seq - (size_t)k, "\0337\033[%d;1H%s\033[K\0338", rows, line);
    put(seq, (size_t)k < sizeof seq ? (size_t)k : sizeof seq - 1);
    p->rows = rows;
  } else {
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
  }
  p->drawn = 1;
  p->last_draw_ns = t;
}

void cli_progress_update(cli_progress *p, uint64_t done) {
  if (!p) return;
  p->done = done;
  int64_t t = now_ns();
  if (t - p->start_ns < p->delay_ns || (p->drawn && t - p->last_draw_ns < REDRAW_NS)) return;
  draw(p, t);
}

void cli_progress_stage(cli_progress *p, const char *what, uint64_t total) {
  if (!p) return;
  if (what) snprintf(p->what, sizeof p->what, "%s", what);
  p->total = total;
  p->stage_ns = now_ns();
  p->done = 0;
}

void cli_progress_pin(cli_progress *p) {
  if (p) p->pin = 1;
}

void cli_progress_end(cli_progress *p) {
  if (!p) return;
  if (p->rows) { /* pinned: the whole screen scrolls again; the line's row (then and now) cleared */
    char seq[96];
    int rows = term_rows(), k = snprintf(seq, sizeof seq, "\0337\033[r\033[%d;1H\033[K", p->rows);
    if (rows > 0 && rows != p->rows) k += snprintf(seq + k, sizeof seq - (size_t)k, "\033[%d;1H\033[K", rows);
    k += snprintf(seq + k, sizeof seq - (size_t)k, "\0338");
    put(seq, (size_t)k);
  } else if (p->drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  free(p);
}

void cli_progress_ref_cb(void *ctx, uint64_t done, uint64_t total) {
  cli_progress_cb(ctx ? *(cli_progress **)ctx : NULL, done, total);
}

void cli_progress_cb(void *ctx, uint64_t done, uint64_t total) {
  cli_progress *p = ctx;
  if (p && total != p->total) p->total = total;
  cli_progress_update(p, done);
}
