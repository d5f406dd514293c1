/* profile.h - the statistical description of a model's gradients.
 *
 * What decides sparse-allreduce volumes (../shared notes on real gradients,
 * measured on real data-parallel training) is captured by a few numbers per
 * layer and a few for the whole model:
 *   g[t, r, i] = S(t) * sigma_i(t) * (sqrt(common) * Zc[t, i] + sqrt(1 - common) * Z[t, r, i])
 * with Z, Zc fresh unit normals (per rank and iteration, and shared by the
 * ranks), sigma_i a per-coordinate scale that persists (ranks share it:
 * their top-k sets overlap through it, not through correlated values), with
 * log10 sigma_i normal within each layer (median `log10_scale`, spread
 * `log10_spread`: heavy tails within a layer), a fraction `zeros` of exact
 * zeros, and S(t) an overall scale that drifts (log S a random walk with
 * steps of `drift`).  A coordinate's scale is redrawn over `refresh`
 * iterations (each coordinate at its own phase), keeping a share `keep` of
 * its log-scale variance: how selections persist across iterations.
 *
 * A profile is read from JSON, written to JSON, built in (the papers' models
 * with their real layer tables), or fitted from gradients (fit.c).
 */
#ifndef SPARSIM_PROFILE_H
#define SPARSIM_PROFILE_H

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
} sp_profile_layer;

typedef struct {
    char name[64];
    char source[512];     /* where the numbers come from */
    uint64_t n;
    int nlayers;
    sp_profile_layer *layers; /* cover [0, n) in order */
    double common;        /* variance fraction shared by the ranks, [0, 1) */
    double refresh;       /* iterations over which a coordinate's scale is redrawn; 0: never */
    double keep;          /* share of the log-scale variance that survives a redraw, [0, 1] */
    double drift;         /* standard deviation of the per-iteration step of ln S(t), >= 0 */
} sp_profile;

/* The knobs that build the generic profile or override a named one; a
 * negative value (or 0 for layers) leaves the profile's own. */
typedef struct {
    int layers;           /* generic: number of layers */
    double spread;        /* generic: layer medians log-uniform in [1/spread, spread] */
    double tail;          /* log10 spread of scales within every layer */
    double zeros;         /* fraction of exact zeros in every layer */
    double common, refresh, keep, drift;
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

/* Layer sizes scaled so that they sum to n (each at least 1 when n allows). */
int sp_profile_scale_to(sp_profile *p, uint64_t n, char *err, size_t errlen);

/* Checks every field; 0, or -1 with a message naming the field. */
int sp_profile_check(const sp_profile *p, char *err, size_t errlen);

/* The layer holding index i (binary search). */
int sp_profile_layer_of(const sp_profile *p, uint64_t i);

#endif
