/* workload_stats.h - the statistics of a gradient source that decide how
 * much a sparse allreduce sends: tail shape, exact zeros, how the ranks'
 * top-k sets overlap and where they sit, how they persist over iterations,
 * and how a reused threshold drifts under error feedback.
 *
 * They are the statistics of the project's reference notes on real
 * data-parallel gradients (shared/reference/gradients.md), computed from any
 * sp_grad_source (a recorded trace or the generator) so that the generator
 * can be held against real data, and a volume model can be fed from either.
 * The source is read one (iteration, rank) at a time, each exactly once.
 */
#ifndef SPARSIM_WORKLOAD_STATS_H
#define SPARSIM_WORKLOAD_STATS_H

#include "traces/gradients.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cJSON;

/* room for the union sizes p = 2, 4, 8, ... <= P, plus P itself */
#define SP_WSTATS_MAX_UNION 32
/* the lags of the persistence and drift statistics: 1, 10, 31 */
#define SP_WSTATS_NLAGS 3

typedef struct {
    double density; /* k = floor(n * density), must give k >= 1 (and k <= n) */
    int ranks;      /* P: ranks 0..P-1 of the source are used; 1 <= P <= source ranks */
    int tau_prime;  /* threshold reuse horizon of the drift statistic, >= 2: lags 1..tau_prime-1 (e.g. 32) */
    int max_iters;  /* use the first max_iters iterations of the source (0: all) */
} sp_wstats_opts;

/* One iteration (statistics of one iteration index; NAN where undefined). */
typedef struct {
    int iter_id;                                /* its training iteration */
    double kurt_whole;                          /* 1: excess kurtosis of rank 0's whole vector */
    double kurt_layer_median;                   /* 1: median over layers of the excess kurtosis within a layer */
    double kth_over_median;                     /* 1: k-th largest |g| / median |g| (rank 0) */
    double k10_over_kth;                        /* 1: (k/10)-th largest |g| / k-th largest (rank 0) */
    double zeros;                               /* 2: fraction of exact zeros (rank 0) */
    double norm;                                /* L2 norm of rank 0's gradient */
    double union_over_k[SP_WSTATS_MAX_UNION];   /* 3: |union of ranks 0..p-1's top-k| / k, p = union_p[j] */
    double region_union;                        /* 4: union of the P top-k sets in P regions: max/mean */
    double region_rank0;                        /* 4: rank 0's top-k in P regions: max/mean */
    double jaccard_ranks;                       /* 5: Jaccard of ranks r, r+1 (mean over r < P-1) */
    double cosine_ranks;                        /* 6: cosine of ranks r, r+1 (mean over r < P-1) */
    double global_in_rank0;                     /* 7: share of the global top-k inside rank 0's top-k */
    double global_in_union;                     /* 7: share of the global top-k inside the union of the P */
    double rank_log_sd;                         /* 9: standard deviation of ln RMS over the ranks (P-1 dof) */
    double rank_max_over_min;                   /* 9: largest rank's RMS / smallest's */
} sp_wstats_iter;

/* One run of consecutive training iterations (iter_ids increasing by 1). */
typedef struct {
    int first_iter_id, length;
    int ncold;           /* lags measured: min(length - 1, tau_prime - 1) */
    double *cold;        /* cold[l], l = 1..ncold: count/k at lag l, mean over ranks (cold[0] unused, NAN) */
    double cold_mean;    /* mean of cold[1..ncold]; NAN if ncold = 0 */
    int nsettled;        /* reuse iterations of the settled statistic (0: run shorter than 16) */
    double settled_mean; /* mean count/k over them and the ranks; NAN if nsettled = 0 */
    double norm_ratio;   /* rank 0's |g| at the run's last iteration / at its first; NAN if length < 2 */
} sp_wstats_run;

/* The statistics; each aggregate is the mean over the iterations (or runs,
 * or pairs) where it is defined, NAN where it is nowhere defined. */
typedef struct {
    uint64_t n, k;
    double density;
    int ranks, tau_prime;
    int iters;  /* iterations used */
    int layers; /* layers of >= 16 entries in the per-layer median (1 without a layer table) */

    /* 1 tail shape, 2 exact zeros (rank 0) */
    double kurt_whole, kurt_layer_median, kth_over_median, k10_over_kth, zeros;

    /* 3 union of local top-k sets over ranks 0..p-1, / k */
    int nunion;
    int union_p[SP_WSTATS_MAX_UNION];
    double union_over_k[SP_WSTATS_MAX_UNION];

    /* 4 region imbalance, max/mean over P equal index regions */
    double region_union, region_rank0;

    /* 5 Jaccard of top-k sets; 6 cosine of gradients */
    double jaccard_ranks;                 /* ranks r, r+1, same iteration */
    int lags[SP_WSTATS_NLAGS];            /* 1, 10, 31 */
    double jaccard_lag[SP_WSTATS_NLAGS];  /* same rank, training iterations t and t + lag */
    long jaccard_lag_pairs[SP_WSTATS_NLAGS];
    double jaccard_lag1_other;            /* rank r at t, rank r+1 at t+1 */
    long jaccard_lag1_other_pairs;
    double cosine_ranks;                  /* ranks r, r+1, same iteration */
    double cosine_lag1;                   /* same rank, t and t+1 */
    long cosine_lag1_pairs;

    /* 7 the exact global top-k (of |sum of the P gradients|) */
    double global_in_rank0, global_in_union;

    /* 8 threshold drift under error feedback (mean over runs of the means over ranks) */
    double drift_cold[SP_WSTATS_NLAGS];   /* count/k at lags 1, 10, 31 */
    double drift_cold_mean;               /* mean count/k over lags 1..min(length-1, tau_prime-1) */
    double drift_settled_mean;            /* mean count/k over the reuse iterations, residual settled */
    double norm_ratio;                    /* rank 0's gradient norm, last iteration of a run / first */

    /* 9 how the ranks' gradient sizes differ within an iteration: ln RMS
     * of each rank's gradient less the iteration's mean over ranks */
    double rank_log_sd;        /* its standard deviation, pooled over iterations (P-1 dof each) */
    double rank_max_over_min;  /* the median over iterations of the largest RMS / the smallest */
    double rank_log_corr;      /* a deviation regressed on the same rank's at the previous training iteration */

    sp_wstats_iter *per_iter; /* [iters] */
    int nruns;
    sp_wstats_run *runs; /* [nruns] */
} sp_wstats;

/* Computes every statistic from iterations 0..min(iters, max_iters)-1 and
 * ranks 0..P-1 of src.  Memory: about 3 P n floats for P ranks' previous
 * gradients and two error-feedback residuals, plus top-k index sets of the
 * last 32 iterations (32 P k int32).  Returns 0, or -1 with a one-line
 * message in err (out is then empty; sp_wstats_free on it is harmless). */
int sp_wstats_compute(sp_grad_source *src, const sp_wstats_opts *o, sp_wstats *out, char *err, size_t errlen);

/* Writes the statistics as a readable table (aggregates, then the runs). */
void sp_wstats_print(const sp_wstats *s, FILE *f);

/* The same as a JSON object (cjson/cJSON.h), with per-iteration and per-run
 * values; undefined values are null.  NULL when out of memory. */
struct cJSON *sp_wstats_json(const sp_wstats *s);

/* Frees what sp_wstats_compute allocated in s and empties it. */
void sp_wstats_free(sp_wstats *s);

#endif
