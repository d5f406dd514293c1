/* profile.h - the statistical description of a model's gradients.
 *
 * What decides sparse-allreduce volumes (the notes on real gradients,
 * measured on real data-parallel training) is captured by a few numbers per
 * layer and a few for the whole model:
 *   g[t, r, i] = S(t) sigma_i(t) (sqrt(common) Zc[t, i] + sqrt(mean) M_i(t)
 *                                 + sqrt(1 - common - mean) Z[t, r, i])
 * with Z fresh per rank and iteration, of unit variance: a normal, with
 * probability `spikes` one of `spike_scale` times the others' standard
 * deviation (real per-sample noise has heavy tails: rare large entries that
 * one rank sees alone), Zc a unit normal fresh per iteration
 * and shared by the ranks (their cosine), M_i a per-coordinate direction
 * that persists across iterations and ranks (a gradient's mean cosine with
 * the others of a run of iterations; it makes an unselected residual grow
 * steadily, so a reused threshold drifts), sigma_i a per-coordinate scale that persists and that
 * the ranks share (their top-k sets overlap through it, not through
 * correlated values), with log10 sigma_i normal within each layer (median
 * `log10_scale`, spread `log10_spread`: heavy tails within a layer), a
 * fraction `zeros` of exact zeros, and S(t) an overall scale whose log is a
 * stationary autoregressive sequence (standard deviation `scale_sd`,
 * correlation `scale_corr` from one iteration to the next).  A coordinate's
 * scale and direction are redrawn over `refresh` iterations (each
 * coordinate at its own phase), the scale keeping a share `keep` of its
 * log-variance: how selections persist across iterations.
 * The noise's shape may depend on the coordinate's scale (`noise`, a table
 * over log10 sigma_i of spikes and spike_scale; absent: the one mixture
 * above for every coordinate): in real gradients the coordinates of the
 * largest scales are mostly idle and now and then very large (a
 * transformer's rare tokens), or the smallest ones are (bench/README.md
 * section 24), and which of them holds the spikes decides how many entries
 * pass a threshold set from the vector's deviation (Gaussian-k's estimate).
 * Each rank's whole gradient is also scaled by its own S_r(t): real workers
 * of one iteration differ in gradient size (a few misclassified samples of
 * a small per-worker batch decide a shard's gradient), ln S_r(t) a
 * stationary autoregressive sequence of its own per rank (standard
 * deviation `rank_sd`, correlation `rank_corr` from one iteration to the
 * next); rank_sd = 0, the default, makes the ranks' sizes alike.
 *
 * A profile is read from JSON, written to JSON, built in (the papers' models
 * with their real layer tables), or fitted from gradients (fit.c).
 */
#ifndef SPARSIM_PROFILE_H
#define SPARSIM_PROFILE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    char name[96];
    char kind[32];        /* conv_weight, linear_bias, embedding, ... ("" when unknown) */
    uint64_t offset, size;
    double log10_scale;   /* median of log10 sigma over the layer */
    double log10_spread;  /* standard deviation of log10 sigma within the layer (>= 0) */
    double zeros;         /* fraction of entries that are exactly zero, in [0, 1) */
    /* the tensor this layer is (or is a piece of: "name[j]"), as a matrix
     * of rows x (tensor size / rows); 0 rows: a vector.  Only where the
     * profile was fitted to a trace that gave shapes (shaped), and only
     * while n is the fitted one (sp_profile_scale_to drops it) */
    uint64_t rows;
    int shaped;
} sp_profile_layer;

/* the noise's mixture for the coordinates whose log10 sigma is below upto
 * (and at or above the row before's; the last row: every scale above) */
typedef struct {
    double upto;
    double spikes, spike_scale;
} sp_noise_row;
#define SP_NOISE_ROWS 16

