/* generator.c - exact synthetic gradients (see generator.h and profile.h).
 *
 *   g[t, r, i] = S(t) sigma_i(t) (sqrt(c) Zc[t, i] + sqrt(d) M_{i, e_i(t)} + sqrt(1 - c - d) Z[t, r, i])
 *   Z = base N, or with probability `spikes` spike_scale * base N (unit variance),
 *   the two taken from the profile's noise table at log10 sigma_i(t) where it has one
 *   log10 sigma_i(t) = m_l + s_l (sqrt(keep) A_i + sqrt(1 - keep) B_{i, e_i(t)})
 *   e_i(t) = floor((t + phase_i) / refresh), phase_i uniform in [0, refresh)
 *   ln S(t) = scale_sd A_t, A_t = corr A_{t-1} + sqrt(1 - corr^2) W_t
 *   the whole of rank r's gradient times S_r(t), ln S_r(t) = rank_sd A_{r,t}
 *   by the same recursion with rank_corr and walk steps of its own
 * A, B, M, Zc, Z, W unit normals and phase_i, the zero marks, from a
 * counter-based hash of (seed, stream, indices).  The shared part (sigma,
 * the common term) is computed once per iteration and reused by every rank,
 * incrementally where only some coordinates' scales are redrawn; a rank's own
 * part is one hash and one table lookup per entry.
 */
#include "generator.h"
#include "hash.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- unit normals from random bits ----------------------------------------
 * The inverse normal distribution function, tabulated at 2^14 equal steps
 * of probability and interpolated linearly; the two outermost cells (one
 * chance in 8192) are computed exactly.  Linear interpolation between
 * quantiles keeps the distribution exact up to the interpolation error
 * (below 2e-4 in z, tests/test_units.c). */
#define NT_BITS 14
#define NT (1 << NT_BITS)
static float normal_table[NT + 1];
static int normal_ready;

static void normal_init(void)
{
    if (normal_ready)
        return;
    for (int j = 1; j < NT; j++)
        normal_table[j] = (float)gsl_cdf_ugaussian_Pinv((double)j / NT);
    normal_table[0] = normal_table[1];
    normal_table[NT] = normal_table[NT - 1];
    normal_ready = 1;
}

double sp_normal_from_bits(uint64_t h)
{
    normal_init();
    unsigned j = (unsigned)(h >> (64 - NT_BITS));
    if (j == 0 || j == NT - 1) {
        double u = ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
        return gsl_cdf_ugaussian_Pinv(u);
    }
    float frac = (float)((h >> (64 - NT_BITS - 24)) & 0xffffff) * (1.0f / 16777216.0f);
    return normal_table[j] + frac * (normal_table[j + 1] - normal_table[j]);
}

static inline float fast_normal(uint64_t h)
{
    unsigned j = (unsigned)(h >> (64 - NT_BITS));
    if (__builtin_expect(j == 0 || j == NT - 1, 0))
        return (float)sp_normal_from_bits(h);
    float frac = (float)((h >> (64 - NT_BITS - 24)) & 0xffffff) * (1.0f / 16777216.0f);
    return normal_table[j] + frac * (normal_table[j + 1] - normal_table[j]);
}

struct sp_generator {
    sp_profile p;
    uint64_t seed;
    float *sigma;   /* sigma_i(t) without S(t); 0 for exact zeros */
    float *common;  /* sigma_i(t) (sqrt(c) Zc[t, i] + sqrt(d) M_i(t)): what the ranks share, or NULL */
    int *layer_of;  /* NULL: computed from the profile as needed */
    int cached;     /* iteration the shared arrays hold, or -1 */
    double *walk;   /* ln S(t) / scale_sd for t = 0 .. nwalk-1 */
    int nwalk;
    sp_rank_walk *rank_walk; /* each rank's own scale's walk, where it was last asked (rank_sd > 0) */
    int nrank_walk;
    float own;      /* sqrt(1 - c - d) times the noise's base deviation */
    float spike;    /* a spike's factor over the base */
    uint32_t spike_below; /* low 20 bits of the hash under this: a spike */
    /* the noise's table by scale (p.nnoise > 0): each coordinate's row, and
     * per row the three above */
    unsigned char *row;
    float row_own[SP_NOISE_ROWS], row_spike[SP_NOISE_ROWS];
    uint32_t row_below[SP_NOISE_ROWS];
    uint64_t key_phase, key_zero, key_keep, key_redraw, key_mean; /* the per-coordinate streams */
};

