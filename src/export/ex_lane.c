/* The export's queue lanes: a command goes on the first lane of its queue where it overlaps no command placed
 * there before, whatever order the commands come in; each lane remembers its busy time in a bounded list. */
/* SPDX-License-Identifier: MIT */
#include "ex_internal.h"

#include <stdlib.h>
#include <string.h>

/* The first span of l that ends after t (spans are disjoint and sorted, so their ends are too). */
static int first_ending_after(const ex_lane *l, int64_t t) {
  int lo = 0, hi = l->n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (l->span[mid][1] > t)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* [start, end) overlaps none of l's spans; ordered: it also starts at or after the end of the last. */
static int fits(const ex_lane *l, int ordered, int64_t start, int64_t end) {
  if (!l->n) return 1;
  if (ordered) return l->span[l->n - 1][1] <= start;
  int i = first_ending_after(l, start);
  return i == l->n || l->span[i][0] >= end;
}

/* [start, end) into l: joined with the spans it overlaps or touches; past EX_LANE_SPANS, the two spans with
 * the smallest gap between them (the first such) become one, the gap counted busy from then on. */
static void add(ex_lane *l, int64_t start, int64_t end) {
  int i = first_ending_after(l, start - 1), j = i; /* i: the first that ends at or after start */
  while (j < l->n && l->span[j][0] <= end)
    j++; /* spans i..j-1 overlap or touch [start, end) */
  if (j > i) {
    if (l->span[i][0] < start) start = l->span[i][0];
    if (l->span[j - 1][1] > end) end = l->span[j - 1][1];
  }
  memmove(l->span[i + 1], l->span[j], (size_t)(l->n - j) * sizeof l->span[0]);
  l->span[i][0] = start, l->span[i][1] = end;
  l->n += 1 - (j - i);
  if (l->n <= EX_LANE_SPANS) return;
  int k = 0;
  for (int m = 1; m + 1 < l->n; m++)
    if (l->span[m + 1][0] - l->span[m][1] < l->span[k + 1][0] - l->span[k][1]) k = m;
  l->span[k][1] = l->span[k + 1][1];
  memmove(l->span[k + 1], l->span[k + 2], (size_t)(l->n - k - 2) * sizeof l->span[0]);
  l->n--;
}

int ex_lane_place(ex_queue *q, int ordered, int64_t start, int64_t end) {
  if (!q) return 0;
  int lane = 0;
  while (lane < q->lanes && !fits(q->lane[lane], ordered, start, end))
    lane++;
  if (lane == EX_MAX_LANES) {
    lane = EX_MAX_LANES - 1; /* all taken: the last lane, where its slices may overlap */
  } else if (lane == q->lanes) {
    if (!(q->lane[lane] = calloc(1, sizeof *q->lane[lane]))) return -1;
    q->lanes++;
  }
  add(q->lane[lane], start, end);
  return lane;
}

void ex_lanes_free(ex_queue *q) {
  for (int i = 0; i < q->lanes; i++)
    free(q->lane[i]);
  q->lanes = 0;
}
