/* fit.c - a workload profile fitted to gradients (profile.h: the model).
 *
 * From any gradient source (a recorded trace, or the generator itself):
 *  - overall scale: each iteration's gradients are divided by their RMS over
 *    ranks and entries; ln RMS, less its mean over each run of consecutive
 *    training iterations, gives `scale_sd` (its standard deviation) and
 *    `scale_corr` (its correlation from one iteration to the next);
 *  - per-coordinate scale: sigma_i is the RMS of the normalised g[t, r, i]
 *    over ranks and iterations; per layer, log10 sigma_i over the non-zero
 *    entries gives `log10_scale` (median) and `log10_spread` fitted on the
 *    upper half, (q99 - q50) / 2.326, where the top-k selections live (the
 *    notes on real gradients fit it so).  A layer larger than n / bins is
 *    cut into equal pieces, each fitted alone: large entries need not spread
 *    evenly over a large tensor (an embedding's rows of frequent tokens);
 *  - `zeros`: per layer, the mean share of entries exactly 0;
 *  - `mean`: the mean cosine of a rank's gradient with its previous one
 *    (consecutive training iterations): what persists; `common`: the mean
 *    cosine between two ranks' gradients of an iteration, less `mean`;
 *  - per-sample noise: z = g / (rms sigma_i) standardised; its excess
 *    kurtosis and P(|z| > 4) give `spikes` and `spike_scale` (the mixture of
 *    two normals with those, searched on a grid);
 *  - persistence: the Jaccard of one rank's top-k sets L iterations apart,
 *    against the Jaccard of two ranks' sets in one iteration: a scale redrawn
 *    whole (keep = 0) every `refresh` iterations, each coordinate at its own
 *    phase, loses a share L / refresh of the overlap after L iterations, so
 *    refresh = L / (1 - ratio) at the longest lag the source has (no decay:
 *    refresh 0, never redrawn).
 */
#include "fit.h"
#include "generator.h"
#include "algorithms/select.h"

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

/* the pieces the profile describes: layers, large ones cut into at most
 * n / bins entries; returns their count (pieces may be NULL to count) */
static int pieces_of(const sp_grad_source *src, int bins, sp_layer *pieces)
{
    uint64_t n = src->n, cap = bins > 0 ? (n + (uint64_t)bins - 1) / (uint64_t)bins : n;
    if (cap < 1)
        cap = 1;
    int L = src->layers && src->nlayers ? src->nlayers : 1, count = 0;
    for (int l = 0; l < L; l++) {
        uint64_t off = src->layers ? src->layers[l].offset : 0, sz = src->layers ? src->layers[l].size : n;
        uint64_t parts = (sz + cap - 1) / cap;
        for (uint64_t j = 0; j < parts; j++) {
            if (pieces) {
                sp_layer *pc = &pieces[count];
                uint64_t a = off + sz * j / parts, b = off + sz * (j + 1) / parts;
                if (parts > 1)
                    snprintf(pc->name, sizeof pc->name, "%.80s[%llu]", src->layers ? src->layers[l].name : "all",
                             (unsigned long long)j);
                else
                    snprintf(pc->name, sizeof pc->name, "%s", src->layers ? src->layers[l].name : "all");
                pc->offset = a;
                pc->size = b - a;
            }
            count++;
        }
    }
    return count;
}

/* the mixture of two normals (probability e of k times the base deviation,
 * unit variance) closest to the standardised noise's fourth moment and
 * P(|z| > 3), P(|z| > 4), on a log grid */
