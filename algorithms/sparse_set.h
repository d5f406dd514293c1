/* sparse_set.h - what an algorithm asks of its rank's data, in either mode.
 *
 * A selection is a set of entries of the rank's accumulated gradient (its
 * gradient plus residual), sorted by index.  With exact payloads it holds
 * real (index, value) pairs taken from io->acc; with a model workload
 * (io->acc is NULL) it holds where its entries lie, answered by the shim's
 * statistical model, and every pairs pointer is NULL, so that the messages
 * built from it carry sizes only.  Algorithms that look at their data only
 * through these calls run the same code in both modes.
 */
#ifndef SPARSIM_SPARSE_SET_H
#define SPARSIM_SPARSE_SET_H

#include "algorithm.h"
#include "select.h"
#include "sim/shim/workload.h"

typedef struct {
    uint64_t count;
    sp_pair *pairs;      /* exact: count pairs, index order; model: NULL */
    float thr;           /* the entries are those with |x| > thr */
    sp_model_set *model; /* model: where they lie */
} sp_set;

/* 1 with exact payloads */
static inline int sp_data_exact(const sp_algo_io *io) { return io->acc != NULL; }

/* The exact top-k of |acc| (ties: larger |value|, then smaller index).
 * thr is the largest float below the k-th largest |value|. */
int sp_set_topk(sp_ctx *c, sp_algo_io *io, uint64_t k, sp_set *s);
/* The entries with |acc| > thr. */
int sp_set_above(sp_ctx *c, sp_algo_io *io, float thr, sp_set *s);
/* How many entries have |acc| > thr (a model draws it: the same thr gives
 * the same count within an iteration). */
uint64_t sp_count_above(sp_ctx *c, sp_algo_io *io, float thr);
/* The largest float below the k-th largest |acc|: |x| > it keeps the top k. */
float sp_kth_threshold(sp_ctx *c, sp_algo_io *io, uint64_t k);
/* Gaussian-k's threshold mu + |Phi^-1(density / 2)| sigma over acc
 * (Shi et al., arXiv 1911.08772; the model's mean is 0). */
float sp_gaussian_estimate(sp_ctx *c, sp_algo_io *io, double density);
void sp_set_free(sp_set *s);
/* After iterations a run skipped (--iters-at; model workloads only): the
 * global threshold a recomputation would find now, the largest float below
 * the K-th largest reduced |value| when every rank selects above thr.  NAN
 * with exact payloads (it would need every rank's data). */
float sp_global_threshold_now(sp_ctx *c, sp_algo_io *io, float thr, uint64_t K);

/* The index of the entry at position pos of the selection (index order). */
int64_t sp_set_index_at(sp_ctx *c, const sp_set *s, uint64_t pos);
/* The selection cut by nreg ranges [bounds[j], bounds[j + 1]): counts[j]
 * entries each, and in exact mode blocks[j] their first pair (NULL when the
 * count is 0, or in model mode, where blocks itself may be NULL: it would
 * hold nreg NULLs). */
void sp_set_split(sp_ctx *c, const sp_set *s, const int32_t *bounds, int nreg, uint32_t *counts, sp_pair **blocks);

/* Error feedback: every selected entry leaves the residual. */
void sp_set_consume(sp_ctx *c, sp_algo_io *io, const sp_set *s);
/* Error feedback: the selected entries that entered the global result (the
 * index-sorted `global`, in exact mode; in model mode those whose reduced
 * value passes thr_global) leave the residual; the others stay. */
void sp_set_consume_delivered(sp_ctx *c, sp_algo_io *io, const sp_set *s, const sp_pair *global, uint64_t nglobal,
                              float thr_global);

/* The K largest by |value| of m gathered reduced entries (exact: `all`,
 * kept in place, index order preserved; model: their count only), and the
 * largest float below the K-th largest |value| in *thr_global (model: the
 * model's global K-th largest when every rank selects at thr).  Returns how
 * many are kept, or (uint64_t)-1 if memory runs out. */
uint64_t sp_global_topk(sp_ctx *c, sp_pair *all, uint64_t m, uint64_t K, float thr, float *thr_global);

#endif
