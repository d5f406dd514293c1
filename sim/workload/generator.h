/* generator.h - exact synthetic gradients from a workload profile.
 *
 * Every value is a pure function of (seed, rank, iteration, index): runs are
 * reproducible on every backend, in any order.  What all ranks share (the
 * per-coordinate scales, the common component, the overall scale) is
 * computed once per iteration; a rank's own part is one normal draw per
 * entry.  profile.h gives the model.
 */
#ifndef SPARSIM_GENERATOR_H
#define SPARSIM_GENERATOR_H

#include "profile.h"
#include "traces/gradients.h"

typedef struct sp_generator sp_generator;

/* A generator for profile p (copied) and seed; NULL with a message. */
sp_generator *sp_generator_new(const sp_profile *p, uint64_t seed, char *err, size_t errlen);
void sp_generator_free(sp_generator *g);

/* acc[0..n) += the gradient of rank `rank` in iteration `iter` (or =, with
 * add = 0).  0, or -1 if memory for the shared part ran out. */
int sp_generator_fill(sp_generator *g, int rank, int iter, float *acc, int add);

/* S(iter), the overall scale */
double sp_generator_scale(sp_generator *g, int iter);
/* rank's own scale S_r(iter) (profile.h): exp(sd a - sd^2), a the
 * autoregressive walk of correlation corr whose steps come from (seed,
 * rank), so that E[S_r^2] = 1; 1 for sd 0.  *w holds the walk where it was
 * last asked (t = -1: not yet) and moves on from there, so that asking
 * iteration after iteration costs a step each. */
typedef struct {
    int t;
    double a;
} sp_rank_walk;
double sp_rank_scale(uint64_t seed, double sd, double corr, int rank, int iter, sp_rank_walk *w);
/* w grown to hold rank (new entries not yet walked; *count updated); NULL
 * when memory runs out (w is kept) */
sp_rank_walk *sp_rank_walks(sp_rank_walk *w, int *count, int rank);

/* The overall scale's log, ln S(t) = sd * A_t with A_0 = W_0 and
 * A_t = corr * A_{t-1} + sqrt(1 - corr^2) W_t (a stationary autoregressive
 * sequence of unit variance): the values for t = 0..n-1 into a (the
 * generator and the model share it). */
void sp_scale_series(uint64_t seed, double sd, double corr, int n, double *a);

/* The generator as a gradient source of `ranks` ranks and `iters`
 * iterations (it takes over nothing; the source owns a copy). */
sp_grad_source *sp_generator_source(const sp_profile *p, uint64_t seed, int ranks, int iters, char *err,
                                    size_t errlen);


#endif
