/* fit.c - a workload profile fitted to gradients (profile.h: the model).
 *
 * From any gradient source (a recorded trace, or the generator itself):
 *  - overall scale: each iteration's gradients are divided by their RMS over
 *    ranks and entries, and the steps of ln RMS between consecutive training
 *    iterations give `drift` (their standard deviation);
 *  - per-coordinate scale: sigma_i is the RMS of the normalised g[t, r, i]
 *    over ranks and iterations; per layer, log10 sigma_i over the non-zero
 *    entries gives `log10_scale` (median) and `log10_spread` fitted on the
 *    upper half, (q99 - q50) / 2.326, where the top-k selections live (the
 *    notes on real gradients fit it so);
 *  - `zeros`: per layer, the mean share of entries exactly 0;
 *  - `common`: the mean cosine between two ranks' gradients of an iteration;
 *  - persistence: the Jaccard of one rank's top-k sets L iterations apart,
 *    against the Jaccard of two ranks' sets in one iteration: a scale redrawn
 *    whole (keep = 0) every `refresh` iterations, each coordinate at its own
 *    phase, loses a share L / refresh of the overlap after L iterations, so
 *    refresh = L / (1 - ratio) at the longest lag the source has (no decay:
 *    refresh 0, never redrawn).
 */
#include "fit.h"
#include "../../algorithms/select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile_sorted(const double *v, size_t m, double q)
{
    if (m == 0)
        return NAN;
    double pos = q * (double)(m - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= m)
        return v[m - 1];
    return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/* |A and B| / |A or B| of two index-sorted top-k sets */
static double jaccard(const sp_pair *a, const sp_pair *b, uint64_t k)
{
    uint64_t i = 0, j = 0, both = 0;
    while (i < k && j < k) {
        if (a[i].idx < b[j].idx)
            i++;
        else if (b[j].idx < a[i].idx)
            j++;
        else {
            both++;
            i++;
            j++;
        }
    }
    return k ? (double)both / (double)(2 * k - both) : 0;
}

int sp_profile_fit(sp_grad_source *src, int max_iters, double density, sp_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    uint64_t n = src->n;
    int I = max_iters > 0 && max_iters < src->iters ? max_iters : src->iters, P = src->ranks;
    uint64_t k = (uint64_t)floor((double)n * density);
    if (k < 1 || k > n) {
        snprintf(err, errlen, "density %g selects no entry of n = %llu (or more than n)", density,
                 (unsigned long long)n);
        return -1;
    }
    int rc = -1;
    double *ss = calloc(n, sizeof *ss), *lz = NULL, *logs = NULL;
    float *g = malloc(n * sizeof *g), *g0 = malloc(n * sizeof *g0);
    sp_pair *t0 = malloc(k * sizeof *t0), *t1 = malloc(k * sizeof *t1), *first = malloc(k * sizeof *first);
    int L = src->layers && src->nlayers ? src->nlayers : 1;
    lz = calloc((size_t)L, sizeof *lz);
    double *lnorm = malloc((size_t)I * sizeof *lnorm);
    if (!ss || !g || !g0 || !t0 || !t1 || !first || !lz || !lnorm) {
        snprintf(err, errlen, "out of memory fitting a profile of n = %llu", (unsigned long long)n);
        goto out;
    }
    double cos_sum = 0, jr_sum = 0, jl_sum = 0;
    long cos_n = 0, jr_n = 0, jl_n = 0;
    int lag_used = 0;
    for (int it = 0; it < I; it++) {
        /* the iteration's RMS first (a second pass normalises) */
        double sq = 0;
        for (int r = 0; r < P; r++) {
            if (src->fill(src, it, r, g, 0, err, errlen) != 0)
                goto out;
            for (uint64_t i = 0; i < n; i++)
                sq += (double)g[i] * g[i];
        }
        double rms = sqrt(sq / ((double)n * P));
        lnorm[it] = log(rms > 0 ? rms : 1e-300);
        for (int r = 0; r < P; r++) {
            if (src->fill(src, it, r, g, 0, err, errlen) != 0)
                goto out;
            double inv = rms > 0 ? 1.0 / rms : 0;
            for (uint64_t i = 0; i < n; i++) {
                double x = g[i] * inv;
                ss[i] += x * x;
            }
            for (int l = 0; l < L; l++) {
                uint64_t off = src->layers ? src->layers[l].offset : 0, sz = src->layers ? src->layers[l].size : n;
                uint64_t z = 0;
                for (uint64_t i = off; i < off + sz; i++)
                    z += g[i] == 0.0f;
                lz[l] += (double)z / (double)sz;
            }
            if (r == 0) {
                memcpy(g0, g, n * sizeof *g);
                if (sp_topk_exact(g, n, k, t0) != k) {
                    snprintf(err, errlen, "out of memory");
                    goto out;
                }
                /* persistence: rank 0 against its first top-k, at the largest lag */
                if (it == 0)
                    memcpy(first, t0, k * sizeof *t0);
                else if (sp_grad_iter_id(src, it) - sp_grad_iter_id(src, 0) == it && it <= 31) {
                    lag_used = it;
                    jl_sum = jaccard(first, t0, k);
                    jl_n = 1;
                }
            } else if (r == 1) {
                double ab = 0, aa = 0, bb = 0;
                for (uint64_t i = 0; i < n; i++) {
                    ab += (double)g0[i] * g[i];
                    aa += (double)g0[i] * g0[i];
                    bb += (double)g[i] * g[i];
                }
                if (aa > 0 && bb > 0) {
                    cos_sum += ab / sqrt(aa * bb);
                    cos_n++;
                }
                if (sp_topk_exact(g, n, k, t1) != k) {
                    snprintf(err, errlen, "out of memory");
                    goto out;
                }
                jr_sum += jaccard(t0, t1, k);
                jr_n++;
            }
        }
    }
    snprintf(out->name, sizeof out->name, "fitted");
    snprintf(out->source, sizeof out->source,
             "fitted by sparsim profile to %d iteration(s) of %d rank(s), n = %llu (density %g for persistence)", I,
             P, (unsigned long long)n, density);
    out->n = n;
    out->nlayers = L;
    out->layers = calloc((size_t)L, sizeof *out->layers);
    if (!out->layers) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int l = 0; l < L; l++) {
        sp_profile_layer *ly = &out->layers[l];
        uint64_t off = src->layers ? src->layers[l].offset : 0, sz = src->layers ? src->layers[l].size : n;
        snprintf(ly->name, sizeof ly->name, "%s", src->layers ? src->layers[l].name : "all");
        ly->offset = off;
        ly->size = sz;
        ly->zeros = lz[l] / ((double)I * P);
        if (ly->zeros >= 1)
            ly->zeros = 0.999;
        free(logs);
        logs = malloc(sz * sizeof *logs);
        if (!logs) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        size_t m = 0;
        for (uint64_t i = off; i < off + sz; i++)
            if (ss[i] > 0)
                logs[m++] = 0.5 * log10(ss[i] / ((double)I * P));
        qsort(logs, m, sizeof *logs, cmp_double);
        double q50 = quantile_sorted(logs, m, 0.5), q99 = quantile_sorted(logs, m, 0.99);
        ly->log10_scale = m ? q50 : -30;
        ly->log10_spread = m > 1 ? (q99 - q50) / 2.326 : 0;
        if (ly->log10_spread < 0)
            ly->log10_spread = 0;
        if (ly->log10_spread > 3)
            ly->log10_spread = 3;
    }
    out->common = cos_n ? cos_sum / cos_n : 0;
    if (out->common < 0)
        out->common = 0;
    if (out->common > 0.99)
        out->common = 0.99;
    /* drift: steps of ln RMS between consecutive training iterations */
    double d2 = 0;
    int dn = 0;
    for (int it = 1; it < I; it++)
        if (sp_grad_iter_id(src, it) == sp_grad_iter_id(src, it - 1) + 1) {
            double d = lnorm[it] - lnorm[it - 1];
            d2 += d * d;
            dn++;
        }
    out->drift = dn ? sqrt(d2 / dn) : 0;
    if (out->drift > 1)
        out->drift = 1;
    out->keep = 0;
    out->refresh = 0;
    if (jl_n && jr_n && lag_used > 0) {
        double ratio = jl_sum / (jr_sum / jr_n);
        if (ratio < 0.97)
            out->refresh = (double)lag_used / (1 - (ratio > 0 ? ratio : 0));
    }
    rc = sp_profile_check(out, err, errlen);
out:
    free(ss);
    free(lz);
    free(logs);
    free(g);
    free(g0);
    free(t0);
    free(t1);
    free(first);
    free(lnorm);
    if (rc)
        sp_profile_free(out);
    return rc;
}
