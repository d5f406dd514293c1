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
#include "resolve.h"
#include "traces/report.h"

/* Runs the plan (its --algo names one algorithm): resolves it (resolve.h)
 * and runs it.  Writes outputs under plan->out unless out is empty.
 * Returns 0, or the status of e (2 for bad input found on the way: a
 * gradient file, a platform, a plan this machine cannot hold; 1 for a failed
 * run) with its one line. */
int sp_run(const sp_plan *plan, sp_report *rep, sp_error *e);

/* The same with an algorithm given directly (tests drive the shim this way). */
int sp_run_algorithm(const sp_plan *plan, const sp_algorithm *algo, sp_report *rep, sp_error *e);

/* Runs a plan resolved with SP_RESOLVE_RUN; the same returns. */
int sp_run_resolved(const sp_resolved *res, sp_report *rep, sp_error *e);

/* The memory in bytes a run of the plan needs, by the estimate the run
 * itself checks before it starts (sp_resolve_memory_estimate), and in
 * *limit (may be NULL) what this process may still take (-1: unknown).
 * Sweeps that run several at once keep their sum under it. */
double sp_run_memory_estimate(const sp_plan *plan, double *limit);

/* Once, at a command's start: memory a run frees stays in the process for
 * its next use instead of going back to the system until the process ends
 * (bench/README.md, section 29). */
void sp_run_keep_freed_memory(void);

/* Creates a folder and its parents; -1 with a message. */
int sp_mkdirs(const char *path, char *err, size_t errlen);

#endif