static void fit_spikes(double m4, double p3, double p4, double *spikes, double *scale)
{
    double best = INFINITY;
    *spikes = 0;
    *scale = 1;
    for (int a = 0; a <= 60; a++) {
        double e = 1e-4 * pow(3000.0, a / 60.0); /* 1e-4 .. 0.3 */
        for (int b = 0; b <= 60; b++) {
            double k = pow(40.0, b / 60.0); /* 1 .. 40 */
            double s0 = sqrt(1.0 / (1 - e + e * k * k));
            double mm4 = 3 * s0 * s0 * s0 * s0 * (1 - e + e * k * k * k * k);
            double q3 = (1 - e) * erfc(3 / (s0 * M_SQRT2)) + e * erfc(3 / (k * s0 * M_SQRT2));
            double q4 = (1 - e) * erfc(4 / (s0 * M_SQRT2)) + e * erfc(4 / (k * s0 * M_SQRT2));
            double d1 = log(mm4 / m4), d2 = log((q3 + 1e-9) / (p3 + 1e-9)), d3 = log((q4 + 1e-9) / (p4 + 1e-9));
            double err = d1 * d1 + d2 * d2 + d3 * d3;
            if (err < best) {
                best = err;
                *spikes = e;
                *scale = k;
            }
        }
    }
}

int sp_profile_fit(sp_grad_source *src, int max_iters, double density, int bins, sp_profile *out, char *err,
                   size_t errlen)
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
    float *g = malloc(n * sizeof *g), *g0 = malloc(n * sizeof *g0), *prev0 = malloc(n * sizeof *prev0);
    sp_pair *t0 = malloc(k * sizeof *t0), *t1 = malloc(k * sizeof *t1), *first = malloc(k * sizeof *first);
    int L = pieces_of(src, bins, NULL);
    sp_layer *pieces = calloc((size_t)L, sizeof *pieces);
    if (pieces)
        pieces_of(src, bins, pieces);
    lz = calloc((size_t)L, sizeof *lz);
    double *lnorm = malloc((size_t)I * sizeof *lnorm);
    if (!ss || !g || !g0 || !prev0 || !t0 || !t1 || !first || !lz || !lnorm || !pieces) {
        snprintf(err, errlen, "out of memory fitting a profile of n = %llu", (unsigned long long)n);
        goto out;
    }
    double cos_sum = 0, jr_sum = 0, jl_sum = 0, lag_sum = 0;
    long cos_n = 0, jr_n = 0, jl_n = 0, lag_n = 0;

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
                uint64_t off = pieces[l].offset, sz = pieces[l].size;
                uint64_t z = 0;
                for (uint64_t i = off; i < off + sz; i++)
                    z += g[i] == 0.0f;
                lz[l] += (double)z / (double)sz;
            }
            if (r == 0) {
                if (it > 0 && sp_grad_iter_id(src, it) == sp_grad_iter_id(src, it - 1) + 1) {
                    double ab = 0, aa = 0, bb = 0;
                    for (uint64_t i = 0; i < n; i++) {
                        ab += (double)prev0[i] * g[i];
                        aa += (double)prev0[i] * prev0[i];
                        bb += (double)g[i] * g[i];
                    }
                    if (aa > 0 && bb > 0) {
                        lag_sum += ab / sqrt(aa * bb);
                        lag_n++;
                    }
                }
                memcpy(prev0, g, n * sizeof *g);
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
        uint64_t off = pieces[l].offset, sz = pieces[l].size;
        snprintf(ly->name, sizeof ly->name, "%s", pieces[l].name);
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
    out->mean = lag_n ? lag_sum / lag_n : 0;
    if (out->mean < 0)
        out->mean = 0;
    if (out->mean > 0.9)
        out->mean = 0.9;
    out->common = (cos_n ? cos_sum / cos_n : 0) - out->mean;
    if (out->common < 0)
        out->common = 0;
    if (out->common + out->mean > 0.95)
        out->common = 0.95 - out->mean;
    /* the overall scale: ln RMS less its mean over each run, and its
     * correlation from one iteration to the next */
    double v2 = 0, c2 = 0;
    int vn = 0, cn = 0;
    for (int a = 0; a < I;) {
        int b = a + 1;
        while (b < I && sp_grad_iter_id(src, b) == sp_grad_iter_id(src, b - 1) + 1)
            b++;
        double mu = 0;
        for (int it = a; it < b; it++)
            mu += lnorm[it] / (b - a);
        for (int it = a; it < b; it++) {
            v2 += (lnorm[it] - mu) * (lnorm[it] - mu);
            vn++;
            if (it > a) {
                c2 += (lnorm[it] - mu) * (lnorm[it - 1] - mu);
                cn++;
            }
        }
        a = b;
    }
    out->scale_sd = vn > 1 ? sqrt(v2 / vn) : 0;
    out->scale_corr = cn && v2 > 0 ? (c2 / cn) / (v2 / vn) : 0;
    if (out->scale_sd > 3)
        out->scale_sd = 3;
    if (out->scale_corr < 0)
        out->scale_corr = 0;
    if (out->scale_corr > 0.99)
        out->scale_corr = 0.99;
    /* per-sample noise: a second pass over the standardised values */
    double z4 = 0, z3c = 0, z4c = 0, zn = 0;
    for (int it = 0; it < I; it++) {
        double inv = exp(-lnorm[it]);
        for (int r = 0; r < P; r++) {
            if (src->fill(src, it, r, g, 0, err, errlen) != 0)
                goto out;
            for (uint64_t i = 0; i < n; i++) {
                if (ss[i] <= 0)
                    continue;
                double z = g[i] * inv / sqrt(ss[i] / ((double)I * P)), z2 = z * z;
                z4 += z2 * z2;
                z3c += fabs(z) > 3;
                z4c += fabs(z) > 4;
                zn++;
            }
        }
    }
    fit_spikes(zn ? z4 / zn : 3, zn ? z3c / zn : 0, zn ? z4c / zn : 0, &out->spikes, &out->spike_scale);
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
    free(prev0);
    free(pieces);
    if (rc)
        sp_profile_free(out);
    return rc;
}

