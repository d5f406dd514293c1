/* accounting.h - the one place where events become figures.
 *
 * Whichever backend ran the ranks, its events (messages, phase spans,
 * per-rank figures) come here through one sink: live from the simulator, or
 * replayed after the run from real MPI processes.  The accounting turns them
 * into the report's per-phase, per-rank and per-iteration figures and passes
 * messages and spans on to the writers.  Memory: O(P x phases), never O(P^2)
 * nor O(messages).
 */
#ifndef SPARSIM_ACCOUNTING_H
#define SPARSIM_ACCOUNTING_H

#include "sim/shim/backend.h"

typedef struct sp_acct sp_acct;

/* Accounting into `rep` (its nranks, niters and arrays allocated), feeding
 * the writers (either may be NULL).  NULL if memory runs out. */
sp_acct *sp_acct_open(sp_report *rep, sp_csv_writer *csv, sp_chrome_writer *chrome);
/* The sink that leads here. */
sp_sink sp_acct_sink(sp_acct *a);
void sp_acct_close(sp_acct *a);

#endif
