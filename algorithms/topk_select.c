/* topk_select.c - exact top-k selection in expected O(n).
 *
 * Every entry gets a 64-bit key: the bits of |x| (for non-negative floats
 * the IEEE bit pattern orders like the value) above the complemented index,
 * so larger |x| wins and, among equal |x|, the smaller index wins.  Keys are
 * unique, so quickselect finds the k-th largest key exactly and one scan in
 * index order emits the selection already sorted by index.
 */
#include "select.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t key_of(const float *x, uint64_t i)
{
    uint32_t b;
    memcpy(&b, &x[i], sizeof b);
    b &= 0x7fffffffu;
    return ((uint64_t)b << 32) | (uint64_t)(0xffffffffu - (uint32_t)i);
}

static inline void swap64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

/* k-th largest (0-based rank `kth` in descending order) of keys[0..n) */
static uint64_t select_desc(uint64_t *keys, uint64_t n, uint64_t kth)
{
    uint64_t lo = 0, hi = n - 1;
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ n;
    while (lo < hi) {
        /* median of three random samples keeps the expected time linear */
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        uint64_t span = hi - lo + 1;
        uint64_t a = keys[lo + rng % span], b = keys[lo + (rng >> 21) % span], c = keys[lo + (rng >> 42) % span];
        uint64_t pivot = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
        /* three-way partition, descending: [> pivot][== pivot][< pivot] */
        uint64_t lt = lo, i = lo, gt = hi;
        while (i <= gt) {
            if (keys[i] > pivot)
                swap64(&keys[lt++], &keys[i++]);
            else if (keys[i] < pivot) {
                swap64(&keys[i], &keys[gt]);
                if (gt == 0)
                    break;
                gt--;
            } else
                i++;
        }
        if (kth < lt)
            hi = lt - 1;
        else if (kth > gt)
            lo = gt + 1;
        else
            return pivot;
    }
    return keys[lo];
}

uint64_t sp_topk_exact(const float *x, uint64_t n, uint64_t k, sp_pair *out)
{
    if (k == 0 || n == 0)
        return 0;
    if (k > n)
        k = n;
    uint64_t cut = 0; /* smallest key that is selected */
    if (k < n) {
        uint64_t *keys = malloc(n * sizeof *keys);
        if (!keys)
            return 0;
        for (uint64_t i = 0; i < n; i++)
            keys[i] = key_of(x, i);
        cut = select_desc(keys, n, k - 1);
        free(keys);
    }
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (key_of(x, i) >= cut) {
            out[m].idx = (int32_t)i;
            out[m].val = x[i];
            m++;
        }
    }
    return m;
}
