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

#endif
