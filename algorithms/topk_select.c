/* topk_select.c - selection kernels: exact top-k in expected O(n), threshold
 * filtering, the Gaussian-k threshold estimate, and the merge of sparse
 * vectors.
 *
 * Every entry gets a 64-bit key: the bits of |x| (for non-negative floats
 * the IEEE bit pattern orders like the value) above the complemented index,
 * so larger |x| wins and, among equal |x|, the smaller index wins.  Keys are
 * unique, so quickselect finds the k-th largest key exactly and one scan in
 * index order emits the selection already sorted by index.
 */
#include "select.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the device that holds a copy of one vector, if any (select.h) */
static const sp_select_device *dev_ops;
static void *dev_state;
static const float *dev_acc;
static uint64_t dev_n;

void sp_select_device_install(const sp_select_device *d, void *st, const float *acc, uint64_t n)
{
    dev_ops = d;
    dev_state = st;
    dev_acc = d ? acc : NULL;
    dev_n = d ? n : 0;
}

static inline int on_device(const float *x, uint64_t n) { return dev_ops && x == dev_acc && n == dev_n; }

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

static inline uint64_t key_of_pair(const sp_pair *p)
{
    uint32_t b;
    memcpy(&b, &p->val, sizeof b);
    b &= 0x7fffffffu;
    return ((uint64_t)b << 32) | (uint64_t)(0xffffffffu - (uint32_t)p->idx);
}

uint64_t sp_topk_pairs(const sp_pair *in, uint64_t m, uint64_t k, sp_pair *out)
{
    if (k == 0 || m == 0)
        return 0;
    if (k >= m) {
        if (out != in)
            memmove(out, in, m * sizeof *out);
        return m;
    }
    uint64_t *keys = malloc(m * sizeof *keys);
    if (!keys)
        return 0;
    for (uint64_t i = 0; i < m; i++)
        keys[i] = key_of_pair(&in[i]);
    uint64_t cut = select_desc(keys, m, k - 1);
    free(keys);
    uint64_t w = 0;
    for (uint64_t i = 0; i < m; i++)
        if (key_of_pair(&in[i]) >= cut)
            out[w++] = in[i];
    return w;
}

/* Threshold filtering is a stream over n floats of which ~1% pass: test 16
 * at a time with SIMD compares (GCC vector extensions, SSE2 on any x86-64)
 * and look at single entries only in the rare blocks with a hit.  This keeps
 * it near the memory-bandwidth floor (bench/selection.c). */
typedef float sp_v4f __attribute__((vector_size(16)));
typedef int32_t sp_v4i __attribute__((vector_size(16)));

/* bit j set when |x[j]| > thr, for j < 16 */
static inline uint32_t block_hits(const float *x, sp_v4f t)
{
    const sp_v4i absmask = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    sp_v4i c[4], any = {0, 0, 0, 0};
    for (int j = 0; j < 4; j++) {
        sp_v4f v;
        memcpy(&v, x + 4 * j, sizeof v);
        c[j] = (sp_v4f)((sp_v4i)v & absmask) > t;
        any |= c[j];
    }
    uint64_t w[2];
    memcpy(w, &any, sizeof w);
    if ((w[0] | w[1]) == 0)
        return 0; /* the common case: no entry of the block passes */
    uint32_t bits = 0;
    for (int j = 0; j < 4; j++)
        for (int l = 0; l < 4; l++)
            bits |= (uint32_t)(c[j][l] & 1) << (4 * j + l);
    return bits;
}

static inline uint64_t emit(const float *x, uint64_t j, sp_pair *out, uint64_t m, uint64_t cap)
{
    if (out && m < cap) {
        out[m].idx = (int32_t)j;
        out[m].val = x[j];
    }
    return m + 1;
}

