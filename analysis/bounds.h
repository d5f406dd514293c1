/* bounds.h - closed-form volume and alpha-beta time models of the algorithms.
 *
 * Volumes are the bandwidth terms of the papers' alpha-beta models, per rank
 * on full-duplex links, in 4-byte words as the papers write them; callers
 * convert (bytes = 4 x words).  Each formula cites its source.
 */
#ifndef SPARSIM_BOUNDS_H
#define SPARSIM_BOUNDS_H

#include <stdint.h>

typedef struct {
    double words;        /* the algorithm's own closed-form volume per rank */
    const char *formula; /* as printed, e.g. "2n(P-1)/P" */
    const char *source;  /* citation */
    double floor_words;  /* the algorithm's own best case, where it has one (TopkDSA), else 0 */
    double lower_words;  /* lower bound for its class (dense or sparse) */
    const char *lower_formula;
} sp_bound;

/* Returns 0 and fills b, or -1 for an unknown algorithm. */
int sp_bound_volume(const char *algo, int P, uint64_t n, uint64_t k, sp_bound *b);

/* alpha-beta prediction of one iteration's communication time (seconds) on
 * an uncontended network with route latency alpha and inverse bandwidth beta
 * (s/byte); -1 when the algorithm has no closed form here. */
double sp_predict_time(const char *algo, int P, uint64_t n, uint64_t k, double alpha, double beta);

#endif