void sp_scale_series(uint64_t seed, double sd, double corr, int n, double *a)
{
    (void)sd;
    double f = sqrt(1 - corr * corr);
    for (int t = 0; t < n; t++)
        a[t] = t == 0 ? sp_walk_step(seed, 0) : corr * a[t - 1] + f * sp_walk_step(seed, t);
}

double sp_rank_scale(uint64_t seed, double sd, double corr, int rank, int iter, sp_rank_walk *w)
{
    if (!(sd > 0))
        return 1.0;
    uint64_t key = sp_stream_key(seed, SP_ST_RANK_SCALE, (uint64_t)rank, 0);
    double f = sqrt(1 - corr * corr);
    if (iter < w->t || w->t < 0) { /* (again) from the start */
        w->t = 0;
        w->a = sp_walk_step(key, 0);
    }
    for (; w->t < iter; w->t++)
        w->a = corr * w->a + f * sp_walk_step(key, w->t + 1);
    return exp(sd * w->a - sd * sd); /* E[S_r^2] = 1: the ranks' mean square is the profile's */
}

sp_rank_walk *sp_rank_walks(sp_rank_walk *w, int *count, int rank)
{
    if (rank < *count)
        return w;
    int nc = rank + 1 > 2 * *count ? rank + 1 : 2 * *count;
    sp_rank_walk *x = realloc(w, (size_t)nc * sizeof *x);
    if (!x)
        return NULL;
    for (int i = *count; i < nc; i++)
        x[i] = (sp_rank_walk){.t = -1, .a = 0};
    *count = nc;
    return x;
}

double sp_generator_scale(sp_generator *g, int iter)
{
    if (iter < 0)
        iter = 0;
    if (iter >= g->nwalk) {
        int nw = iter + 1 > 2 * g->nwalk ? iter + 1 : 2 * g->nwalk;
        double *w = realloc(g->walk, (size_t)nw * sizeof *w);
        if (!w)
            return 1.0;
        sp_scale_series(g->seed, g->p.scale_sd, g->p.scale_corr, nw, w);
        g->walk = w;
        g->nwalk = nw;
    }
    return exp(g->p.scale_sd * g->walk[iter]);
}

/* the epoch of coordinate i at iteration t (its scale is redrawn when it changes) */
static inline int64_t epoch_of(const sp_generator *g, uint64_t i, int t)
{
    if (g->p.refresh <= 0)
        return 0;
    double phase = sp_unit(sp_mix64(g->key_phase + i * SP_GOLD)) * g->p.refresh;
    return (int64_t)floor(((double)t + phase) / g->p.refresh);
}

/* sigma_i at epoch e for coordinate i of layer l */
static inline float sigma_of(const sp_generator *g, const sp_profile_layer *l, uint64_t i, int64_t e)
{
    if (l->zeros > 0 && sp_unit(sp_mix64(g->key_zero + i * SP_GOLD)) < l->zeros)
        return 0.0f;
    double a = fast_normal(sp_mix64(g->key_keep + i * SP_GOLD));
    double x = sqrt(g->p.keep) * a;
    if (g->p.keep < 1 && g->p.refresh > 0)
        x += sqrt(1 - g->p.keep) * fast_normal(sp_mix64(sp_mix64(g->key_redraw + (uint64_t)e) + i * SP_GOLD));
    else if (g->p.keep < 1)
        x = a; /* never redrawn: the whole spread persists */
    return (float)pow(10.0, l->log10_scale + l->log10_spread * x);
}

/* the shared arrays for iteration t: from scratch, or from t - 1 by redrawing
 * only the coordinates whose epoch changed */