uint64_t sp_threshold_select(const float *x, uint64_t n, float thr, sp_pair *out, uint64_t cap)
{
    if (on_device(x, n))
        return dev_ops->threshold_select(dev_state, thr, out, cap);
    uint64_t m = 0, i = 0;
    sp_v4f t = {thr, thr, thr, thr};
    for (; i + 16 <= n; i += 16)
        for (uint32_t bits = block_hits(x + i, t); bits; bits &= bits - 1)
            m = emit(x, i + (uint64_t)__builtin_ctz(bits), out, m, cap);
    for (; i < n; i++)
        if (fabsf(x[i]) > thr)
            m = emit(x, i, out, m, cap);
    return m;
}

double sp_gaussian_threshold(const float *x, uint64_t n, double density)
{
    if (n == 0)
        return 0.0;
    if (on_device(x, n))
        return dev_ops->gaussian_threshold(dev_state, density);
    /* one pass, four independent accumulators, around a shift (the first
     * value) so that the variance does not cancel catastrophically */
    double shift = x[0], s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) {
            double d = (double)x[i + j] - shift;
            s[j] += d;
            q[j] += d * d;
        }
    for (; i < n; i++) {
        double d = (double)x[i] - shift;
        s[0] += d;
        q[0] += d * d;
    }
    return sp_gaussian_from_sums(shift, s[0] + s[1] + s[2] + s[3], q[0] + q[1] + q[2] + q[3], n, density);
}

double sp_gaussian_from_sums(double shift, double sum, double sq, uint64_t n, double density)
{
    if (n == 0)
        return 0.0;
    double mean_d = sum / (double)n;
    double var = sq / (double)n - mean_d * mean_d;
    double sigma = sqrt(var > 0 ? var : 0);
    return shift + mean_d + fabs(sp_gaussian_z(density)) * sigma;
}

double sp_gaussian_z(double density) { return gsl_cdf_ugaussian_Pinv(density / 2.0); }

uint64_t sp_merge_add(const sp_pair *a, uint64_t na, const sp_pair *b, uint64_t nb, sp_pair *out)
{
    uint64_t i = 0, j = 0, w = 0;
    while (i < na && j < nb) {
        if (a[i].idx < b[j].idx)
            out[w++] = a[i++];
        else if (b[j].idx < a[i].idx)
            out[w++] = b[j++];
        else {
            out[w].idx = a[i].idx;
            out[w++].val = a[i++].val + b[j++].val;
        }
    }
    while (i < na)
        out[w++] = a[i++];
    while (j < nb)
        out[w++] = b[j++];
    return w;
}

uint64_t sp_topk_exact(const float *x, uint64_t n, uint64_t k, sp_pair *out)
{
    if (k == 0 || n == 0)
        return 0;
    if (k > n)
        k = n;
    if (on_device(x, n))
        return dev_ops->topk_exact(dev_state, k, out);
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

void sp_consume_delivered(float *acc, const sp_pair *mine, uint64_t m, const sp_pair *global, uint64_t t)
{
    /* on a device, its copy loses the same entries: those zeroed here */
    int dev = on_device(acc, dev_n);
    sp_pair *gone = dev ? malloc((m ? m : 1) * sizeof *gone) : NULL;
    uint64_t w = 0;
    for (uint64_t i = 0, j = 0; i < m && j < t;) {
        if (mine[i].idx < global[j].idx)
            i++;
        else if (global[j].idx < mine[i].idx)
            j++;
        else {
            acc[mine[i].idx] = 0.0f;
            if (gone)
                gone[w++] = mine[i];
            i++;
            j++;
        }
    }
    if (dev) {
        dev_ops->zero_at(dev_state, gone, gone ? w : 0); /* NULL: the copy is lost (the device fails the run) */
        free(gone);
    }
}

void sp_zero_at(float *acc, const sp_pair *sel, uint64_t m)
{
    for (uint64_t j = 0; j < m; j++)
        acc[sel[j].idx] = 0.0f;
    if (on_device(acc, dev_n))
        dev_ops->zero_at(dev_state, sel, m);
}

void sp_zero_all(float *acc, uint64_t n)
{
    memset(acc, 0, n * sizeof *acc);
    if (on_device(acc, n))
        dev_ops->zero_all(dev_state);
}

void sp_acc_rewritten(const float *acc, uint64_t n)
{
    if (on_device(acc, n))
        dev_ops->set_all(dev_state, acc);
}
