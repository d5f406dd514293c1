/* fit.c - a workload profile fitted to gradients (profile.h: the model).
 *
 * From any gradient source (a recorded trace, or the generator itself):
 *  - overall scale: each iteration's gradients are divided by their RMS over
 *    ranks and entries; ln RMS, less its mean over each run of consecutive
 *    training iterations, gives `scale_sd` (its standard deviation) and
 *    `scale_corr` (its correlation from one iteration to the next);
 *  - a rank's own scale: ln RMS of each rank's gradient less its
 *    iteration's mean over ranks gives `rank_sd` and `rank_corr` the same way;
 *  - per-coordinate scale: sigma_i is the RMS of g[t, r, i] over ranks and
 *    iterations, each rank's gradient divided by its own RMS (rank_inv);
 *    per layer, log10 sigma_i over the non-zero entries gives `log10_scale`
 *    (median) and `log10_spread` fitted on the upper half, (q99 - q50) / 2.326, where the top-k selections live (the
 *    notes on real gradients fit it so).  A layer larger than n / bins is
 *    cut into equal pieces, each fitted alone: large entries need not spread
 *    evenly over a large tensor (an embedding's rows of frequent tokens);
 *  - `zeros`: per layer, the mean share of entries exactly 0;
 *  - `mean`: the mean cosine of a rank's gradients over every pair of
 *    iterations within a run of consecutive training iterations (from the
 *    norm of their unit vectors' sum; ranks 0-3): the persistence that a residual
 *    accumulates over the run.  Consecutive gradients of real training
 *    correlate (cosine 0.01-0.04 on the LSTM trace) and those 5 apart
 *    anti-correlate (-0.01 to -0.05), so over 32 iterations nothing
 *    persists, where the cosine of consecutive ones, fitted before, gave
 *    the generator a direction (0.029) that error feedback piled up for
 *    hundreds of iterations (bench/README.md section 24); `common`: the mean
 *    cosine between two ranks' gradients of an iteration, less `mean`;
 *  - per-sample noise: z = g / (rms sigma_i) standardised; its excess
 *    kurtosis and P(|z| > 3), P(|z| > 4) give `spikes` and `spike_scale` (the
 *    mixture of two normals with those, searched on a grid), and the same
 *    per row of scales the `noise` table (noise_rows below);
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
                pc->rows = src->layers ? src->layers[l].rows : 0; /* the whole tensor's, for layers.c */
                pc->shaped = src->layers ? src->layers[l].shaped : 0;
            }
            count++;
        }
    }
    return count;
}

/* the mixture of two normals (probability e of k times the base deviation,
 * unit variance) closest to the standardised noise's fourth moment m4 and
 * its shares p[j] = P(|z| > levels[j]), on a log grid (least squares of the
 * log ratios) */
static void fit_spikes(double m4, const double *p, const double *levels, int nl, double *spikes, double *scale)
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
            double d = log(mm4 / m4), err = d * d;
            for (int j = 0; j < nl; j++) {
                double q = (1 - e) * erfc(levels[j] / (s0 * M_SQRT2)) + e * erfc(levels[j] / (k * s0 * M_SQRT2));
                d = log((q + 1e-9) / (p[j] + 1e-9));
                err += d * d;
            }
            if (err < best) {
                best = err;
                *spikes = e;
                *scale = k;
            }
        }
    }
}

/* the ranks whose runs of gradients give `mean` (fit_persistence): one
 * rank's estimate was 0.020 on a trace whose 32 ranks average 0.005 */
#define WR 4

/* one fit: the source, the pieces, and the sums of the first pass */
typedef struct {
    sp_grad_source *src;
    uint64_t n, k;
    int I, P, L;
    sp_layer *pieces;   /* [L] */
    double *ss;         /* [n]: sum over ranks and iterations of the normalised g^2 */
    double *lz;         /* [L]: sum of the shares of zeros */
    double *lnorm;      /* [I]: ln RMS of each iteration */
    double *lrank;      /* [I x P]: ln RMS of each rank's gradient in each iteration */
    float *g, *g0; /* the gradient filled, and rank 0's of this iteration */
    sp_pair *t0, *t1, *first; /* top-k of ranks 0 and 1, rank 0's at the first iteration */
    double cos_sum, jr_sum, jl_sum;
    long cos_n, jr_n, jl_n;
    float *wsum;          /* [WR][n]: ranks 0 .. WR-1's gradients over their norms, summed over a run of
                             consecutive iterations */
    int wr, wlen[WR];     /* the ranks summed, and each one's iterations in the run so far */
    double pair_cos, pairs; /* sum of the cosines over the pairs of iterations within runs, and their number */
    int lag_used;
    char *err;
    size_t errlen;
} fit_state;