/* ---- matching the statistics ---------------------------------------------
 * The moments above start a search: the generator's statistics (analysis/
 * workload_stats.c) on a profile are compared with the target's, and the
 * global knobs (the within-layer spread as a factor on every layer's, the
 * spikes of the noise, the shared and persistent fractions, the overall
 * scale's variation and persistence) move, one at a time by a factor, while
 * the sum of squared log ratios over the statistics falls.  The layers' own
 * medians and zeros stay as fitted. */

typedef struct {
    double tail, spikes, spike_scale, common, mean, scale_sd, scale_corr, refresh;
} knobs_t;

static double lr(double a, double b)
{
    if (!isfinite(a) || !isfinite(b) || a <= 0 || b <= 0)
        return 0;
    double x = log(a / b);
    return x * x;
}

/* the distance between two sets of statistics */
static double distance(const sp_wstats *t, const sp_wstats *g)
{
    double d = lr(g->kurt_layer_median + 3, t->kurt_layer_median + 3) + lr(g->kth_over_median, t->kth_over_median) +
               lr(g->k10_over_kth, t->k10_over_kth) + 2 * lr(g->jaccard_ranks, t->jaccard_ranks) +
               lr(g->cosine_ranks, t->cosine_ranks) + lr(g->cosine_lag1, t->cosine_lag1) +
               lr(g->region_union, t->region_union) + lr(g->drift_settled_mean, t->drift_settled_mean) +
               lr(g->drift_cold_mean, t->drift_cold_mean) + lr(g->kurt_whole + 3, t->kurt_whole + 3);
    for (int i = 0; i < t->nunion && i < g->nunion; i++)
        d += lr(g->union_over_k[i], t->union_over_k[i]);
    for (int i = 0; i < SP_WSTATS_NLAGS; i++) {
        d += lr(g->jaccard_lag[i], t->jaccard_lag[i]);
        d += 0.5 * lr(g->drift_cold[i], t->drift_cold[i]);
    }
    return d;
}

