/* sparse_set.c - selections of a rank's data (sparse_set.h): real vectors
 * and the selection kernels in exact mode, the shim's model otherwise. */
#include "sparse_set.h"
#include "sim/shim/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the largest float below the smallest |value| among sel: |x| > it keeps them */
static float threshold_below(const sp_pair *sel, uint64_t m)
{
    float t = INFINITY;
    for (uint64_t j = 0; j < m; j++)
        if (fabsf(sel[j].val) < t)
            t = fabsf(sel[j].val);
    return m ? nextafterf(t, 0.0f) : 0.0f;
}

int sp_set_topk(sp_ctx *c, sp_algo_io *io, uint64_t k, sp_set *s)
{
    memset(s, 0, sizeof *s);
    if (k > io->n)
        k = io->n;
    if (!sp_data_exact(io)) {
        s->thr = (float)sp_model_kth(c, k);
        s->count = k;
        s->model = sp_model_select(c, s->thr, k);
        return s->model ? SP_OK : SP_ERR_MEM;
    }
    s->pairs = malloc((k ? k : 1) * sizeof *s->pairs);
    if (!s->pairs || (k && sp_topk_exact(io->acc, io->n, k, s->pairs) != k)) {
        sp_set_free(s);
        return SP_ERR_MEM;
    }
    s->count = k;
    s->thr = threshold_below(s->pairs, k);
    return SP_OK;
}

uint64_t sp_count_above(sp_ctx *c, sp_algo_io *io, float thr)
{
    if (!sp_data_exact(io))
        return sp_model_count_above(c, thr);
    return sp_threshold_select(io->acc, io->n, thr, NULL, 0);
}

int sp_set_above(sp_ctx *c, sp_algo_io *io, float thr, sp_set *s)
{
    memset(s, 0, sizeof *s);
    s->thr = thr;
    if (!sp_data_exact(io)) {
        s->count = sp_model_count_above(c, thr);
        s->model = sp_model_select(c, thr, s->count);
        return s->model ? SP_OK : SP_ERR_MEM;
    }
    uint64_t m = sp_threshold_select(io->acc, io->n, thr, NULL, 0);
    s->pairs = malloc((m ? m : 1) * sizeof *s->pairs);
    if (!s->pairs)
        return SP_ERR_MEM;
    sp_threshold_select(io->acc, io->n, thr, s->pairs, m);
    s->count = m;
    return SP_OK;
}

float sp_kth_threshold(sp_ctx *c, sp_algo_io *io, uint64_t k)
{
    sp_set s;
    if (!sp_data_exact(io))
        return (float)sp_model_kth(c, k);
    if (sp_set_topk(c, io, k, &s) != SP_OK)
        return NAN;
    float t = s.thr;
    sp_set_free(&s);
    return t;
}

float sp_global_threshold_now(sp_ctx *c, sp_algo_io *io, float thr, uint64_t K)
{
    return sp_data_exact(io) ? NAN : (float)sp_model_global_kth(c, thr, K);
}

float sp_gaussian_estimate(sp_ctx *c, sp_algo_io *io, double density)
{
    if (!sp_data_exact(io))
        return (float)(fabs(sp_gaussian_z(density)) * sp_model_std(c));
    return (float)sp_gaussian_threshold(io->acc, io->n, density);
}

void sp_set_free(sp_set *s)
{
    free(s->pairs);
    sp_model_set_free(s->model);
    memset(s, 0, sizeof *s);
}

int64_t sp_set_index_at(sp_ctx *c, const sp_set *s, uint64_t pos)
{
    if (!s->pairs)
        return sp_model_index_at(c, s->model, pos);
    return s->pairs[pos].idx;
}

void sp_set_split(sp_ctx *c, const sp_set *s, const int32_t *bounds, int nreg, uint32_t *counts, sp_pair **blocks)
{
    memset(counts, 0, (size_t)nreg * sizeof *counts);
    if (blocks)
        memset(blocks, 0, (size_t)nreg * sizeof *blocks);
    if (!s->pairs) {
        if (s->model)
            sp_model_split(c, s->model, bounds, nreg, counts);
        return;
    }
    /* the selection is sorted by index: each range's part is contiguous */
    int reg = 0;
    for (uint64_t j = 0; j < s->count; j++) {
        while (reg < nreg - 1 && (int64_t)s->pairs[j].idx >= bounds[reg + 1])
            reg++;
        if (!counts[reg])
            blocks[reg] = s->pairs + j;
        counts[reg]++;
    }
}

void sp_set_consume(sp_ctx *c, sp_algo_io *io, const sp_set *s)
{
    if (!sp_data_exact(io)) {
        sp_model_consume(c, s->thr, -1.0);
        return;
    }
    sp_zero_at(io->acc, s->pairs, s->count);
}

void sp_set_consume_delivered(sp_ctx *c, sp_algo_io *io, const sp_set *s, const sp_pair *global, uint64_t nglobal,
                              float thr_global)
{
    if (!sp_data_exact(io)) {
        sp_model_consume(c, s->thr, thr_global);
        return;
    }
    sp_consume_delivered(io->acc, s->pairs, s->count, global, nglobal);
}

uint64_t sp_global_topk(sp_ctx *c, sp_pair *all, uint64_t m, uint64_t K, float thr, float *thr_global)
{
    uint64_t keep = K < m ? K : m;
    if (!all) {
        *thr_global = (float)sp_model_global_kth(c, thr, K);
        return keep;
    }
    uint64_t t = sp_topk_pairs(all, m, keep, all);
    if (keep && !t)
        return (uint64_t)-1;
    *thr_global = threshold_below(all, t);
    return t;
}
