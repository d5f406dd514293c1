/* wall_profile.h - where a run's time goes: a sampling profile of the process.
 *
 * While the ranks run, a profiling timer (setitimer ITIMER_PROF, asked for every 1 ms
 * of the process's CPU time, user and system; the kernel delivers it at its tick,
 * about 250 times a second here) interrupts the process and the
 * handler notes the interrupted instruction's address.  Afterwards each
 * address is put in one class by the object it lies in and, inside
 * SimGrid's library, by the nearest exported symbol before it:
 *
 *   network model  SimGrid's max-min solver and resource models (its lmm
 *                  and resource namespaces: link and CPU models, their
 *                  actions, the sharing's re-solve at each flow's start and
 *                  end); with --engine flow, its fluid sharing (fluid.c)
 *   engine         the rest of SimGrid: actors and their context switches,
 *                  simcalls, activities, mailboxes, the main loop; with
 *                  --engine flow, its event loop and coroutines
 *   sparsim        sparsim's own code (the executable: algorithms, shim,
 *                  backends, accounting, writers)
 *   libraries      everything else: the C and C++ runtimes (malloc, memcpy),
 *                  the math and JSON libraries, and system calls
 *
 * The classes are approximations in two ways, both stated in docs/running.md:
 * a sample in malloc or memcpy counts as "libraries" whoever called it, and a
 * sample in one of SimGrid's internal (unexported) functions counts for the
 * exported function laid out before it, which is in the same source file as a
 * rule.  The SimGrid backend only: an MPI rank's time goes to its MPI
 * library's polling, and a profiling signal would interrupt Open MPI's own
 * system calls.
 */
#ifndef SPARSIM_WALL_PROFILE_H
#define SPARSIM_WALL_PROFILE_H

#include "traces/report.h" /* sp_wall_profile */

/* starts the timer; 0, or -1 (the profile is then left out, never the run) */
int sp_wall_profile_start(void);
/* stops it and classifies what it saw */
void sp_wall_profile_stop(sp_wall_profile *out);

#endif
