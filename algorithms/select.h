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

#ifdef __cplusplus
static_assert(sizeof(sp_pair) == 8, "sp_pair must be 8 bytes on the wire");
extern "C" {
#else
_Static_assert(sizeof(sp_pair) == 8, "sp_pair must be 8 bytes on the wire");
#ifdef __cplusplus
}
#endif

#endif

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
/* The same threshold from the sums of d and d^2 over n entries, d = x - shift
 * (shift = x[0]): how the CPU and the GPU (select_cuda.h) finish it alike. */
double sp_gaussian_from_sums(double shift, double sum, double sumsq, uint64_t n, double density);

/* Merges two index-sorted pair lists, adding values at equal indices; out
 * holds up to na + nb pairs.  Returns the number written (index-sorted). */
uint64_t sp_merge_add(const sp_pair *a, uint64_t na, const sp_pair *b, uint64_t nb, sp_pair *out);

/* Error feedback: zeroes acc at every entry of the local selection `mine`
 * whose index is also in `global` (both sorted by index): what entered the
 * global result leaves the residual. */
void sp_consume_delivered(float *acc, const sp_pair *mine, uint64_t m, const sp_pair *global, uint64_t t);

/* Error feedback: acc[idx] = 0 for the m pairs sel; and acc[0..n) = 0. */
void sp_zero_at(float *acc, const sp_pair *sel, uint64_t m);
void sp_zero_all(float *acc, uint64_t n);
/* acc was rewritten on the host in place (a compressed scheme's error
 * feedback leaves x - its compressed value): a device's copy (below)
 * becomes it */
void sp_acc_rewritten(const float *acc, uint64_t n);

/* Where the kernels above run on a rank's accumulated vector.  By default on
 * the CPU.  A run may hand one vector, `acc` of n floats, to a device that
 * holds its own copy of it (sparsim-mpi --select cuda: sim/driver/
 * select_device.c): then every call above on that very vector (the same
 * pointer and n) goes to the device, which keeps its copy equal to acc, bit
 * for bit, through the zeroing calls; calls on any other vector stay on the
 * CPU.  One vector per process (the MPI backend runs one rank a process). */
typedef struct {
    uint64_t (*topk_exact)(void *st, uint64_t k, sp_pair *out);
    uint64_t (*threshold_select)(void *st, float thr, sp_pair *out, uint64_t cap);
    double (*gaussian_threshold)(void *st, double density);
    void (*zero_at)(void *st, const sp_pair *sel, uint64_t m); /* sel NULL: the copy is lost */
    void (*zero_all)(void *st);
    void (*set_all)(void *st, const float *acc); /* the host's acc, whole, becomes the copy */
} sp_select_device;
/* d == NULL: back to the CPU for every vector */
void sp_select_device_install(const sp_select_device *d, void *st, const float *acc, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
