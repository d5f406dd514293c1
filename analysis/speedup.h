/* speedup.h - a run's speedup over the fastest dense allreduce, defined once
 * for `sparsim run`, `sparsim sweep` and `sparsim analyze`.
 *
 * The definition: the speedup of a run over dense is D / T, where T is the
 * run's whole training iteration (compute + allreduce, in seconds: the
 * iteration_s of summary.json's training object) and D the shortest such
 * iteration among the dense runs (those whose algorithm's registry class is
 * SP_ALGO_DENSE) of the same setting (the same P, n, k, platform and
 * disturbance level) among the runs compared.  A dense run counts itself, so
 * the fastest dense run has 1.  No speedup (0) when T or D is not positive:
 * the runs had no training iterations, or no dense run of that setting ran.
 *
 * Which runs are compared is the one thing the commands choose: the
 * algorithms of one `sparsim run --algo LIST`; for a sweep, the rows of its
 * CSV written before the row and the row itself (rows are written as runs
 * finish, and never rewritten); for analyze, every run of the CSV or folder. */
#ifndef SPARSIM_SPEEDUP_H
#define SPARSIM_SPEEDUP_H

#include <stddef.h>

typedef struct {
    const char *algo;     /* as the registry names it */
    int ranks;            /* the setting: P, n, k, platform, disturbance level */
    double n, k;
    const char *platform;
    const char *level;    /* "NAME=LEVEL" of a disturbance axis, "" for none */
    double iter;          /* the training iteration (s); 0 or less: none */
} sp_speedup_run;

/* The level of a run as the setting compares it: "NAME=LEVEL" for the
 * disturbance option NAME swept at LEVEL (a sweep's disturbance and level
 * columns), "" when `name` is empty.  Into out (n bytes). */
void sp_speedup_level(const char *name, const char *level, char *out, size_t n);

/* Whether `algo` is a dense allreduce (its registry class). */
int sp_speedup_is_dense(const char *algo);

/* Whether two runs are of the same setting. */
int sp_speedup_same_setting(const sp_speedup_run *a, const sp_speedup_run *b);

/* D / T for `run` over the runs runs[0 .. count) (which may hold `run`
 * itself), or 0.  *dense (when not NULL): the index of the dense run that
 * gave D (the first of equal ones), or -1. */
double sp_speedup_vs_dense(const sp_speedup_run *runs, int count, const sp_speedup_run *run, int *dense);

#endif
