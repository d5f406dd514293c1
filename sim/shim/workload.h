/* workload.h - what an algorithm asks of its rank's data under a model
 * workload: the second interface algorithms see, beside shim.h.
 *
 * With a model workload (--payload model) no rank holds a vector of length n:
 * io->acc is NULL and what an algorithm needs to know of its data comes from
 * a statistical model of the gradients (sim/workload/model.c): how many of
 * the rank's accumulated entries (gradient plus residual) pass a threshold,
 * where they lie in the index space, how many distinct indices the ranks'
 * selections cover in a range, how many reduced entries pass a global
 * threshold, and how error feedback changes all of these.  Magnitudes are
 * thresholds on |x|; counts are drawn per (seed, rank, iteration), so runs
 * are reproducible.  Algorithms reach these through algorithms/sparse_set.h,
 * which answers the same questions from real vectors in exact mode.
 *
 * It is a header of its own because only the sparse sets (and the region
 * rotation built on them) ask these questions; message passing does not
 * depend on them.  The shim forwards each call to the run's model
 * (workload.c, through the table in backend.h).
 */
#ifndef SPARSIM_WORKLOAD_H
#define SPARSIM_WORKLOAD_H

#include "shim.h"

#include <stdint.h>

typedef struct sp_model_set sp_model_set; /* where a selection's entries lie */

/* 1 when this run's data is a model */
int sp_model_on(const sp_ctx *c);
/* entries of this rank with |x| > thr (a draw: the same for the same thr) */
uint64_t sp_model_count_above(sp_ctx *c, double thr);
/* the k-th largest |x| of this rank (the model's expectation) */
double sp_model_kth(sp_ctx *c, uint64_t k);
/* the standard deviation of this rank's entries (their mean is 0) */
double sp_model_std(sp_ctx *c);
/* where `count` entries with |x| > thr lie; NULL if memory runs out */
sp_model_set *sp_model_select(sp_ctx *c, double thr, uint64_t count);
void sp_model_set_free(sp_model_set *s);
/* the index of the entry at position pos (0-based, index order) of a selection */
int64_t sp_model_index_at(sp_ctx *c, const sp_model_set *s, uint64_t pos);
/* a selection's entries in the nreg ranges [bounds[j], bounds[j + 1]) */
void sp_model_split(sp_ctx *c, const sp_model_set *s, const int32_t *bounds, int nreg, uint32_t *counts);
/* distinct entries of [lo, hi) that some rank selects at thr (each rank
 * selecting at about thr), kept in [at_least, at_most] */
uint64_t sp_model_union(sp_ctx *c, double thr, int64_t lo, int64_t hi, uint64_t at_least, uint64_t at_most);
/* of those, how many have a reduced value (the sum of the ranks' selected
 * values) with magnitude above thr_global, at most at_most */
uint64_t sp_model_reduced_above(sp_ctx *c, double thr, int64_t lo, int64_t hi, double thr_global, uint64_t at_most);
/* distinct entries of [lo, hi) in the union of d teams' top h, a team's
 * value of an entry being the sum of its W ranks' accumulated values (SparDL
 * across teams), kept in [h, min(d h, cap)] */
uint64_t sp_model_team_union(sp_ctx *c, int W, int d, uint64_t h, int64_t lo, int64_t hi, uint64_t cap);
/* the K-th largest reduced magnitude over the whole index space, when every
 * rank selects at thr: the same on every rank */
double sp_model_global_kth(sp_ctx *c, double thr, uint64_t K);
/* error feedback: the entries this rank selected at thr leave its residual,
 * all of them (thr_global < 0), or those whose reduced value passes
 * thr_global; thr < 0: every entry (a dense allreduce delivers all) */
void sp_model_consume(sp_ctx *c, double thr, double thr_global);

#endif