typedef struct sp_profile_s {
    char name[64];
    char source[512];     /* where the numbers come from */
    uint64_t n;
    int nlayers;
    sp_profile_layer *layers; /* cover [0, n) in order */
    double common;        /* variance fraction shared by the ranks, fresh each iteration */
    double mean;          /* variance fraction of a direction that persists (common + mean < 1) */
    double refresh;       /* iterations over which a coordinate's scale is redrawn; 0: never */
    double keep;          /* share of the log-scale variance that survives a redraw, [0, 1] */
    double scale_sd;      /* standard deviation of ln S(t), >= 0 */
    double scale_corr;    /* correlation of ln S(t) with ln S(t - 1), [0, 1) */
    double spikes;        /* probability of a spike in a rank's own noise, [0, 0.5] */
    double spike_scale;   /* a spike's standard deviation over the other draws', >= 1 */
    double rank_sd;       /* standard deviation of ln S_r(t), a rank's own scale, >= 0 */
    double rank_corr;     /* correlation of ln S_r(t) with ln S_r(t - 1), [0, 1) */
    int nnoise;           /* rows of the noise's table by scale (0: spikes and spike_scale for every coordinate) */
    sp_noise_row noise[SP_NOISE_ROWS];
} sp_profile;

/* A rank's own noise: with probability 1 - spikes a normal of standard
 * deviation base, else of spike_scale * base, with unit variance overall. */
static inline double sp_noise_base(double spikes, double spike_scale)
{
    return sqrt(1.0 / (1 - spikes + spikes * spike_scale * spike_scale));
}
static inline double sp_profile_noise_base(const sp_profile *p) { return sp_noise_base(p->spikes, p->spike_scale); }

/* the row of the noise's table for a coordinate of scale 10^log10_sigma
 * (only where nnoise > 0) */
static inline int sp_profile_noise_row(const sp_profile *p, double log10_sigma)
{
    int b = 0;
    while (b < p->nnoise - 1 && log10_sigma >= p->noise[b].upto)
        b++;
    return b;
}

/* The knobs that build the generic profile or override a named one; a
 * negative value (or 0 for layers) leaves the profile's own. */
typedef struct {
    int layers;           /* generic: number of layers */
    double spread;        /* generic: layer medians log-uniform in [1/spread, spread] */
    double tail;          /* log10 spread of scales within every layer */
    double zeros;         /* fraction of exact zeros in every layer */
    double common, mean, refresh, keep, scale_sd, scale_corr, spikes, spike_scale, rank_sd, rank_corr;
    int batch; /* samples per worker: a paper's model takes its workers' own scales (rank_sd, rank_corr) at it
                  (0: the authors'), the generic profile only when it is given */
} sp_profile_knobs;

/* Names of the built-in profiles, NULL-terminated. */
const char *const *sp_profile_builtin_names(void);
int sp_profile_is_builtin(const char *name);

/* A profile by name (built-in) or from a JSON file, scaled to n entries
 * (0: keep the profile's n; a built-in generic profile has none and needs
 * n), with the knobs applied.  0, or -1 with a one-line message naming the
 * field that is wrong. */
int sp_profile_get(const char *name_or_file, uint64_t n, uint64_t seed, const sp_profile_knobs *knobs,
                   sp_profile *out, char *err, size_t errlen);
/* The same from a JSON text (origin names it in messages). */
int sp_profile_parse(const char *text, const char *origin, sp_profile *out, char *err, size_t errlen);
int sp_profile_write(const sp_profile *p, FILE *f);
void sp_profile_free(sp_profile *p);
int sp_profile_copy(sp_profile *dst, const sp_profile *src);
/* The entries lo .. hi-1 of src as a profile of their own (its layers
 * clipped to them, offsets from lo; the rest as src's).  0, or -1 (an empty
 * or outside range, no memory) with dst zeroed. */
int sp_profile_slice(sp_profile *dst, const sp_profile *src, uint64_t lo, uint64_t hi);

/* Layer sizes scaled so that they sum to n (each at least 1 when n allows). */
int sp_profile_scale_to(sp_profile *p, uint64_t n, char *err, size_t errlen);

/* Checks every field; 0, or -1 with a message naming the field. */
int sp_profile_check(const sp_profile *p, char *err, size_t errlen);

/* The layer holding index i (binary search). */
int sp_profile_layer_of(const sp_profile *p, uint64_t i);

#endif
