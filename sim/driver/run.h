/* run.h - the run driver: P ranks of one algorithm on one backend.
 *
 * The driver owns everything around the algorithm: the rank loop over
 * iterations, gradients (workload), error feedback, the accounting that
 * turns events into figures, and the writers.  Backends only start ranks and
 * move messages.
 */
#ifndef SPARSIM_RUN_H
#define SPARSIM_RUN_H

#include "plan.h"
#include "traces/report.h"

/* Runs the plan (a single algorithm).  Writes outputs under plan->out
 * unless out is empty.  Returns 0, 2 for bad input found on the way (a
 * gradient file, a platform), or 1 for a failed run, with one line in err. */
int sp_run(const sp_plan *plan, sp_report *rep, char *err, size_t errlen);

/* The same with an algorithm given directly (tests drive the shim this way). */
int sp_run_algorithm(const sp_plan *plan, const sp_algorithm *algo, sp_report *rep, char *err, size_t errlen);

/* The memory in bytes a run of the plan needs, by the estimate the run
 * itself checks before it starts (the payload mode `auto` resolves to),
 * and in *limit (may be NULL) what this process may still take (-1:
 * unknown).  Sweeps that run several at once keep their sum under it. */
double sp_run_memory_estimate(const sp_plan *plan, double *limit);

/* Creates a folder and its parents; -1 with a message. */
int sp_mkdirs(const char *path, char *err, size_t errlen);

#endif
