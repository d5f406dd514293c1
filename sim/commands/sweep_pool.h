/* sweep_pool.h - up to N runs of a sweep at once, each in its own process.
 *
 * A run goes to a worker process forked from the sweep, which runs it in a
 * child of its own as every command does (sp_cli_run_in_child_rss) and
 * sends back its status and peak memory; the sweep reads the run's summary
 * and writes its row, so rows are appended in the order runs finish.  Runs
 * start in the order they were added, as long as fewer than N are in flight
 * and their memory estimates together stay under the budget; a run that
 * does not fit waits until the runs before it end, and one that does not
 * fit even alone runs alone (and is refused by its own check, with its line).
 */
#ifndef SPARSIM_SWEEP_POOL_H
#define SPARSIM_SWEEP_POOL_H

#include "sim/driver/plan.h"

#include <stddef.h>

typedef struct sp_pool sp_pool;

/* A pool of `jobs` workers within `budget` bytes (<= 0: no limit).  While it
 * is open, the signals that end a command (INT, TERM, HUP, QUIT) are passed
 * on to the workers; when one came, sp_pool_next waits for them, calls
 * interrupted() for each run in flight and ends the process by that signal.
 * NULL when memory runs out. */
sp_pool *sp_pool_open(int jobs, double budget, void (*interrupted)(const sp_plan *run, void *arg), void *arg);

/* Queues run p (its out folder set; the pool keeps the pointer) needing
 * `mem` bytes, known to the caller as `tag`.  0, or -1 when memory runs out. */
int sp_pool_add(sp_pool *pl, sp_plan *p, double mem, int tag);

/* Starts what may start and waits for the next run to end: 1 with its tag,
 * its status (0 done, 2 bad input, 1 failed), peak resident bytes (-1:
 * unknown) and wall seconds; 0 when every run has ended; -1 with a message
 * when a worker cannot be started.  tick(arg) is called about twice a second
 * while it waits (may be NULL). */
int sp_pool_next(sp_pool *pl, int *tag, int *status, double *rss, double *wall, void (*tick)(void *), void *arg,
                 char *err, size_t errlen);

/* The runs in flight as "algo P=ranks, ..." (at most n bytes); their count. */
int sp_pool_running(const sp_pool *pl, char *buf, size_t n);

/* Stops the runs still in flight (their outputs removed, as for a signal),
 * waits for them and frees the pool. */
void sp_pool_close(sp_pool *pl);

/* The number of cores this process may run on. */
int sp_pool_cores(void);

#endif
