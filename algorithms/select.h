/* select.h - sparse (index, value) pairs and the selection kernels.
 *
 * The wire format of a sparse entry is 8 bytes: int32 index, float32 value,
 * as in every reference implementation (4-byte words: 2 per entry).
 * Ties are broken deterministically: larger |value| first, then smaller index.
 */
#ifndef SPARSIM_SELECT_H
#define SPARSIM_SELECT_H

#include <stdint.h>

typedef struct {
    int32_t idx;
    float val;
} sp_pair;

_Static_assert(sizeof(sp_pair) == 8, "sp_pair must be 8 bytes on the wire");

/* Exact top-k of |x| over n entries in O(n) expected time (quickselect on a
 * total order, not a sort).  Writes min(k, n) pairs to `out` in ascending
 * index order and returns their count, or 0 on allocation failure with k>0. */
uint64_t sp_topk_exact(const float *x, uint64_t n, uint64_t k, sp_pair *out);

/* Exact top-k of m pairs by |val| (same total order), written to out in the
 * input's order (index order if the input is sorted by index).  out may
 * alias in.  Returns min(k, m), or 0 on allocation failure. */
uint64_t sp_topk_pairs(const sp_pair *in, uint64_t m, uint64_t k, sp_pair *out);

/* Entries with |x| > thr in index order.  Writes at most `cap` pairs to out
 * (out may be NULL to count only) and returns how many there are. */
uint64_t sp_threshold_select(const float *x, uint64_t n, float thr, sp_pair *out, uint64_t cap);

/* Gaussian-k's threshold estimate (Shi et al., arXiv 1911.08772): with mu and
 * sigma the mean and standard deviation of x, thr = mu + |Phi^-1(rho / 2)| sigma,
 * Phi^-1 the standard normal percent-point function (GSL). */
double sp_gaussian_threshold(const float *x, uint64_t n, double density);
/* Phi^-1(density / 2), the z of that estimate (negative) */
double sp_gaussian_z(double density);

/* Merges two index-sorted pair lists, adding values at equal indices; out
 * holds up to na + nb pairs.  Returns the number written (index-sorted). */
uint64_t sp_merge_add(const sp_pair *a, uint64_t na, const sp_pair *b, uint64_t nb, sp_pair *out);

/* Error feedback: zeroes acc at every entry of the local selection `mine`
 * whose index is also in `global` (both sorted by index): what entered the
 * global result leaves the residual. */
void sp_consume_delivered(float *acc, const sp_pair *mine, uint64_t m, const sp_pair *global, uint64_t t);

#endif