static void apply(const sp_profile *base, const knobs_t *k, sp_profile *out)
{
    for (int l = 0; l < out->nlayers; l++)
        out->layers[l].log10_spread = fmin(3, base->layers[l].log10_spread * k->tail);
    out->spikes = k->spikes;
    out->spike_scale = k->spike_scale;
    out->common = k->common;
    out->mean = k->mean;
    out->scale_sd = k->scale_sd;
    out->scale_corr = k->scale_corr;
    out->refresh = k->refresh;
}

static int evaluate(const sp_profile *p, const sp_wstats_opts *o, int iters, uint64_t seed, sp_wstats *st, char *err,
                    size_t errlen)
{
    sp_grad_source *src = sp_generator_source(p, seed, o->ranks, iters, err, errlen);
    if (!src)
        return -1;
    int rc = sp_wstats_compute(src, o, st, err, errlen);
    src->close(src);
    return rc;
}

int sp_profile_match(const sp_wstats *target, const sp_wstats_opts *o, int iters, uint64_t seed, int rounds,
                     sp_profile *prof, FILE *log, char *err, size_t errlen)
{
    sp_profile base, cand;
    if (sp_profile_copy(&base, prof) != 0 || sp_profile_copy(&cand, prof) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    knobs_t k = {1.0, prof->spikes, prof->spike_scale, prof->common, prof->mean, prof->scale_sd, prof->scale_corr,
                 prof->refresh};
    double *slot[] = {&k.tail, &k.spikes, &k.spike_scale, &k.common, &k.mean, &k.scale_sd, &k.scale_corr, &k.refresh};
    const char *names[] = {"tail", "spikes", "spike_scale", "common", "mean", "scale_sd", "scale_corr", "refresh"};
    double lo[] = {0.2, 0, 1, 0, 0, 0, 0, 0}, hi[] = {5, 0.3, 40, 0.9, 0.9, 2, 0.95, 1e6};
    int nk = (int)(sizeof slot / sizeof slot[0]);
    sp_wstats st;
    int rc = -1;
    apply(&base, &k, &cand);
    if (evaluate(&cand, o, iters, seed, &st, err, errlen) != 0)
        goto out;
    double best = distance(target, &st);
    sp_wstats_free(&st);
    if (log)
        fprintf(log, "match: start %.4f\n", best);
    double step = 1.6;
    for (int round = 0; round < rounds; round++) {
        int moved = 0;
        for (int i = 0; i < nk; i++) {
            for (int dir = -1; dir <= 1; dir += 2) {
                knobs_t trial = k;
                double *v = (double *)((char *)&trial + ((char *)slot[i] - (char *)&k));
                double x = *v;
                /* a factor, or a small step away from 0 */
                double nx = dir > 0 ? (x > 0 ? x * step : (i == 7 ? 50 : 0.01)) : x / step;
                if (i == 6) /* a correlation moves on 1 - corr */
                    nx = dir > 0 ? 1 - (1 - x) / step : 1 - (1 - x) * step;
                if (nx < lo[i])
                    nx = lo[i];
                if (nx > hi[i])
                    nx = hi[i];
                if (nx == x || (trial.common + trial.mean >= 0.95 && (i == 3 || i == 4) && nx > x))
                    continue;
                *v = nx;
                apply(&base, &trial, &cand);
                char e2[300];
                if (sp_profile_check(&cand, e2, sizeof e2) != 0)
                    continue;
                if (evaluate(&cand, o, iters, seed, &st, err, errlen) != 0)
                    goto out;
                double d = distance(target, &st);
                sp_wstats_free(&st);
                if (d < best - 1e-4) {
                    best = d;
                    k = trial;
                    moved = 1;
                    if (log)
                        fprintf(log, "match: round %d, %s -> %.4g: %.4f\n", round, names[i], nx, best);
                    break;
                }
            }
        }
        if (!moved) {
            if (step < 1.1)
                break;
            step = sqrt(step);
        }
    }
    apply(&base, &k, prof);
    rc = 0;
out:
    sp_profile_free(&base);
    sp_profile_free(&cand);
    return rc;
}