/* *sum += the cosine of a and b, and (*count)++, unless either is 0 */
static void add_cosine(const float *a, const float *b, uint64_t n, double *sum, long *count)
{
    double ab = 0, aa = 0, bb = 0;
    for (uint64_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    if (aa > 0 && bb > 0) {
        *sum += ab / sqrt(aa * bb);
        (*count)++;
    }
}

/* A run of W consecutive iterations of rank 0 ends: the unit gradients'
 * sum has |sum|^2 = W + the sum of their cosines over the W (W - 1)
 * ordered pairs */
static void close_run(fit_state *f)
{
    for (int r = 0; r < f->wr; r++) {
        float *w = f->wsum + (size_t)r * f->n;
        if (f->wlen[r] >= 2) {
            double w2 = 0;
            for (uint64_t i = 0; i < f->n; i++)
                w2 += (double)w[i] * w[i];
            f->pair_cos += w2 - f->wlen[r];
            f->pairs += (double)f->wlen[r] * (f->wlen[r] - 1);
        }
        memset(w, 0, f->n * sizeof *w);
        f->wlen[r] = 0;
    }
}

/* rank r's gradient g (r < wr) into its run's sum; inv_rms: 1 / its RMS
 * (rank_inv), so that g inv_rms / sqrt(n) is of unit norm */
static void add_to_run(fit_state *f, int r, const float *g, double inv_rms)
{
    if (!(inv_rms > 0))
        return;
    float inv = (float)(inv_rms / sqrt((double)f->n)), *w = f->wsum + (size_t)r * f->n;
    for (uint64_t i = 0; i < f->n; i++)
        w[i] += g[i] * inv;
    f->wlen[r]++;
}

/* rank 0's gradient g at iteration it: its top-k, and the persistence of
 * its first top-k.  0, or -1 with a message */
static int note_rank0(fit_state *f, int it)
{
    const sp_grad_source *src = f->src;
    memcpy(f->g0, f->g, f->n * sizeof *f->g);
    if (sp_topk_exact(f->g, f->n, f->k, f->t0) != f->k) {
        snprintf(f->err, f->errlen, "out of memory");
        return -1;
    }
    /* persistence: rank 0 against its first top-k, at the largest lag */
    if (it == 0)
        memcpy(f->first, f->t0, f->k * sizeof *f->t0);
    else if (sp_grad_iter_id(src, it) - sp_grad_iter_id(src, 0) == it && it <= 31) {
        f->lag_used = it;
        f->jl_sum = jaccard(f->first, f->t0, f->k);
        f->jl_n = 1;
    }
    return 0;
}

/* rank 1's gradient g: cosine and Jaccard with rank 0's.  0, or -1 with a message */
static int note_rank1(fit_state *f)
{
    add_cosine(f->g0, f->g, f->n, &f->cos_sum, &f->cos_n);
    if (sp_topk_exact(f->g, f->n, f->k, f->t1) != f->k) {
        snprintf(f->err, f->errlen, "out of memory");
        return -1;
    }
    f->jr_sum += jaccard(f->t0, f->t1, f->k);
    f->jr_n++;
    return 0;
}

/* 1 / the RMS of rank r's gradient at iteration it (0 for a gradient of
 * zeros).  The per-coordinate scales and the noise are fitted on each rank's
 * gradient over its own RMS: what makes one rank's gradient larger than
 * another's is the rank's own scale (rank_sd), and normalising by the
 * iteration's RMS instead would count it again, as a wider spread of the
 * coordinates' scales and as heavy tails of the noise (the largest rank's
 * entries standing out against the others'). */
static double rank_inv(const fit_state *f, int it, int r)
{
    double l = f->lrank[(size_t)it * f->P + r];
    return l > -600 ? exp(-l) : 0;
}

/* the first pass: per iteration its RMS, then per rank the normalised
 * squares, the zeros per piece, and the cosines and top-k sets of ranks 0
 * and 1.  0, or -1 with a message */
static int first_pass(fit_state *f)
{
    sp_grad_source *src = f->src;
    const uint64_t n = f->n;
    float *g = f->g;
    for (int it = 0; it < f->I; it++) {
        if (!(it > 0 && sp_grad_iter_id(src, it) == sp_grad_iter_id(src, it - 1) + 1))
            close_run(f);
        /* the iteration's RMS first (a second pass normalises) */
        double sq = 0;
        for (int r = 0; r < f->P; r++) {
            if (src->fill(src, it, r, g, 0, f->err, f->errlen) != 0)
                return -1;
            double sr = 0;
            for (uint64_t i = 0; i < n; i++)
                sr += (double)g[i] * g[i];
            sq += sr;
            f->lrank[(size_t)it * f->P + r] = 0.5 * log(sr > 0 ? sr / (double)n : 1e-300);
        }
        double rms = sqrt(sq / ((double)n * f->P));
        f->lnorm[it] = log(rms > 0 ? rms : 1e-300);
        for (int r = 0; r < f->P; r++) {
            if (src->fill(src, it, r, g, 0, f->err, f->errlen) != 0)
                return -1;
            double inv = rank_inv(f, it, r);
            for (uint64_t i = 0; i < n; i++) {
                double x = g[i] * inv;
                f->ss[i] += x * x;
            }
            for (int l = 0; l < f->L; l++) {
                uint64_t off = f->pieces[l].offset, sz = f->pieces[l].size;
                uint64_t z = 0;
                for (uint64_t i = off; i < off + sz; i++)
                    z += g[i] == 0.0f;
                f->lz[l] += (double)z / (double)sz;
            }
            if (r < f->wr)
                add_to_run(f, r, g, inv);
            if ((r == 0 && note_rank0(f, it) != 0) || (r == 1 && note_rank1(f) != 0))
                return -1;
        }
    }
    return 0;
}

/* each piece's zeros, log10_scale and log10_spread.  0, or -1 with a message */
static int fit_layers(const fit_state *f, sp_profile *out)
{
    const double IP = (double)f->I * f->P;
    out->nlayers = f->L;
    out->layers = calloc((size_t)f->L, sizeof *out->layers);
    if (!out->layers) {
        snprintf(f->err, f->errlen, "out of memory");
        return -1;
    }
    for (int l = 0; l < f->L; l++) {
        sp_profile_layer *ly = &out->layers[l];
        uint64_t off = f->pieces[l].offset, sz = f->pieces[l].size;
        snprintf(ly->name, sizeof ly->name, "%s", f->pieces[l].name);
        ly->offset = off;
        ly->size = sz;
        ly->rows = f->pieces[l].rows;
        ly->shaped = f->pieces[l].shaped;
        ly->zeros = f->lz[l] / IP;
        if (ly->zeros >= 1)
            ly->zeros = 0.999;
        double *logs = malloc(sz * sizeof *logs);
        if (!logs) {
            snprintf(f->err, f->errlen, "out of memory");
            return -1;
        }
        size_t m = 0;
        for (uint64_t i = off; i < off + sz; i++)
            if (f->ss[i] > 0)
                logs[m++] = 0.5 * log10(f->ss[i] / IP);
        qsort(logs, m, sizeof *logs, cmp_double);
        double q50 = quantile_sorted(logs, m, 0.5), q99 = quantile_sorted(logs, m, 0.99);
        free(logs);
        ly->log10_scale = m ? q50 : -30;
        ly->log10_spread = m > 1 ? (q99 - q50) / 2.326 : 0;
        if (ly->log10_spread < 0)
            ly->log10_spread = 0;
        if (ly->log10_spread > 3)
            ly->log10_spread = 3;
    }
    return 0;
}

/* the overall scale: the ranks' mean ln RMS less its mean over each run,
 * and its correlation from one iteration to the next; the ranks' own
 * scales (fit_rank_scale, first) leave rank_sd^2 / P of variance in that
 * mean, rank_corr times it of covariance, taken out.  (ln of the RMS over
 * all ranks would add a rank's large scale to the iteration's.) */
static void fit_overall_scale(const fit_state *f, sp_profile *out)
{
    const int I = f->I, P = f->P;
    double *lnorm = malloc((size_t)I * sizeof *lnorm);
    if (!lnorm) {
        out->scale_sd = out->scale_corr = 0;
        return;
    }
    for (int it = 0; it < I; it++) {
        lnorm[it] = 0;
        for (int r = 0; r < P; r++)
            lnorm[it] += f->lrank[(size_t)it * P + r] / P;
    }
    double own = out->rank_sd * out->rank_sd / P;
    double v2 = 0, c2 = 0;
    int vn = 0, cn = 0;
    for (int a = 0; a < I;) {
        int b = a + 1;
        while (b < I && sp_grad_iter_id(f->src, b) == sp_grad_iter_id(f->src, b - 1) + 1)
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
    free(lnorm);
    double var = vn > 1 ? v2 / vn - own : 0, cov = cn ? c2 / cn - out->rank_corr * own : 0;
    out->scale_sd = var > 0 ? sqrt(var) : 0;
    out->scale_corr = cn && var > 0 ? cov / var : 0;
    if (out->scale_sd > 3)
        out->scale_sd = 3;
    if (out->scale_corr < 0)
        out->scale_corr = 0;
    if (out->scale_corr > 0.99)
        out->scale_corr = 0.99;
}

/* each rank's own scale: ln RMS of its gradient less the iteration's mean
 * over ranks; its standard deviation (over P - 1 degrees of freedom an
 * iteration) is `rank_sd`, its correlation from one training iteration to
 * the next `rank_corr` */
static void fit_rank_scale(const fit_state *f, sp_profile *out)
{
    const int I = f->I, P = f->P;
    double v2 = 0, c2 = 0, cv = 0;
    long vn = 0;
    for (int it = 0; it < I && P > 1; it++) {
        const double *l = f->lrank + (size_t)it * P, *lp = it ? f->lrank + (size_t)(it - 1) * P : NULL;
        double mu = 0, mp = 0;
        for (int r = 0; r < P; r++) {
            mu += l[r] / P;
            mp += lp ? lp[r] / P : 0;
        }
        int next = lp && sp_grad_iter_id(f->src, it) == sp_grad_iter_id(f->src, it - 1) + 1;
        for (int r = 0; r < P; r++) {
            v2 += (l[r] - mu) * (l[r] - mu);
            if (next) {
                c2 += (l[r] - mu) * (lp[r] - mp);
                cv += (lp[r] - mp) * (lp[r] - mp);
            }
        }
        vn += P - 1;
    }
    out->rank_sd = vn ? sqrt(v2 / vn) : 0;
    out->rank_corr = cv > 0 ? c2 / cv : 0; /* the regression of a deviation on the last one */
    if (out->rank_sd > 3)
        out->rank_sd = 3;
    if (out->rank_corr < 0)
        out->rank_corr = 0;
    if (out->rank_corr > 0.99)
        out->rank_corr = 0.99;
}

/* The noise's table by scale: rows cut at the quartiles of sigma_i over the
 * coordinates and where the coordinates above hold 10, 20, 30, 45, 60 and 80%
 * of the energy (sum of sigma_i^2), a cut dropped where a row would hold
 * fewer than NOISE_DRAWS draws; each row's mixture fitted to its fourth
 * moment and P(|z| > 1, 2, 3, 4): where a threshold set from the vector's
 * deviation falls, in units of a row's own sigma, runs from about 1 (the
 * largest scales) to 4 (the smallest).  On the eight traces of
 * bench/README.md section 24 (bench/noise_by_scale.py), the generator with
 * one mixture for every coordinate puts 0.52-1.64x the data's count above
 * Gaussian-k's estimate (2.58 deviations of the vector, density 1%), with
 * the table 0.94-1.09x. */
#define NOISE_DRAWS 50000.0
static const double row_levels[] = {1, 2, 3, 4};
static const double row_count_q[] = {0.25, 0.5, 0.75};
static const double row_energy_top[] = {0.1, 0.2, 0.3, 0.45, 0.6, 0.8};

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int noise_rows(fit_state *f, sp_profile *out)
{
    const double IP = (double)f->I * f->P;
    double *l = malloc(f->n * sizeof *l);
    if (!l) {
        snprintf(f->err, f->errlen, "out of memory");
        return -1;
    }
    size_t m = 0; /* l: the non-zero sums of squares, rising (sigma_i^2 IP) */
    double total = 0;
    for (uint64_t i = 0; i < f->n; i++)
        if (f->ss[i] > 0) {
            l[m++] = f->ss[i];
            total += f->ss[i];
        }
    qsort(l, m, sizeof *l, cmp_double);
    /* the candidate cuts, as the index of the first coordinate above each */
    enum { NQ = sizeof row_count_q / sizeof row_count_q[0], NE = sizeof row_energy_top / sizeof row_energy_top[0] };
    size_t cut[NQ + NE];
    int nc = 0;
    for (int q = 0; q < NQ; q++)
        cut[nc++] = (size_t)(row_count_q[q] * (double)m);
    double acc = 0;
    int e = 0;
    for (size_t j = m; j-- > 0 && e < NE;) {
        acc += l[j];
        while (e < NE && acc >= row_energy_top[e] * total)
            cut[nc++] = j, e++;
    }
    qsort(cut, (size_t)nc, sizeof *cut, cmp_size);
    /* kept where both rows it makes hold enough draws and it parts two scales */
    size_t minc = (size_t)ceil(NOISE_DRAWS / IP), last = 0;
    int rows = 0;
    for (int c = 0; c < nc && rows < SP_NOISE_ROWS - 1; c++) {
        size_t j = cut[c];
        if (j < last + minc || j + minc > m || j == 0 || !(l[j - 1] < l[j]))
            continue;
        out->noise[rows++].upto = 0.25 * (log10(l[j - 1] / IP) + log10(l[j] / IP)); /* the logs' midpoint */
        last = j;
    }
    free(l);
    out->nnoise = rows > 0 ? rows + 1 : 0;
    if (rows > 0)
        out->noise[rows].upto = INFINITY;
    return 0;
}

/* per-sample noise: a second pass over the standardised values, by row of
 * the noise's table (one row where there is none).  0, or -1 with a
 * message */
static int fit_noise(fit_state *f, sp_profile *out)
{
    sp_grad_source *src = f->src;
    const double IP = (double)f->I * f->P;
    if (noise_rows(f, out) != 0)
        return -1;
    int R = out->nnoise > 0 ? out->nnoise : 1;
    unsigned char *row = out->nnoise > 0 ? malloc(f->n) : NULL;
    if (out->nnoise > 0 && !row) {
        snprintf(f->err, f->errlen, "out of memory");
        return -1;
    }
    for (uint64_t i = 0; row && i < f->n; i++)
        row[i] = (unsigned char)(f->ss[i] > 0 ? sp_profile_noise_row(out, 0.5 * log10(f->ss[i] / IP)) : 0);
    double rz4[SP_NOISE_ROWS] = {0}, rn[SP_NOISE_ROWS] = {0}, rc[SP_NOISE_ROWS][4] = {{0}};
    for (int it = 0; it < f->I; it++) {
        for (int r = 0; r < f->P; r++) {
            double inv = rank_inv(f, it, r);
            if (inv == 0)
                continue;
            if (src->fill(src, it, r, f->g, 0, f->err, f->errlen) != 0) {
                free(row);
                return -1;
            }
            for (uint64_t i = 0; i < f->n; i++) {
                if (f->ss[i] <= 0)
                    continue;
                double z = f->g[i] * inv / sqrt(f->ss[i] / IP), z2 = z * z, az = fabs(z);
                int b = row ? row[i] : 0;
                rz4[b] += z2 * z2;
                rn[b]++;
                for (int j = 0; j < 4; j++)
                    rc[b][j] += az > row_levels[j];
            }
        }
    }
    free(row);
    double z4 = 0, zn = 0, p34[2] = {0, 0}; /* every coordinate's: the rows' together */
    for (int b = 0; b < R; b++) {
        z4 += rz4[b];
        zn += rn[b];
        p34[0] += rc[b][2];
        p34[1] += rc[b][3];
    }
    for (int j = 0; j < 2 && zn > 0; j++)
        p34[j] /= zn;
    fit_spikes(zn ? z4 / zn : 3, p34, row_levels + 2, 2, &out->spikes, &out->spike_scale);
    for (int b = 0; b < R && out->nnoise > 0; b++) {
        double p[4];
        for (int j = 0; j < 4; j++)
            p[j] = rn[b] ? rc[b][j] / rn[b] : 0;
        fit_spikes(rn[b] ? rz4[b] / rn[b] : 3, p, row_levels, 4, &out->noise[b].spikes, &out->noise[b].spike_scale);
    }
    return 0;
}

/* what persists and what ranks share (cosines), and how often the scale is
 * redrawn (the Jaccard ratio) */
static void fit_persistence(fit_state *f, sp_profile *out)
{
    close_run(f);
    out->mean = f->pairs > 0 ? f->pair_cos / f->pairs : 0;
    if (out->mean < 0)
        out->mean = 0;
    if (out->mean > 0.9)
        out->mean = 0.9;
    out->common = (f->cos_n ? f->cos_sum / f->cos_n : 0) - out->mean;
    if (out->common < 0)
        out->common = 0;
    if (out->common + out->mean > 0.95)
        out->common = 0.95 - out->mean;
    out->keep = 0;
    out->refresh = 0;
    if (f->jl_n && f->jr_n && f->lag_used > 0) {
        double ratio = f->jl_sum / (f->jr_sum / f->jr_n);
        if (ratio < 0.97)
            out->refresh = (double)f->lag_used / (1 - (ratio > 0 ? ratio : 0));
    }
}

int sp_profile_fit(sp_grad_source *src, int max_iters, double density, int bins, sp_profile *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    fit_state f = {.src = src, .n = src->n, .P = src->ranks, .err = err, .errlen = errlen};
    const uint64_t n = f.n;
    f.I = max_iters > 0 && max_iters < src->iters ? max_iters : src->iters;
    f.k = (uint64_t)floor((double)n * density);
    if (f.k < 1 || f.k > n) {
        snprintf(err, errlen, "density %g selects no entry of n = %llu (or more than n)", density,
                 (unsigned long long)n);
        return -1;
    }
    int rc = -1;
    f.ss = calloc(n, sizeof *f.ss);
    f.g = malloc(n * sizeof *f.g);
    f.g0 = malloc(n * sizeof *f.g0);
    f.wr = f.P < WR ? f.P : WR;
    f.wsum = calloc((size_t)f.wr * n, sizeof *f.wsum);
    f.t0 = malloc(f.k * sizeof *f.t0);
    f.t1 = malloc(f.k * sizeof *f.t1);
    f.first = malloc(f.k * sizeof *f.first);
    f.L = pieces_of(src, bins, NULL);
    f.pieces = calloc((size_t)f.L, sizeof *f.pieces);
    if (f.pieces)
        pieces_of(src, bins, f.pieces);
    f.lz = calloc((size_t)f.L, sizeof *f.lz);
    f.lnorm = malloc((size_t)f.I * sizeof *f.lnorm);
    f.lrank = malloc((size_t)f.I * f.P * sizeof *f.lrank);
    if (!f.ss || !f.g || !f.g0 || !f.wsum || !f.t0 || !f.t1 || !f.first || !f.lz || !f.lnorm || !f.lrank ||
        !f.pieces) {
        snprintf(err, errlen, "out of memory fitting a profile of n = %llu", (unsigned long long)n);
        goto out;
    }
    if (first_pass(&f) != 0)
        goto out;
    snprintf(out->name, sizeof out->name, "fitted");
    snprintf(out->source, sizeof out->source,
             "fitted by sparsim profile to %d iteration(s) of %d rank(s), n = %llu (density %g for persistence)", f.I,
             f.P, (unsigned long long)n, density);
    out->n = n;
    if (fit_layers(&f, out) != 0)
        goto out;
    fit_rank_scale(&f, out);
    fit_overall_scale(&f, out);
    if (fit_noise(&f, out) != 0)
        goto out;
    fit_persistence(&f, out);
    rc = sp_profile_check(out, err, errlen);
out:
    free(f.ss);
    free(f.lz);
    free(f.g);
    free(f.g0);
    free(f.t0);
    free(f.t1);
    free(f.first);
    free(f.lnorm);
    free(f.lrank);
    free(f.wsum);
    free(f.pieces);
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
 * medians and zeros stay as fitted, and so does a noise table by scale
 * (the spikes' knobs are then left out). */

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
            if ((i == 1 || i == 2) && prof->nnoise > 0)
                continue; /* the noise's table by scale decides the noise, not spikes and spike_scale */
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