static void share(sp_generator *g, int t)
{
    if (g->cached == t)
        return;
    int incremental = g->cached >= 0 && t == g->cached + 1;
    int redraws = g->p.refresh > 0 && g->p.keep < 1;
    for (int l = 0; l < g->p.nlayers && (redraws || !incremental); l++) {
        const sp_profile_layer *ly = &g->p.layers[l];
        for (uint64_t i = ly->offset; i < ly->offset + ly->size; i++) {
            if (incremental) {
                int64_t e = epoch_of(g, i, t);
                if (e == epoch_of(g, i, t - 1))
                    continue;
                g->sigma[i] = sigma_of(g, ly, i, e);
            } else {
                g->sigma[i] = sigma_of(g, ly, i, epoch_of(g, i, t));
            }
            if (g->row)
                g->row[i] = (unsigned char)(g->sigma[i] > 0 ? sp_profile_noise_row(&g->p, log10(g->sigma[i])) : 0);
        }
    }
    if (g->common) {
        float sc = (float)sqrt(g->p.common), sd = (float)sqrt(g->p.mean);
        uint64_t key = sp_stream_key(g->seed, SP_ST_COMMON, (uint64_t)t, 0);
        for (uint64_t i = 0; i < g->p.n; i++) {
            float x = sc > 0 ? sc * fast_normal(sp_mix64(key + i * SP_GOLD)) : 0.0f;
            if (sd > 0) /* the persistent direction, redrawn with the scale */
                x += sd * fast_normal(sp_mix64(sp_mix64(g->key_mean + (uint64_t)epoch_of(g, i, t)) + i * SP_GOLD));
            g->common[i] = g->sigma[i] * x;
        }
    }
    g->cached = t;
}

sp_generator *sp_generator_new(const sp_profile *p, uint64_t seed, char *err, size_t errlen)
{
    normal_init();
    sp_generator *g = calloc(1, sizeof *g);
    if (!g || sp_profile_copy(&g->p, p) != 0) {
        free(g);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->seed = seed;
    g->cached = -1;
    g->key_phase = sp_stream_key(seed, SP_ST_PHASE, 0, 0);
    g->key_zero = sp_stream_key(seed, SP_ST_ZERO, 0, 0);
    g->key_keep = sp_stream_key(seed, SP_ST_KEEP, 0, 0);
    g->key_redraw = sp_stream_key(seed, SP_ST_REDRAW, 0, 0);
    g->key_mean = sp_stream_key(seed, SP_ST_MEAN, 0, 0);
    g->own = (float)(sqrt(1.0 - p->common - p->mean) * sp_profile_noise_base(p));
    g->spike = (float)p->spike_scale;
    g->spike_below = (uint32_t)(p->spikes * (double)(1u << 20));
    for (int b = 0; b < p->nnoise; b++) {
        g->row_own[b] = (float)(sqrt(1.0 - p->common - p->mean) * sp_noise_base(p->noise[b].spikes, p->noise[b].spike_scale));
        g->row_spike[b] = (float)p->noise[b].spike_scale;
        g->row_below[b] = (uint32_t)(p->noise[b].spikes * (double)(1u << 20));
    }
    g->sigma = malloc(p->n * sizeof *g->sigma);
    if (p->nnoise > 0)
        g->row = malloc(p->n);
    if (p->common > 0 || p->mean > 0)
        g->common = malloc(p->n * sizeof *g->common);
    if (!g->sigma || (p->nnoise > 0 && !g->row) || ((p->common > 0 || p->mean > 0) && !g->common)) {
        snprintf(err, errlen, "out of memory for the generator's %llu entries", (unsigned long long)p->n);
        sp_generator_free(g);
        return NULL;
    }
    return g;
}

void sp_generator_free(sp_generator *g)
{
    if (!g)
        return;
    sp_profile_free(&g->p);
    free(g->sigma);
    free(g->row);
    free(g->common);
    free(g->walk);
    free(g->rank_walk);
    free(g);
}

int sp_generator_fill(sp_generator *g, int rank, int iter, float *acc, int add)
{
    share(g, iter);
    double own = 1.0;
    if (g->p.rank_sd > 0) {
        sp_rank_walk *w = sp_rank_walks(g->rank_walk, &g->nrank_walk, rank);
        if (!w)
            return -1;
        g->rank_walk = w;
        own = sp_rank_scale(g->seed, g->p.rank_sd, g->p.rank_corr, rank, iter, &w[rank]);
    }
    float s = (float)(sp_generator_scale(g, iter) * own);
    float a = s * g->own;
    uint64_t key = sp_stream_key(g->seed, SP_ST_RANK, (uint64_t)rank, (uint64_t)iter);
    const float *sig = g->sigma, *com = g->common;
    uint64_t n = g->p.n;
    if (!add)
        memset(acc, 0, n * sizeof *acc);
    float sp = g->spike;
    uint32_t below = g->spike_below;
    /* the low 20 bits choose a spike; the normal uses the high ones */
    if (g->row) { /* the noise by the coordinate's scale */
        for (uint64_t i = 0; i < n; i++) {
            uint64_t h = sp_mix64(key + i * SP_GOLD);
            int b = g->row[i];
            float z = fast_normal(h) * ((uint32_t)(h & 0xfffff) < g->row_below[b] ? g->row_spike[b] : 1.0f);
            acc[i] += (com ? s * com[i] : 0.0f) + s * g->row_own[b] * sig[i] * z;
        }
    } else if (com)
        for (uint64_t i = 0; i < n; i++) {
            uint64_t h = sp_mix64(key + i * SP_GOLD);
            float z = fast_normal(h) * ((uint32_t)(h & 0xfffff) < below ? sp : 1.0f);
            acc[i] += s * com[i] + a * sig[i] * z;
        }
    else
        for (uint64_t i = 0; i < n; i++) {
            uint64_t h = sp_mix64(key + i * SP_GOLD);
            float z = fast_normal(h) * ((uint32_t)(h & 0xfffff) < below ? sp : 1.0f);
            acc[i] += a * sig[i] * z;
        }
    return 0;
}

/* ---- as a gradient source ------------------------------------------------ */

static int source_fill(sp_grad_source *s, int it, int rank, float *out, int add, char *err, size_t errlen)
{
    if (it < 0 || it >= s->iters || rank < 0 || rank >= s->ranks) {
        snprintf(err, errlen, "the generator was asked for iteration %d of rank %d", it, rank);
        return -1;
    }
    return sp_generator_fill(s->impl, rank, it, out, add);
}

static void source_close(sp_grad_source *s)
{
    if (!s)
        return;
    sp_generator_free(s->impl);
    free(s->layers);
    free(s);
}

sp_grad_source *sp_generator_source(const sp_profile *p, uint64_t seed, int ranks, int iters, char *err,
                                    size_t errlen)
{
    sp_grad_source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->impl = sp_generator_new(p, seed, err, errlen);
    s->layers = calloc((size_t)p->nlayers, sizeof *s->layers);
    if (!s->impl || !s->layers) {
        if (s->impl && !s->layers)
            snprintf(err, errlen, "out of memory");
        source_close(s);
        return NULL;
    }
    /* the layer table: pieces a fit cut a layer into ("name[j]") are one
     * layer again, as the gradients it was fitted to had them */
    for (int l = 0; l < p->nlayers; l++) {
        const char *nm = p->layers[l].name;
        size_t base = strcspn(nm, "[");
        sp_layer *prev = s->nlayers ? &s->layers[s->nlayers - 1] : NULL;
        if (prev && nm[base] == '[' && strlen(prev->name) == base && strncmp(prev->name, nm, base) == 0) {
            prev->size += p->layers[l].size;
            continue;
        }
        sp_layer *ly = &s->layers[s->nlayers++];
        snprintf(ly->name, sizeof ly->name, "%.*s", (int)base, nm);
        ly->offset = p->layers[l].offset;
        ly->size = p->layers[l].size;
    }
    s->n = p->n;
    s->ranks = ranks;
    s->iters = iters;
    s->fill = source_fill;
    s->close = source_close;
    return s;
}
