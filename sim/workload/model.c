/* model.c - a rank's accumulated gradient as a statistical model.
 *
 * The same process as the generator (profile.h), described by populations
 * instead of vectors, so that nothing is O(n):
 *  - Scale classes: log10 sigma on a grid of NC points covering every
 *    layer's distribution; layer l holds n[l][s] non-zero entries of class s
 *    (its normal density of log10 sigma integrated over the class's cell).
 *    Within a layer, entries of a class are spread uniformly over its indices:
 *    where large entries sit is decided by the layers (the notes on real
 *    gradients find region imbalance explained by per-layer counts alone).
 *  - Directions: a coordinate's persistent direction M (profile "mean") is
 *    taken at a few Gauss-Hermite nodes of |M|; signs are measured along M.
 *  - Residuals: error feedback leaves an entry in the residual until it is
 *    consumed.  For each class and direction node the model keeps the
 *    distribution of the signed residual on a log-spaced grid, with a point
 *    mass at 0.  An iteration adds a gradient of mean gamma sqrt(mean) |M| and
 *    the rest normal (the common part) plus the rank's own noise, a mixture
 *    of two normals (profile "spikes"), gamma = sigma_s S(t): acc =
 *    residual + g.  Entries whose |acc| passes the ranks' threshold are
 *    consumed (every selected entry, or those whose reduced value passes the
 *    global threshold, or all in a dense iteration); the others keep acc.
 *    This Markov chain is exact for one coordinate and one rank: it keeps the
 *    truncation a threshold imposes on what stays behind, and the steady
 *    growth of residuals along a persistent direction that makes a reused
 *    threshold drift.  The ranks of a process share it (they are
 *    exchangeable); it moves on once per iteration with their mean threshold.
 *    Directions are redrawn at the profile's refresh rate (the residual stays).
 *  - Across ranks: given the direction and the iteration's common component
 *    z (profile "common", Gauss-Hermite), the ranks' residuals and own noise
 *    are independent, so each rank selects with p and J ~ Binomial(P, p)
 *    ranks select an entry; the union is 1 - (1 - p)^P averaged over both; a
 *    reduced value is the selected value itself for J = 1, or, for J >= 2,
 *    normal with J times the selected values' mean and variance.
 *  - What a rank sees: counts are drawn around the population's expectation
 *    with one normal deviate per (rank, iteration), so several thresholds of
 *    one rank give ordered counts; where the entries lie is a multinomial draw
 *    over layers, then over the ranges that cut a layer.
 *  - A rank's own scale S_r(t) (profile rank_sd, rank_corr): one rank's
 *    counts, k-th value, spread and selection are the population's at its
 *    threshold over the part of S_r that persists, with this iteration's
 *    gradient scaled by the rest (rank_view below); the reduced values
 *    across ranks are a mixture over the ranks' whole scales (rank_mix).
 * Threshold-dependent quantities are tabulated per iteration in 1% cells of
 * the threshold, computed when first asked for, and interpolated.
 */
#include "model.h"
#include "generator.h"
#include "hash.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 64          /* scale classes */
#define NG 64          /* residual grid bins on each side of 0 */
#define NS (2 * NG + 1) /* signed residual points: NG negative, 0, NG positive */
#define NM_MAX 4       /* nodes of |M| */
#define NZ_MAX 6       /* nodes of the common component */
#define NCELL 1024     /* threshold cells kept per iteration, of the population and of the ranks' buckets */
#define CELL_PROBE 16  /* slots a cell may take, from its hash on */
#define CELL 0.01      /* a cell spans 1% of threshold */
#define RG_LO 0.02     /* residual grid: [RG_LO, RG_HI] x sigma_s */
#define RG_HI 4000.0
#define STRATA 16
#define TINY 1e-14
#define NCOMP (2 * SP_NOISE_ROWS) /* components of the rank's own noise: two per row of the noise's table */

/* ---- numerics ------------------------------------------------------------- */

static double strata[STRATA];
static double rg_edge[NG + 1], rg_mid[NG]; /* the residual grid (one side) in units of sigma_s */
static double hz_x[2 * NM_MAX], hz_w[2 * NM_MAX]; /* Gauss-Hermite nodes for a unit normal */
static double sv[NS];                               /* signed residual value of point j, units of sigma_s */

/* a unit normal's expectation at n Gauss-Hermite nodes (n even) */
static void gauss_hermite(int n, double *x, double *w)
{
    gsl_integration_fixed_workspace *ws = gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, (size_t)n, 0,
                                                                        0.5, 0, 0);
    if (!ws) {
        for (int i = 0; i < n; i++) {
            x[i] = 0;
            w[i] = 1.0 / n;
        }
        return;
    }
    const double *nx = gsl_integration_fixed_nodes(ws), *nw = gsl_integration_fixed_weights(ws);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += nw[i];
    for (int i = 0; i < n; i++) {
        x[i] = nx[i];
        w[i] = nw[i] / sum;
    }
    gsl_integration_fixed_free(ws);
}

static void phi_table_init(void);

static void tables_init(void)
{
    if (strata[STRATA - 1] > 0)
        return;
    for (int i = 0; i < STRATA; i++)
        strata[i] = gsl_cdf_ugaussian_Pinv((i + 0.5) / STRATA);
    double r = log(RG_HI / RG_LO) / NG;
    for (int j = 0; j <= NG; j++)
        rg_edge[j] = RG_LO * exp(r * j);
    rg_edge[0] = 0;
    for (int j = 0; j < NG; j++)
        rg_mid[j] = j == 0 ? 0.5 * rg_edge[1] : sqrt(rg_edge[j] * rg_edge[j + 1]);
    for (int b = 0; b < NG; b++) {
        sv[NG + 1 + b] = rg_mid[b];
        sv[NG - 1 - b] = -rg_mid[b];
    }
    sv[NG] = 0;
    gauss_hermite(2 * NM_MAX, hz_x, hz_w);
    phi_table_init();
}

static inline double Q(double x) { return 0.5 * erfc(x * M_SQRT1_2); }
static inline double Phi(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline double phi(double x) { return exp(-0.5 * x * x) * 0.3989422804014327; }

/* Phi from a table, for the residual's step (most of a model run's time
 * went to erfc): cubic Hermite interpolation between points 1/PT_RES apart,
 * with the exact derivative phi at each; absolute error below 1e-10 (the
 * fourth derivative of Phi is below 1.2, h^4/384 x 1.2 at h = 1/64), and
 * exactly 0 or 1 beyond |z| = PT_MAX where Phi is within 1e-23 of them. */
#define PT_MAX 10
#define PT_RES 64
#define PT_N (2 * PT_MAX * PT_RES + 1)
static double pt_val[PT_N], pt_der[PT_N];

static void phi_table_init(void)
{
    for (int i = 0; i < PT_N; i++) {
        double z = -PT_MAX + (double)i / PT_RES;
        pt_val[i] = Phi(z);
        pt_der[i] = phi(z) / PT_RES; /* d Phi / d u, u = z * PT_RES */
    }
}

static inline double Phi_t(double z)
{
    if (!(z > -PT_MAX)) /* NaN as well */
        return z > 0 ? 1 : 0;
    if (z >= PT_MAX)
        return 1;
    double u = (z + PT_MAX) * PT_RES;
    int i = (int)u;
    if (i >= PT_N - 1)
        return 1;
    double f = u - i, f2 = f * f, f3 = f2 * f;
    return (2 * f3 - 3 * f2 + 1) * pt_val[i] + (f3 - 2 * f2 + f) * pt_der[i] + (-2 * f3 + 3 * f2) * pt_val[i + 1] +
           (f3 - f2) * pt_der[i + 1];
}
static inline double Q_t(double z) { return Phi_t(-z); }

/* phi from the same table: cubic Hermite with phi' = -z phi */
static inline double phi_t(double z)
{
    if (!(z > -PT_MAX) || z >= PT_MAX)
        return 0;
    double u = (z + PT_MAX) * PT_RES;
    int i = (int)u;
    if (i >= PT_N - 1)
        return 0;
    double f = u - i, f2 = f * f, f3 = f2 * f, z0 = -PT_MAX + (double)i / PT_RES, z1 = z0 + 1.0 / PT_RES;
    double p0 = pt_der[i] * PT_RES, p1 = pt_der[i + 1] * PT_RES;
    return (2 * f3 - 3 * f2 + 1) * p0 + (f3 - 2 * f2 + f) * (-z0 * p0 / PT_RES) + (-2 * f3 + 3 * f2) * p1 +
           (f3 - f2) * (-z1 * p1 / PT_RES);
}

/* a Binomial(n, p) draw from 64 random bits: inverse distribution function
 * where the variance is small, a rounded normal otherwise */
static uint64_t binom(uint64_t n, double p, uint64_t h)
{
    if (n == 0 || p <= 0)
        return 0;
    if (p >= 1)
        return n;
    double mean = (double)n * p, var = mean * (1 - p);
    if (var > 16) {
        double x = floor(mean + sqrt(var) * sp_normal_from_bits(h) + 0.5);
        return x < 0 ? 0 : x > (double)n ? n : (uint64_t)x;
    }
    if (p > 0.5)
        return n - binom(n, 1 - p, h);
    double u = sp_unit(h), pmf = exp((double)n * log1p(-p)), cum = pmf, r = p / (1 - p);
    uint64_t k = 0;
    while (cum < u && k < n) {
        pmf *= (double)(n - k) / (double)(k + 1) * r;
        k++;
        cum += pmf;
        if (pmf < 1e-300 && (double)k > mean)
            break;
    }
    return k;
}

/* a count with mean `mean` out of `cap`, moved by z standard deviations */
static uint64_t draw_count(double mean, double cap, double z)
{
    if (mean <= 0)
        return 0;
    double var = mean * (1 - (cap > 0 ? mean / cap : 0));
    double x = floor(mean + z * sqrt(var > 0 ? var : 0) + 0.5);
    if (x < 0)
        x = 0;
    if (x > cap)
        x = cap;
    return (uint64_t)x;
}

/* ---- the model ------------------------------------------------------------ */

/* what a threshold cell holds, per class: the tail P(|acc| > t); and given
 * each direction node m and common value z the selection probability and the
 * selected value's mean and variance (signs along M) */
#define NXCACHE 16
struct rplan;
typedef struct {
    int64_t cell;
    int gb;         /* the rank view's bucket it was computed in (0: the population's) */
    unsigned epoch; /* it holds a cell of the iteration whose epoch this is */
    int have_z;     /* 0: the tails alone; 1: p too; 2: p, m1 and v1 (cell_z) */
    double tail[NC];
    double p[NC][NM_MAX][NZ_MAX], m1[NC][NM_MAX][NZ_MAX], v1[NC][NM_MAX][NZ_MAX];
    /* reduced_class at a few x (owners share the global threshold) */
    double xs[NXCACHE], xf[NXCACHE][NC];
    int nx, xnext;
    /* what reduced_class does the same for every x >= 0 (plan_build); kept
     * with the slot, valid while have_plan */
    int have_plan;
    struct rplan *plan;
} cell_t;

/* sum_tail of one value (j = 1) needs no cell but its p and t: the terms of
 * class s, node k and common value q, kept for the iteration, and the
 * numerator at the last x asked (the two cells around a threshold ask for
 * the same x one after the other) */
typedef struct {
    double w, mm, sd, xz; /* xz: from x >= xz on both Q_t are exactly 0 (zero_from) */
} tterm;
typedef struct {
    int built, at, n, have_last;
    double x_last, num_last;
} tone;

/* the tails of one threshold cell as one rank sees them (rank_view) */
#define NRCELL 4096
#define GB_STEP 0.05 /* a bucket of the fresh gradient's factor spans 5% of it */
#define NMIX 16     /* groups of ranks by whole scale (rank_mix) */
#define GKCACHE 4
#define NRET 121      /* the global step's per-rank retention, on ln E in [RET_LO, RET_LO + 12] */
#define RET_LO (-8.0)
#define RET_STEP 0.1
typedef struct {
    int t; /* the iteration (-1: empty) */
    uint64_t K;
    double thr, val;
} gk_entry;
typedef struct {
    int64_t cell;
    int gb; /* 0: the slot is empty (bucket 0 is the population's own cells) */
    double tail[NC];
} rcell_t;

/* What step() spreads a source bin over: acc ~ N(x, sd^2) with x = sig (sv[j]
 * + mu'), sd = sig sd', the bins' edges sig rg_edge: sig cancels, so one
 * table per (direction node, component, source bin) serves every class.
 * Filled as asked within one step (done). */
typedef struct {
    double mass[NM_MAX][NCOMP][NS][NS];
    short lo[NM_MAX][NCOMP][NS], hi[NM_MAX][NCOMP][NS];
    unsigned char done[NM_MAX][NCOMP][NS];
} step_masses;

struct sp_model {
    sp_model_ablation ablation;
    sp_profile p;
    sp_rank_walk *rank_walk; /* each rank's own scale's walk (rank_sd > 0) */
    int nrank_walk;
    uint64_t seed;
    int P, settle;
    double density;
    double sigma[NC];
    int L;
    double *nls;     /* [l * NC + s]: non-zero entries of class s in layer l */
    double *nz;      /* [l]: non-zero entries of layer l */
    double Ns[NC];
    double nz_total;
    int nm, nzn;                       /* direction and common nodes in use */
    int ncomp;                         /* components of a rank's own noise */
    double comp_f[NCOMP];              /* their deviations (the base included) */
    double comp_w[NC][NCOMP];          /* their weights in each class (the noise's table by scale) */
    double m_x[NM_MAX], m_w[NM_MAX];   /* |M| nodes and weights */
    double z_x[NZ_MAX], z_w[NZ_MAX];   /* common-component nodes and weights */
    double psi[NC][NM_MAX][NS];        /* signed residual distribution per class and node */
    int state_t;                       /* the run iteration psi is the state of (before its gradient) */
    double gamma_scale;                /* S(t) of that iteration */
    double *walk;                      /* ln S(t) / scale_sd per gradient iteration */
    int nwalk;
    /* the rules the ranks consumed with in state_t */
    double sum_thr, sum_thr_global;
    int n_local, n_global, n_dense;
    double last_thr, last_thr_global; /* the previous iteration's rule (for skipped ones) */
    int last_mode;                    /* 0 none, 1 local, 2 global, 3 dense */
    double last_count;                /* the expected local count the previous rule selected */
    double k;                         /* floor(n * density) */
    int warmup;                       /* run iterations below it are dense (skipped ones too) */
    cell_t **cells;                   /* NCELL slots, each allocated when first used, for state_t */
    unsigned cell_epoch;              /* a slot holds a cell of state_t when its epoch is this */
    const cell_t *cell_last;          /* the cell cell_get returned last: not to be taken over next */
    cell_t *spare[2];                 /* cells for when no slot can be had (out of memory) */
    /* one rank's view (rank_view): the bucket of its fresh gradient's factor
     * (0: the population's), the population's S(t) while it is on, and the
     * tails of the buckets asked for in state_t */
    int gb;
    double gamma_base;
    rcell_t *rcells; /* NRCELL, open addressing on (cell, bucket) */
    double sum_count, sum_ratio_global; /* ranks of their own scale: counts taken, global over local thresholds */
    int n_count;
    double *share;           /* [t]: the residual's share of the accumulated energy (rank_view) */
    step_masses *sm;         /* step's bin masses, one table for every class */
    int nshare, capshare;
    double *ret; /* [g * NRET + i]: a rank's residual energy kept, over the population's, at whole scale ln E = RET_LO + i RET_STEP */
    double last_y_nat;
    struct rank_view *views; /* per rank: its view at views[r].iter */
    int nviews;
    /* the ranks' whole scales in groups, for questions about them together
     * (rank_mix) */
    int mix_t, nmix;
    double mix_sh, mix_E[NMIX], mix_w[NMIX];
    double *mix_all; /* [P]: scratch */
    gk_entry gk[GKCACHE]; /* the last global k-th values answered */
    int gk_next;
    /* sum_tail's terms of one value (tone): this iteration's, at one_gamma */
    tone one[NC][NM_MAX][NZ_MAX];
    tterm *one_terms;
    int n_one_terms, cap_one_terms;
    double one_gamma;
    int one_valid;
};

static double scale_at(sp_model *m, int g)
{
    if (g < 0)
        g = 0;
    if (g >= m->nwalk) {
        int nw = g + 1 > 2 * m->nwalk ? g + 1 : 2 * m->nwalk;
        double *w = realloc(m->walk, (size_t)nw * sizeof *w);
        if (!w)
            return 1.0;
        sp_scale_series(m->seed, m->p.scale_sd, m->p.scale_corr, nw, w);
        m->walk = w;
        m->nwalk = nw;
    }
    return exp(m->p.scale_sd * m->walk[g]);
}

/* the per-rank gradient of class s at node k: mean (along M); and, for noise
 * component u, the standard deviation of what is not the direction (the
 * common part and the rank's own), or of the rank's own alone */
static inline double grad_mean(const sp_model *m, int s, int k)
{
    return m->sigma[s] * m->gamma_scale * sqrt(m->p.mean) * m->m_x[k];
}
/* a gradient entry's variance over (sigma gamma)^2 given component u */
static inline double grad_var1(const sp_model *m, int u)
{
    return m->p.common + (1 - m->p.common - m->p.mean) * m->comp_f[u] * m->comp_f[u];
}
static inline double grad_sd(const sp_model *m, int s, int u)
{
    return m->sigma[s] * m->gamma_scale * sqrt(grad_var1(m, u));
}
static inline double own_sd(const sp_model *m, int s, int u)
{
    return m->sigma[s] * m->gamma_scale * sqrt(1 - m->p.common - m->p.mean) * m->comp_f[u];
}

/* ---- threshold cells -------------------------------------------------------- */

static void tail_fill(const sp_model *m, double t, double *out)
{
    for (int s = 0; s < NC; s++) {
        double tail = 0;
        if (m->Ns[s] > 0)
            for (int u = 0; u < m->ncomp; u++) {
                if (m->comp_w[s][u] <= 0)
                    continue;
                double sd = grad_sd(m, s, u);
                for (int k = 0; k < m->nm; k++) {
                    double mu = grad_mean(m, s, k), tk = 0;
                    for (int j = 0; j < NS; j++) {
                        double w = m->psi[s][k][j];
                        if (w <= TINY)
                            continue;
                        double mm = m->sigma[s] * sv[j] + mu;
                        tk += w * (Q_t((t - mm) / sd) + Q_t((t + mm) / sd));
                    }
                    tail += m->comp_w[s][u] * m->m_w[k] * tk;
                }
            }
        out[s] = tail;
    }
}

/* the tails of cell ci in the bucket of the rank view that is on */
static const double *rcell_get(sp_model *m, int64_t ci)
{
    uint64_t h = ((uint64_t)ci * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(int64_t)m->gb * 0xC2B2AE3D27D4EB4Full);
    rcell_t *slot = NULL;
    for (int i = 0; i < 8; i++) {
        rcell_t *r = &m->rcells[(h + (uint64_t)i) % NRCELL];
        if (r->gb == m->gb && r->cell == ci)
            return r->tail;
        if (!slot && r->gb == 0)
            slot = r;
    }
    if (!slot) /* the neighbourhood is full: take the first slot over */
        slot = &m->rcells[h % NRCELL];
    slot->cell = ci;
    slot->gb = m->gb;
    tail_fill(m, exp(CELL * (double)ci), slot->tail);
    return slot->tail;
}

/* a cell's tails: in a rank's bucket those its own tails keep (rcell_get:
 * the same values, computed once for both) */
static void cell_tail(sp_model *m, cell_t *c, double t)
{
    if (m->gb != 0 && m->rcells)
        memcpy(c->tail, rcell_get(m, c->cell), sizeof c->tail);
    else
        tail_fill(m, t, c->tail);
}

/* given node k and common value z: acc = r + gamma (sqrt(mean) m + sqrt(c) z)
 * + own, own ~ N(0, gamma^2 (1 - c - mean)); the chance that |acc| passes t,
 * and with `moments` the first two moments above it (e1o, e2o).  p is summed
 * by the same operations either way: a union count asks for it alone
 * (reduced_class with x < 0), and skips the densities. */
static inline void above_sum(const sp_model *m, int s, int k, int q, double t, int moments, double *po, double *e1o,
                             double *e2o)
{
    double p = 0, e1 = 0, e2 = 0;
    double mu = m->sigma[s] * m->gamma_scale * (sqrt(m->p.mean) * m->m_x[k] + sqrt(m->p.common) * m->z_x[q]);
    for (int u = 0; u < m->ncomp; u++) {
        if (m->comp_w[s][u] <= 0)
            continue;
        double sd = own_sd(m, s, u), wu = m->comp_w[s][u];
        if (sd <= 0)
            sd = 1e-300;
        for (int j = 0; j < NS; j++) {
            double w = m->psi[s][k][j] * wu;
            if (w <= TINY)
                continue;
            double mm = m->sigma[s] * sv[j] + mu;
            double al = (t - mm) / sd, be = (t + mm) / sd;
            double qa = Q_t(al), qb = Q_t(be);
            if (qa + qb < 1e-300)
                continue;
            p += w * (qa + qb);
            if (!moments)
                continue;
            double pa = phi_t(al), pb = phi_t(be);
            e1 += w * ((mm * qa + sd * pa) - (-mm * qb + sd * pb));
            e2 += w * ((mm * mm + sd * sd) * (qa + qb) + sd * (t + mm) * pa + sd * (t - mm) * pb);
        }
    }
    *po = p;
    if (moments) {
        *e1o = e1;
        *e2o = e2;
    }
}

/* the accumulated energy above t, over all entries (the state before its
 * step) */
static double energy_above(const sp_model *m, double t)
{
    double e = 0;
    for (int s = 0; s < NC; s++) {
        if (m->Ns[s] <= 0)
            continue;
        double es = 0;
        for (int k = 0; k < m->nm; k++)
            for (int q = 0; q < m->nzn; q++) {
                double p, e1, e2;
                above_sum(m, s, k, q, t, 1, &p, &e1, &e2);
                es += m->m_w[k] * m->z_w[q] * e2;
            }
        e += m->Ns[s] * es;
    }
    return e;
}

/* a cell's selection probabilities (level 1: what a union count reads),
 * and with level 2 the selected values' means and variances too */
static void cell_z(const sp_model *m, cell_t *c, double t, int level)
{
    int moments = level >= 2;
    for (int s = 0; s < NC; s++) {
        for (int k = 0; k < m->nm; k++)
            for (int q = 0; q < m->nzn; q++) {
                double p = 0, e1 = 0, e2 = 0;
                if (m->Ns[s] > 0 && c->tail[s] > 1e-13)
                    above_sum(m, s, k, q, t, moments, &p, &e1, &e2);
                c->p[s][k][q] = p;
                if (!moments)
                    continue;
                c->m1[s][k][q] = p > 0 ? e1 / p : 0;
                double v = p > 0 ? e2 / p - c->m1[s][k][q] * c->m1[s][k][q] : 0;
                c->v1[s][k][q] = v > 0 ? v : 0;
            }
    }
    c->have_z = moments ? 2 : 1;
}

/* The cell of threshold cell index ci in the bucket of the rank view that
 * is on (m->gb), computed when first asked for.  What a cell holds depends on
 * the fresh gradient's scale, which a rank's view moves (rank_on), so the
 * bucket is part of its key: a cell a rank asked for is not the
 * population's.  An iteration asks for a few hundred (427 for Ok-Topk at
 * P = 1024 with BERT's profile); a slot is taken over only when every slot
 * of its probe window holds one, and never the cell returned last (the lower
 * of cells_around's two stays while the upper is got).  need_z: what it
 * must hold besides the tails, as have_z counts. */
static cell_t *cell_get(sp_model *m, int64_t ci, int need_z)
{
    uint64_t h = ((uint64_t)ci * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(int64_t)m->gb * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    cell_t *c = NULL;
    int free_at = -1, victim = -1;
    for (int i = 0; i < CELL_PROBE; i++) {
        int at = (int)((h + (uint64_t)i) % NCELL);
        cell_t *r = m->cells[at];
        if (r && r->epoch == m->cell_epoch) {
            if (r->cell == ci && r->gb == m->gb) {
                c = r;
                break;
            }
            if (victim < 0 && r != m->cell_last)
                victim = at;
        } else if (free_at < 0) {
            free_at = at;
        }
    }
    double t = !c || need_z > c->have_z ? exp(CELL * (double)ci) : 0; /* what a computation needs */
    if (!c) {
        int at = free_at >= 0 ? free_at : victim;
        if (!m->cells[at] && !(m->cells[at] = calloc(1, sizeof(cell_t))))
            at = victim; /* out of memory: take one over */
        /* or, with none to take over, one of the two kept aside (found by
         * no lookup: computed again whenever asked for) */
        c = at >= 0 ? m->cells[at] : m->spare[m->cell_last == m->spare[0]];
        c->cell = ci;
        c->gb = m->gb;
        c->epoch = m->cell_epoch;
        c->have_z = 0;
        c->nx = c->xnext = 0;
        c->have_plan = 0;
        cell_tail(m, c, t);
    }
    if (need_z > c->have_z)
        cell_z(m, c, t, need_z);
    m->cell_last = c;
    return c;
}

/* the two cells around t and the weight of the upper one */
static void cells_around(sp_model *m, double t, int need_z, cell_t **lo, cell_t **hi, double *f)
{
    double x = log(t > 1e-300 ? t : 1e-300) / CELL;
    int64_t ci = (int64_t)floor(x);
    *f = x - (double)ci;
    *lo = cell_get(m, ci, need_z);
    *hi = cell_get(m, ci + 1, need_z); /* never takes over *lo (cell_last) */
}

/* every class's P(|acc| > t), interpolated */
static void tails_at(sp_model *m, double t, double *tail)
{
    cell_t *a, *b;
    double f;
    if (t <= 0) {
        for (int s = 0; s < NC; s++)
            tail[s] = 1;
        return;
    }
    if (m->gb != 0 && m->rcells) {
        double x = log(t > 1e-300 ? t : 1e-300) / CELL;
        int64_t ci = (int64_t)floor(x);
        f = x - (double)ci;
        const double *lo = rcell_get(m, ci), *hi = rcell_get(m, ci + 1);
        for (int s = 0; s < NC; s++)
            tail[s] = (1 - f) * lo[s] + f * hi[s];
        return;
    }
    cells_around(m, t, 0, &a, &b, &f);
    for (int s = 0; s < NC; s++)
        tail[s] = (1 - f) * a->tail[s] + f * b->tail[s];
}

/* ---- the state moves on ------------------------------------------------------ */

static void reset_cells(sp_model *m)
{
    m->cell_last = NULL;
    if (++m->cell_epoch == 0) { /* wrapped: no slot's old epoch may match */
        for (int i = 0; i < NCELL; i++)
            if (m->cells[i])
                m->cells[i]->epoch = 0;
        m->cell_epoch = 1;
    }
    for (int i = 0; i < GKCACHE; i++)
        m->gk[i].t = -1;
    m->one_valid = 0;
    if (m->rcells)
        for (int i = 0; i < NRCELL; i++)
            m->rcells[i].gb = 0;
}

static void set_iteration(sp_model *m, int t)
{
    m->state_t = t;
    m->gamma_scale = scale_at(m, m->settle + t);
    reset_cells(m);
}

/* P(|x + S| > y) for this rank's acc x (signed along M) and the sum S of
 * J' ~ Binomial(P - 1, p) others' selected values (mean m1, variance v1) */
static double delivered_given(const sp_model *m, double x, double y, double p, double m1, double v1)
{
    uint64_t n = (uint64_t)(m->P - 1);
    double mean = (double)n * p, sum = 0;
    if (n == 0 || p <= 0)
        return fabs(x) > y;
    if (mean < 12 && p < 0.5) {
        double pmf = exp((double)n * log1p(-p)), r = p / (1 - p), cum = pmf;
        sum += pmf * (fabs(x) > y);
        for (uint64_t j = 0; j < n && cum < 1 - 1e-9; j++) {
            pmf *= (double)(n - j) / (double)(j + 1) * r;
            cum += pmf;
            double jj = (double)(j + 1), mu = x + jj * m1, sd = sqrt(jj * v1);
            sum += pmf * (sd > 0 ? Q_t((y - mu) / sd) + Q_t((y + mu) / sd) : fabs(mu) > y);
        }
        return sum;
    }
    double sd = sqrt(mean * (1 - p));
    for (int i = 0; i < STRATA; i++) {
        double jj = floor(mean + sd * strata[i] + 0.5);
        if (jj < 0)
            jj = 0;
        if (jj > (double)n)
            jj = (double)n;
        double mu = x + jj * m1, sj = sqrt(jj * v1);
        sum += (sj > 0 ? Q_t((y - mu) / sj) + Q_t((y + mu) / sj) : fabs(mu) > y) / STRATA;
    }
    return sum;
}

/* P(acc in signed bin j) for acc ~ N(x, sd^2), in units where the bins'
 * edges are sig * rg_edge; the outermost bins reach to infinity.  Bins
 * outside [*lo, *hi] hold nothing (Phi_t is exactly 0 or 1 there). */
static void bin_masses(double x, double sd, double sig, double *mass, int *lo_out, int *hi_out)
{
    double cdf_pos[NG + 1], cdf_neg[NG + 1];
    int bp = NG + 1, bn = NG + 1; /* the first edge where the cdf is exactly 1 (pos) or 0 (neg) */
    for (int b = 0; b <= NG; b++) {
        double z = (sig * rg_edge[b] - x) / sd;
        cdf_pos[b] = Phi_t(z); /* P(acc < +e_b) */
        if (z >= PT_MAX) {
            bp = b;
            break;
        }
    }
    for (int b = bp; b <= NG; b++)
        cdf_pos[b] = 1;
    for (int b = 0; b <= NG; b++) {
        double z = (-sig * rg_edge[b] - x) / sd;
        cdf_neg[b] = Phi_t(z); /* P(acc < -e_b) */
        if (z <= -PT_MAX) {
            bn = b;
            break;
        }
    }
    for (int b = bn; b <= NG; b++)
        cdf_neg[b] = 0;
    for (int b = 0; b < NG; b++) {
        double hi = b == NG - 1 ? 1.0 : cdf_pos[b + 1];
        mass[NG + 1 + b] = hi - cdf_pos[b];
        double lo = b == NG - 1 ? 0.0 : cdf_neg[b + 1];
        mass[NG - 1 - b] = cdf_neg[b] - lo;
    }
    mass[NG] = 0;
    /* positive bins b >= bp and negative bins b >= bn are empty */
    *hi_out = bp >= NG ? NS - 1 : NG + bp;
    *lo_out = bn >= NG ? 0 : NG - bn;
}

/* the part of a signed bin's mass with |acc| <= t (acc ~ N(x, sd^2)) */
static double mass_below(int j, double x, double sd, double sig, double t)
{
    if (j == NG)
        return 0;
    int pos = j > NG, b = pos ? j - NG - 1 : NG - 1 - j;
    double lo = sig * rg_edge[b], hi = b == NG - 1 ? INFINITY : sig * rg_edge[b + 1];
    if (lo >= t)
        return 0;
    double top = hi < t ? hi : t;
    if (pos)
        return Phi_t((top - x) / sd) - Phi_t((lo - x) / sd);
    return Phi_t((-lo - x) / sd) - Phi_t((-top - x) / sd);
}

/* one iteration of error feedback with the rule (mode, t, y): every
 * residual distribution moves on */
static void step(sp_model *m, int mode, double t, double y)
{
    cell_t *zc = NULL;
    step_masses *sm = m->sm;
    memset(sm->done, 0, sizeof sm->done);
    if (mode == 2) {
        cell_t *a, *b;
        double f;
        cells_around(m, t, 2, &a, &b, &f);
        zc = f < 0.5 ? a : b;
    }
    for (int s = 0; s < NC; s++) {
        if (m->Ns[s] <= 0)
            continue;
        double sig = m->sigma[s];
        for (int k = 0; k < m->nm; k++) {
            double mu = grad_mean(m, s, k), mu1 = m->gamma_scale * sqrt(m->p.mean) * m->m_x[k]; /* mu / sig */
            /* the share of each destination bin that is consumed */
            double cons[NS];
            for (int j = 0; j < NS; j++) {
                double x = sig * sv[j], ax = fabs(x);
                int b = j > NG ? j - NG - 1 : NG - 1 - j;
                double top = j == NG ? 0 : b == NG - 1 ? INFINITY : sig * rg_edge[b + 1];
                if (j == NG || mode == 0 || top <= t)
                    cons[j] = mode == 3;
                else if (mode == 3 || mode == 1)
                    cons[j] = 1;
                else {
                    if (ax < t) /* a bin across the threshold: its selected part sits just above it */
                        x = x < 0 ? -t : t;
                    double h = 0;
                    for (int q = 0; q < m->nzn; q++)
                        h += m->z_w[q] *
                             delivered_given(m, x, y, zc->p[s][k][q], zc->m1[s][k][q], zc->v1[s][k][q]);
                    cons[j] = h;
                }
            }
            double next[NS];
            memset(next, 0, sizeof next);
            for (int u = 0; u < m->ncomp; u++) {
                if (m->comp_w[s][u] <= 0)
                    continue;
                double sd = grad_sd(m, s, u), sd1 = m->gamma_scale * sqrt(grad_var1(m, u)); /* sd / sig */
                for (int j = 0; j < NS; j++) {
                    double w = m->psi[s][k][j] * m->comp_w[s][u];
                    if (w <= TINY)
                        continue;
                    double x = sig * sv[j] + mu;
                    if (!sm->done[k][u][j]) {
                        int lo, hi;
                        bin_masses(sv[j] + mu1, sd1, 1.0, sm->mass[k][u][j], &lo, &hi);
                        sm->lo[k][u][j] = (short)lo;
                        sm->hi[k][u][j] = (short)hi;
                        sm->done[k][u][j] = 1;
                    }
                    const double *mass = sm->mass[k][u][j];
                    int dlo = sm->lo[k][u][j], dhi = sm->hi[k][u][j];
                    for (int d = dlo; d <= dhi; d++) {
                        double ms = mass[d];
                        if (ms <= 0)
                            continue;
                        double below = 0;
                        if (mode == 1 || mode == 2) {
                            int b = d > NG ? d - NG - 1 : NG - 1 - d;
                            if (b < NG - 1 && sig * rg_edge[b + 1] <= t)
                                below = ms; /* the whole bin lies below the threshold */
                            else if (sig * rg_edge[b] < t)
                                below = mass_below(d, x, sd, sig, t);
                        }
                        if (below > ms)
                            below = ms;
                        double above = ms - below, c = mode == 3 ? 1 : cons[d];
                        if (mode == 0)
                            c = 0, above = ms, below = 0;
                        next[d] += w * (below + above * (1 - c));
                        next[NG] += w * above * c;
                    }
                }
            }
            memcpy(m->psi[s][k], next, sizeof next);
        }
        /* directions redrawn at the profile's refresh rate: the residual
         * stays, its sign along the new direction is a coin flip */
        if (m->p.refresh > 0 && m->nm > 1) {
            double eps = 1.0 / m->p.refresh, pool[NS];
            memset(pool, 0, sizeof pool);
            for (int k = 0; k < m->nm; k++)
                for (int j = 0; j < NS; j++)
                    pool[j] += m->m_w[k] * 0.5 * (m->psi[s][k][j] + m->psi[s][k][NS - 1 - j]);
            for (int k = 0; k < m->nm; k++)
                for (int j = 0; j < NS; j++)
                    m->psi[s][k][j] = (1 - eps) * m->psi[s][k][j] + eps * pool[j];
        }
    }
}

/* A rank's own scale S_r(t) (profile rank_sd, rank_corr; generator.h)
 * scales the gradient it adds at t, while its residual holds what earlier
 * gradients left: R_r(t)^2, the residual's energy over the population's,
 * follows R(t + 1)^2 = w(t) R(t)^2 + (1 - w(t)) S_r(t)^2, w(t) the residual's
 * share of the population's accumulated energy at t (note_share; the share
 * that a cut at a threshold keeps is taken as the same for every rank, and
 * cancels).  So a rank's accumulated vector is taken as R times the
 * population's with the fresh gradient times G = S_r(t) / R: a question of
 * the rank at threshold t is the population's at t / R with its gradient
 * scaled by G (rank_on).  A scale that persists (rank_corr near 1) gives
 * R = S_r and G = 1, the population scaled; one that does not (the traces:
 * bench/README.md section 22) leaves in R a mean of the rank's recent
 * scales that the largest of them dominate, and a rank whose batch gave a small gradient selects mostly from
 * a residual that the thresholds before have cut.  G is taken in buckets of
 * GB_STEP of its logarithm, whose tails are kept apart from the population's
 * cells (rcell_get).  The union of the ranks' selections, asked with the
 * asking rank's threshold, is answered in that rank's view too, as if every
 * rank were like it: the threshold is of the rank's own scale, and held
 * against the population's unscaled cells it gave the union of far more
 * entries than the ranks select (ZEN's owners and TopkDSA's regions
 * 1.2-1.6x the exact run's at rank_sd 1, P = 16-32; in the view 0.95-1.01;
 * tests/test_model.py).  The reduced values and the global k-th are
 * questions about the ranks together, answered over the ranks' whole scales
 * (rank_mix below).  R follows the rank's scales from the first settling
 * iteration on (--settle N: the run's iteration t is the generator's N + t);
 * before, a settled residual was taken as the population's, and the ranks'
 * thresholds after --settle 20 at rank_sd 1.5 were all about the same, 2.2x
 * the exact run's mean (tests/test_model.py). */
typedef struct rank_view {
    int iter; /* the iteration it is for (-1: none yet) */
    double R;
    int gb;   /* round(ln G / GB_STEP) */
    int t2;   /* R2 is R(t2)^2 */
    double R2;
} rank_view;

/* w(g), for gradient iterations g = 0 .. nshare - 1 (m->share; the run's
 * iteration t is gradient iteration settle + t, as the generator counts) */
static void note_share(sp_model *m);

static const rank_view *view_of(sp_model *m, int rank, int iter)
{
    static const rank_view none = {0, 1.0, 0, 0, 1.0};
    if (!(m->p.rank_sd > 0) || rank < 0 || iter < 0)
        return &none;
    if (rank >= m->nviews) {
        int nv = rank + 1 > 2 * m->nviews ? rank + 1 : 2 * m->nviews;
        rank_view *v = realloc(m->views, (size_t)nv * sizeof *v);
        if (!v)
            return &none; /* out of memory: as if alike (the run is ending anyway) */
        for (int i = m->nviews; i < nv; i++)
            v[i] = (rank_view){-1, 1.0, 0, 0, 1.0};
        m->views = v;
        m->nviews = nv;
    }
    rank_view *v = &m->views[rank];
    if (v->iter == iter)
        return v;
    sp_rank_walk *w = sp_rank_walks(m->rank_walk, &m->nrank_walk, rank);
    if (!w)
        return &none;
    m->rank_walk = w;
    double sd = m->p.rank_sd, rho = m->p.rank_corr;
    int g = m->settle + iter; /* the gradient iteration: the settling ones came first */
    if (g < v->t2) { /* asked back in time: from the start again */
        v->t2 = 0;
        v->R2 = 1.0;
    }
    for (; v->t2 < g && v->t2 < m->nshare; v->t2++) {
        double S = sp_rank_scale(m->seed, sd, rho, rank, v->t2, &w[rank]), sh = m->share[v->t2];
        double E2 = sh * v->R2 + (1 - sh) * S * S;
        /* the global step consumed more of a large rank's energy than of the population's */
        double x = (0.5 * log(E2 > 1e-300 ? E2 : 1e-300) - RET_LO) / RET_STEP;
        int i = x < 0 ? 0 : x > NRET - 2 ? NRET - 2 : (int)x;
        double f = x - i < 0 ? 0 : x - i > 1 ? 1 : x - i;
        const double *rr = m->ret + (size_t)v->t2 * NRET;
        v->R2 = E2 * ((1 - f) * rr[i] + f * rr[i + 1]);
    }
    double S = sp_rank_scale(m->seed, sd, rho, rank, g, &w[rank]);
    double R = sqrt(v->R2 > 1e-300 ? v->R2 : 1e-300), lg = log(S / R);
    v->iter = iter;
    v->gb = m->rcells ? (int)lround(lg / GB_STEP) : 0; /* no room for own tails: the population's */
    /* what the bucket leaves of G goes into R: the whole vector scaled by
     * it, exact for a cold residual */
    v->R = R * exp(lg - GB_STEP * v->gb);
    return v;
}

/* the rank's fresh gradient scale on (the model's state must have moved to
 * the iteration first: advance_to) */
static void rank_on(sp_model *m, const rank_view *v)
{
    m->gb = v->gb;
    m->gamma_base = m->gamma_scale;
    if (v->gb)
        m->gamma_scale *= exp(GB_STEP * v->gb);
}

static void rank_off(sp_model *m)
{
    m->gamma_scale = m->gamma_base;
    m->gb = 0;
}

static double expected_count(sp_model *m, double thr);
static double kth_value(sp_model *m, double k);

/* w(state_t): the residual's energy over the residual's and this
 * iteration's gradient's together, for the ranks' own residuals (rank_view) */
static double state_energy(const sp_model *m, double *eg_out)
{
    double er = 0, eg = 0;
    for (int s2 = 0; s2 < NC; s2++) {
        if (m->Ns[s2] <= 0)
            continue;
        double r = 0, g = m->sigma[s2] * m->gamma_scale;
        for (int k = 0; k < m->nm; k++)
            for (int j = 0; j < NS; j++)
                r += m->m_w[k] * m->psi[s2][k][j] * sv[j] * sv[j];
        er += m->Ns[s2] * m->sigma[s2] * m->sigma[s2] * r;
        eg += m->Ns[s2] * g * g;
    }
    if (eg_out)
        *eg_out = eg;
    return er;
}

static double state_share(const sp_model *m)
{
    double eg, er = state_energy(m, &eg);
    return er + eg > 0 ? er / (er + eg) : 0;
}

static void note_share(sp_model *m)
{
    if (!m->rcells || m->settle + m->state_t != m->nshare)
        return;
    double sh = state_share(m);
    if (m->nshare == m->capshare) {
        int nc = m->capshare ? 2 * m->capshare : 64;
        double *x = realloc(m->share, (size_t)nc * sizeof *x);
        if (!x)
            return;
        m->share = x;
        double *r = realloc(m->ret, (size_t)nc * NRET * sizeof *r);
        if (!r)
            return;
        m->ret = r;
        m->capshare = nc;
    }
    for (int i = 0; i < NRET; i++)
        m->ret[(size_t)m->nshare * NRET + i] = 1;
    m->share[m->nshare++] = sh;
}

static void rank_mix(sp_model *m);

/* The global step's per-rank energy balance (view_of): a rank's entry is
 * delivered, and consumed, where it is selected and its value passes the
 * global threshold, y / E_r in the population's units, so a rank much larger
 * than the others loses more of its energy than the population's share.  A
 * rank of whole scale E keeps (1 - kappa a(E)) / (1 - kappa) of what the
 * population's share would leave it, kappa the population's consumed share
 * and a(E) the energy above max(t, y / E) over its mean over the ranks. */
static int delivered_row(sp_model *m, int mode, double t, double y_nat, double *row)
{
    if (mode != 2 || !(y_nat > 0) || !m->rcells || m->state_t < 0 || m->settle + m->state_t != m->nshare - 1)
        return 0;
    rank_mix(m);
    double num = 0, den = 0;
    for (int g = 0; g < m->nmix; g++) {
        double x = y_nat / m->mix_E[g];
        double e2 = m->mix_E[g] * m->mix_E[g] * m->mix_w[g];
        num += e2 * energy_above(m, x > t ? x : t);
        den += e2;
    }
    double mean = den > 0 ? num / den : 0;
    if (!(mean > 0))
        return 0;
    double last_x = -1, last_e = 0;
    for (int i = 0; i < NRET; i++) {
        double x = y_nat / exp(RET_LO + RET_STEP * i);
        if (x < t)
            x = t;
        if (x != last_x) {
            last_e = energy_above(m, x);
            last_x = x;
        }
        row[i] = last_e / mean;
    }
    return 1;
}

/* step() with the rule (mode, t, y), and the row of the ranks' retention it
 * leaves (y_nat: the global threshold in the ranks' own units) */
static void step_ranks(sp_model *m, int mode, double t, double y, double y_nat)
{
    double row[NRET], eg = 0, er = 0;
    int on = delivered_row(m, mode, t, y_nat, row);
    if (on)
        er = state_energy(m, &eg);
    step(m, mode, t, y);
    if (!on || !(er + eg > 0))
        return;
    double kappa = 1 - state_energy(m, NULL) / (er + eg);
    if (!(kappa > 0) || kappa >= 1)
        return;
    double *rr = m->ret + (size_t)(m->nshare - 1) * NRET;
    for (int i = 0; i < NRET; i++) {
        double c = kappa * row[i];
        rr[i] = (1 - (c < 0.999 ? c : 0.999)) / (1 - kappa);
    }
}

/* the state of run iteration t: the iterations between move on with the
 * rule the ranks used.  Iterations the run skips (--iters-at) keep the last
 * simulated one's selection: thresholds that select the same expected count
 * from the residual as it is then (an algorithm's feedback holds its count
 * near a target), the global threshold in the same ratio to the local one.
 * Ranks of their own scale (rank_view) have thresholds in units that differ:
 * the population then takes as many entries as they took on average. */
static void advance_to(sp_model *m, int t)
{
    while (m->state_t < t) {
        int mode;
        double thr, y;
        if (m->n_dense) {
            mode = 3;
            thr = y = 0;
        } else if (m->n_global || m->n_local) {
            int nr = m->n_global ? m->n_global : m->n_local;
            mode = m->n_global ? 2 : 1;
            thr = m->sum_thr / nr;
            y = m->n_global ? m->sum_thr_global / nr : -1;
            m->last_y_nat = y;
            if (m->n_count) { /* ranks of their own scale: as many as they took on average */
                m->last_count = m->sum_count / m->n_count;
                thr = kth_value(m, m->last_count);
                if (m->n_global)
                    y = thr * m->sum_ratio_global / m->n_global;
            } else {
                m->last_count = expected_count(m, thr);
            }
        } else if (m->state_t < m->warmup) {
            mode = 3;
            thr = y = 0;
        } else {
            mode = m->last_mode;
            thr = m->last_thr;
            y = m->last_thr_global;
            if (mode == 0 || mode == 3) { /* nothing sparse seen yet: local top-k */
                mode = 1;
                m->last_count = m->k;
                y = -1;
            }
            double t2 = kth_value(m, m->last_count);
            if (mode == 2)
                y = thr > 0 ? y * t2 / thr : t2;
            thr = t2;
        }
        note_share(m);
        step_ranks(m, mode, thr, y, m->last_y_nat);
        m->last_mode = mode;
        m->last_thr = thr;
        m->last_thr_global = y;
        m->sum_thr = m->sum_thr_global = 0;
        m->n_local = m->n_global = m->n_dense = m->n_count = 0;
        m->sum_count = m->sum_ratio_global = 0;
        set_iteration(m, m->state_t + 1);
    }
}

/* expected count above thr */
static double expected_count(sp_model *m, double thr)
{
    double tail[NC], e = 0;
    tails_at(m, thr, tail);
    for (int s = 0; s < NC; s++)
        e += m->Ns[s] * tail[s];
    return e;
}

/* the magnitude with expected count k above it */
static double kth_value(sp_model *m, double k)
{
    if (k <= 0)
        return INFINITY;
    if (k >= m->nz_total)
        return 0;
    double lo = m->sigma[0] * m->gamma_scale * 1e-3, hi = m->sigma[NC - 1] * m->gamma_scale * RG_HI;
    for (int i = 0; i < 200 && hi / lo > 1 + 1e-9; i++) {
        double mid = sqrt(lo * hi);
        if (expected_count(m, mid) > k)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

/* ---- across ranks ----------------------------------------------------------- */

/* P(|R| > x) for R the sum of j >= 1 selected values (node k, common q) */
static double sum_tail(const sp_model *m, const cell_t *c, int s, int k, int q, double j, double x, double t)
{
    double p = c->p[s][k][q];
    if (j < 1.5) {
        /* one value: |acc| > x given |acc| > t */
        if (p <= 0)
            return 0;
        if (x <= t)
            return 1;
        double g = m->sigma[s] * m->gamma_scale;
        double mu = g * (sqrt(m->p.mean) * m->m_x[k] + sqrt(m->p.common) * m->z_x[q]), tail = 0;
        for (int u = 0; u < m->ncomp; u++) {
            if (m->comp_w[s][u] <= 0)
                continue;
            double sd = own_sd(m, s, u);
            for (int jj = 0; jj < NS; jj++) {
                double w = m->psi[s][k][jj] * m->comp_w[s][u];
                if (w <= TINY)
                    continue;
                double mm = m->sigma[s] * sv[jj] + mu;
                tail += w * (Q_t((x - mm) / sd) + Q_t((x + mm) / sd));
            }
        }
        return tail / p;
    }
    double mm = j * c->m1[s][k][q], sd = sqrt(j * c->v1[s][k][q]);
    if (sd <= 0)
        return fabs(mm) > x;
    return Q_t((x - mm) / sd) + Q_t((x + mm) / sd);
}

/* per entry of class s: in the union, with |reduced| > x (x < 0: the union) */
static double reduced_class(const sp_model *m, const cell_t *c, int s, double x, double t)
{
    double f = 0;
    uint64_t n = (uint64_t)m->P;
    if (c->tail[s] <= 1e-13)
        return 0;
    for (int k = 0; k < m->nm; k++)
        for (int q = 0; q < m->nzn; q++) {
            double p = c->p[s][k][q], w = m->m_w[k] * m->z_w[q];
            if (p <= 1e-15)
                continue;
            if (m->ablation == SP_MODEL_DISJOINT) { /* no two ranks select the same entry */
                double u = (double)n * p < 1 ? (double)n * p : 1;
                f += w * (x < 0 ? u : u * sum_tail(m, c, s, k, q, 1, x, t));
                continue;
            }
            if (x < 0) {
                f += w * -expm1((double)n * log1p(-(p < 1 ? p : 1 - 1e-16)));
                continue;
            }
            double mean = (double)n * p, sum = 0;
            if (mean < 12 && p < 0.5) {
                double pmf = exp((double)n * log1p(-p)), r = p / (1 - p), cum = pmf;
                for (uint64_t j = 0; j < n && cum < 1 - 1e-10; j++) {
                    pmf *= (double)(n - j) / (double)(j + 1) * r;
                    cum += pmf;
                    sum += pmf * sum_tail(m, c, s, k, q, (double)(j + 1), x, t);
                }
            } else {
                double sd = sqrt(mean * (1 - p));
                for (int i = 0; i < STRATA; i++) {
                    double j = floor(mean + sd * strata[i] + 0.5);
                    if (j < 1)
                        continue;
                    if (j > (double)n)
                        j = (double)n;
                    sum += sum_tail(m, c, s, k, q, j, x, t) / STRATA;
                }
            }
            f += w * sum;
        }
    return f;
}

/* ---- reduced_class for x >= 0, with what does not depend on x done once ----
 *
 * The same operations on the same values as reduced_class and sum_tail above,
 * in the same order, so the same doubles: the binomial weights, the numbers
 * of values j and their sums' mean and spread are the cell's (plan_build);
 * one value's terms are the iteration's (one_build).  A term is skipped only
 * where it is exactly 0: both Q_t are 0 from z >= PT_MAX on, and xz bounds
 * the x beyond which z = (x -+ mm) / sd reaches PT_MAX whatever the rounding
 * (a margin of 1e-12 against a few ulps); adding 0 to a sum of non-negative
 * terms leaves it as it is.  Terms of equal j one after the other (strata
 * that round to the same count) are worked out once. */

/* the x beyond which Q_t((x - mm) / sd) + Q_t((x + mm) / sd) is exactly 0
 * (NAN, which no x reaches, where sd is too small or not finite to tell) */
static double zero_from(double mm, double sd)
{
    if (!(sd > 1e-250) || !isfinite(sd) || !isfinite(mm))
        return NAN;
    double xz = (fabs(mm) + PT_MAX * sd) * (1 + 1e-12);
    return isfinite(xz) ? xz : NAN;
}

typedef struct {
    double pmf, j, mm, sd, xz; /* j >= 2: mm, sd, xz as sum_tail; j = 1: one value */
} rterm;
typedef struct {
    int kind; /* 0 none (p <= 1e-15), 1 binomial weights pmf, 2 strata */
    int at, n, n1; /* its terms; the first n1 of them are of j = 1 */
    double w;
    double xz; /* for x >= xz every term of j >= 2 is exactly 0 (NAN: not known) */
} rhead;
struct rplan {
    int P;
    rhead h[NC][NM_MAX][NZ_MAX];
    rterm *t;
    int nt, cap;
};

static int plan_add(struct rplan *pl, double pmf, double j, const cell_t *c, int s, int k, int q)
{
    if (pl->nt == pl->cap) {
        int nc = pl->cap ? 2 * pl->cap : 4096;
        rterm *t = realloc(pl->t, (size_t)nc * sizeof *t);
        if (!t)
            return -1;
        pl->t = t;
        pl->cap = nc;
    }
    rterm *r = &pl->t[pl->nt++];
    r->pmf = pmf;
    r->j = j;
    r->mm = r->sd = 0;
    r->xz = NAN;
    if (!(j < 1.5)) {
        r->mm = j * c->m1[s][k][q];
        r->sd = sqrt(j * c->v1[s][k][q]);
        if (r->sd > 0)
            r->xz = zero_from(r->mm, r->sd);
    }
    return 0;
}

/* the cell's plan (-1: out of memory, then reduced_class answers) */
static int plan_build(const sp_model *m, cell_t *c)
{
    if (!c->plan) {
        c->plan = calloc(1, sizeof *c->plan);
        if (!c->plan)
            return -1;
    }
    struct rplan *pl = c->plan;
    uint64_t n = (uint64_t)m->P;
    pl->P = m->P;
    pl->nt = 0;
    for (int s = 0; s < NC; s++)
        for (int k = 0; k < m->nm; k++)
            for (int q = 0; q < m->nzn; q++) {
                rhead *h = &pl->h[s][k][q];
                double p = c->p[s][k][q];
                h->kind = 0;
                h->at = pl->nt;
                h->n = 0;
                h->w = m->m_w[k] * m->z_w[q];
                h->xz = NAN;
                h->n1 = 0;
                if (m->Ns[s] <= 0 || c->tail[s] <= 1e-13 || p <= 1e-15)
                    continue;
                double mean = (double)n * p;
                if (mean < 12 && p < 0.5) {
                    h->kind = 1;
                    double pmf = exp((double)n * log1p(-p)), r = p / (1 - p), cum = pmf;
                    for (uint64_t j = 0; j < n && cum < 1 - 1e-10; j++) {
                        pmf *= (double)(n - j) / (double)(j + 1) * r;
                        cum += pmf;
                        if (plan_add(pl, pmf, (double)(j + 1), c, s, k, q) != 0)
                            return -1;
                    }
                } else {
                    h->kind = 2;
                    double sd = sqrt(mean * (1 - p));
                    for (int i = 0; i < STRATA; i++) {
                        double j = floor(mean + sd * strata[i] + 0.5);
                        if (j < 1)
                            continue;
                        if (j > (double)n)
                            j = (double)n;
                        if (plan_add(pl, 0, j, c, s, k, q) != 0)
                            return -1;
                    }
                }
                h->n = pl->nt - h->at;
                /* j grows along the terms: those of j = 1 lead */
                double xz = 0;
                for (int i = h->at; i < pl->nt; i++) {
                    double z = pl->t[i].xz;
                    if (pl->t[i].j < 1.5) {
                        if (i - h->at == h->n1)
                            h->n1++;
                        else
                            xz = NAN; /* not leading (never): no shortcut */
                    } else {
                        xz = isnan(z) || isnan(xz) ? NAN : z > xz ? z : xz;
                    }
                }
                h->xz = xz;
            }
    c->have_plan = 1;
    return 0;
}

/* one value's terms of (s, k, q), as sum_tail takes them (-1: out of memory) */
static int one_build(sp_model *m, int s, int k, int q)
{
    tone *o = &m->one[s][k][q];
    double g = m->sigma[s] * m->gamma_scale;
    double mu = g * (sqrt(m->p.mean) * m->m_x[k] + sqrt(m->p.common) * m->z_x[q]);
    o->at = m->n_one_terms;
    for (int u = 0; u < m->ncomp; u++) {
        if (m->comp_w[s][u] <= 0)
            continue;
        double sd = own_sd(m, s, u);
        for (int jj = 0; jj < NS; jj++) {
            double w = m->psi[s][k][jj] * m->comp_w[s][u];
            if (w <= TINY)
                continue;
            if (m->n_one_terms == m->cap_one_terms) {
                int nc = m->cap_one_terms ? 2 * m->cap_one_terms : 4096;
                tterm *t = realloc(m->one_terms, (size_t)nc * sizeof *t);
                if (!t)
                    return -1;
                m->one_terms = t;
                m->cap_one_terms = nc;
            }
            tterm *t = &m->one_terms[m->n_one_terms++];
            t->w = w;
            t->mm = m->sigma[s] * sv[jj] + mu;
            t->sd = sd;
            t->xz = zero_from(t->mm, sd);
        }
    }
    o->n = m->n_one_terms - o->at;
    o->built = 1;
    o->have_last = 0;
    return 0;
}

/* sum_tail's numerator of one value at x > t: sum of w (Q_t + Q_t) */
static double one_tail(sp_model *m, int s, int k, int q, double x, int *err)
{
    if (!m->one_valid || m->one_gamma != m->gamma_scale) {
        for (int a = 0; a < NC; a++)
            for (int b = 0; b < NM_MAX; b++)
                for (int d = 0; d < NZ_MAX; d++)
                    m->one[a][b][d].built = 0;
        m->n_one_terms = 0;
        m->one_gamma = m->gamma_scale;
        m->one_valid = 1;
    }
    tone *o = &m->one[s][k][q];
    if (!o->built && one_build(m, s, k, q) != 0) {
        *err = 1;
        return 0;
    }
    if (o->have_last && o->x_last == x)
        return o->num_last;
    double tail = 0;
    const tterm *t = &m->one_terms[o->at];
    for (int i = 0; i < o->n; i++) {
        if (x >= t[i].xz)
            continue;
        double mm = t[i].mm, sd = t[i].sd;
        tail += t[i].w * (Q_t((x - mm) / sd) + Q_t((x + mm) / sd));
    }
    o->x_last = x;
    o->num_last = tail;
    o->have_last = 1;
    return tail;
}

/* reduced_class(m, c, s, x, t) for x >= 0 from the cell's plan (-1: out of
 * memory) */
static int reduced_class_plan(sp_model *m, const cell_t *c, int s, double x, double t, double *out)
{
    double f = 0;
    if (c->tail[s] <= 1e-13) {
        *out = 0;
        return 0;
    }
    const struct rplan *pl = c->plan;
    for (int k = 0; k < m->nm; k++)
        for (int q = 0; q < m->nzn; q++) {
            const rhead *h = &pl->h[s][k][q];
            if (h->kind == 0)
                continue;
            double p = c->p[s][k][q], sum = 0, jprev = -1, T = 0;
            const rterm *r = &pl->t[h->at];
            int nt = x >= h->xz ? h->n1 : h->n; /* those of j >= 2 are 0 (and come after) */
            for (int i = 0; i < nt; i++) {
                if (r[i].j != jprev) {
                    jprev = r[i].j;
                    if (r[i].j < 1.5) {
                        if (x <= t)
                            T = 1;
                        else {
                            int err = 0;
                            double num = one_tail(m, s, k, q, x, &err);
                            if (err)
                                return -1;
                            T = num / p;
                        }
                    } else if (x >= r[i].xz) {
                        T = 0;
                    } else if (r[i].sd <= 0) {
                        T = fabs(r[i].mm) > x;
                    } else {
                        double mm = r[i].mm, sd = r[i].sd;
                        T = Q_t((x - mm) / sd) + Q_t((x + mm) / sd);
                    }
                }
                if (T == 0 && r[i].j >= 1.5)
                    continue; /* exactly 0 whatever the weight */
                if (h->kind == 1)
                    sum += r[i].pmf * T;
                else
                    sum += T / STRATA;
            }
            f += h->w * sum;
        }
    *out = f;
    return 0;
}

/* every class's reduced_class at the cell's own threshold, remembered for
 * the last few x */
static const double *reduced_cell(sp_model *m, cell_t *c, double x, int keep)
{
    for (int i = 0; i < c->nx; i++)
        if (c->xs[i] == x)
            return c->xf[i];
    static double tmp[NC];
    double *f = tmp;
    if (keep) {
        int i = c->nx < NXCACHE ? c->nx++ : c->xnext;
        c->xnext = (i + 1) % NXCACHE;
        c->xs[i] = x;
        f = c->xf[i];
    }
    double t = exp(CELL * (double)c->cell);
    if (x >= 0 && m->ablation != SP_MODEL_DISJOINT && ((c->have_plan && c->plan->P == m->P) || plan_build(m, c) == 0)) {
        int s = 0;
        for (; s < NC; s++) {
            f[s] = 0;
            if (m->Ns[s] > 0 && reduced_class_plan(m, c, s, x, t, &f[s]) != 0)
                break;
        }
        if (s == NC)
            return f;
        /* out of memory on the way: the long way from the class it stopped at */
        for (; s < NC; s++)
            f[s] = m->Ns[s] > 0 ? reduced_class(m, c, s, x, t) : 0;
        return f;
    }
    for (int s = 0; s < NC; s++)
        f[s] = m->Ns[s] > 0 ? reduced_class(m, c, s, x, t) : 0;
    return f;
}

/* per class, interpolated between the cells around t; keep: remember the
 * values for this x (a threshold others will ask for too) */
static void reduced_at_keep(sp_model *m, double t, double x, double *f, int keep)
{
    cell_t *a, *b;
    double w;
    cells_around(m, t, x < 0 ? 1 : 2, &a, &b, &w); /* a union count (x < 0) reads p alone */
    const double *fa = reduced_cell(m, a, x, keep);
    double va[NC];
    memcpy(va, fa, sizeof va);
    const double *fb = reduced_cell(m, b, x, keep);
    for (int s = 0; s < NC; s++)
        f[s] = (1 - w) * va[s] + w * fb[s];
}

static void reduced_at(sp_model *m, double t, double x, double *f) { reduced_at_keep(m, t, x, f, 1); }

/* ---- the ranks together --------------------------------------------------------
 *
 * A reduced value sums the selected values of the ranks that chose the entry,
 * each of its own rank's size.  Where the ranks differ in size (rank_sd), a
 * value one rank contributes passes a global threshold y as the population's
 * passes y / E_r, E_r the rank's whole scale: sqrt(w R^2 + (1 - w) S^2), its
 * residual's R and fresh gradient's S weighted by the residual's share of the
 * energy w (state_share).  Each rank selects about the same count of its own
 * vector (the algorithms' feedback holds it), so in population units the
 * ranks share one threshold t.  An entry one rank chose is that rank's with
 * probability 1/P: the count above y is the mean over ranks of the
 * population's count above y / E_r, exact where one rank chooses an entry
 * (sparse selections) and, where several do, as if they were all of the size
 * of one of them.  With rank_sd = 0 every E_r is 1 and this is reduced_at.
 * The ranks are taken in groups by E_r, largest first, of 1, 1, 2, 4, ...
 * ranks (the largest decide the count above y), each at its RMS scale. */
static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

static double whole_scale(const rank_view *v, double sh)
{
    double S = v->R * exp(GB_STEP * v->gb);
    return sqrt(sh * v->R * v->R + (1 - sh) * S * S);
}

/* the groups of iteration state_t (advance_to first) */
static void rank_mix(sp_model *m)
{
    if (m->mix_t == m->state_t)
        return;
    m->mix_t = m->state_t;
    m->nmix = 1;
    m->mix_E[0] = m->mix_w[0] = 1;
    m->mix_sh = 0;
    if (!(m->p.rank_sd > 0) || m->P <= 1)
        return;
    if (!m->mix_all && !(m->mix_all = malloc((size_t)m->P * sizeof *m->mix_all)))
        return; /* out of memory: as if alike (the run is ending anyway) */
    m->mix_sh = state_share(m);
    for (int r = 0; r < m->P; r++)
        m->mix_all[r] = whole_scale(view_of(m, r, m->state_t), m->mix_sh);
    qsort(m->mix_all, (size_t)m->P, sizeof *m->mix_all, cmp_desc);
    int g = 0;
    for (int at = 0, size = 1; at < m->P; g++) {
        int n = g == NMIX - 1 || at + size > m->P ? m->P - at : size;
        double e2 = 0;
        for (int i = at; i < at + n; i++)
            e2 += m->mix_all[i] * m->mix_all[i];
        m->mix_E[g] = sqrt(e2 / n);
        m->mix_w[g] = (double)n / m->P;
        at += n;
        if (g >= 1)
            size *= 2;
    }
    m->nmix = g;
}

/* every rank of the population's size: the population answers */
static int mix_alike(const sp_model *m) { return m->nmix == 1 && m->mix_E[0] == 1; }

/* the ranks' shared threshold in population units: the one at which the
 * population selects what the asking rank selects with its own (rank_mix
 * first) */
static double mix_threshold(sp_model *m, int rank, double thr)
{
    if (mix_alike(m) || !(thr > 0))
        return thr;
    const rank_view *v = view_of(m, rank, m->state_t);
    rank_on(m, v);
    double c = expected_count(m, thr / v->R);
    rank_off(m);
    return kth_value(m, c);
}

/* per class, the chance that an entry's reduced value passes y, ranks of
 * their own size (above) */
static void reduced_mix(sp_model *m, double t, double y, double *f, int keep)
{
    if (mix_alike(m)) {
        reduced_at_keep(m, t, y, f, keep);
        return;
    }
    double g[NC];
    memset(f, 0, NC * sizeof *f);
    for (int i = 0; i < m->nmix; i++) {
        reduced_at_keep(m, t, y / m->mix_E[i], g, keep);
        for (int s = 0; s < NC; s++)
            f[s] += m->mix_w[i] * g[s];
    }
}

/* ---- the operations ----------------------------------------------------------- */

struct sp_model_set {
    int L;
    uint64_t total;
    uint64_t count[]; /* per layer */
};

static double z_of(const sp_model *m, int stream, int rank, int iter, uint64_t extra)
{
    return sp_normal_from_bits(sp_mix64(sp_stream_key(m->seed, (uint64_t)stream, (uint64_t)rank, (uint64_t)iter) +
                                        extra * SP_GOLD));
}

static uint64_t bits_of(const sp_model *m, int stream, int rank, int iter, uint64_t extra)
{
    return sp_mix64(sp_stream_key(m->seed, (uint64_t)stream, (uint64_t)rank, (uint64_t)iter) + extra * SP_GOLD);
}

/* a rank's count above thr: the population's expectation moved by the
 * rank's deviate z for this iteration.  Thresholds reach the model as floats
 * (sparse_set.c), so a count is of a float threshold. */
static uint64_t count_at(sp_model *m, float thr, double z)
{
    return draw_count(expected_count(m, (double)thr), m->nz_total, z);
}

/* a rank's count above its own float threshold thr (f: its view's R) */
static uint64_t count_rank(sp_model *m, float thr, double f, double z)
{
    return count_at(m, f == 1.0 ? thr : (float)((double)thr / f), z);
}

static uint64_t op_count_above(void *state, int rank, int iter, double thr)
{
    sp_model *m = state;
    advance_to(m, iter);
    const rank_view *v = view_of(m, rank, iter);
    rank_on(m, v);
    uint64_t c = count_rank(m, (float)thr, v->R, z_of(m, SP_ST_MODEL_COUNT, rank, iter, 0));
    rank_off(m);
    return c;
}

/* this rank's k-th largest magnitude: the threshold above which its count
 * (op_count_above, the same draw) is k, as the exact k-th value of a vector
 * leaves exactly k above it.  The population's k-th value instead would give
 * every rank the same threshold and a count scattered around k, where exact
 * ranks hold k each and thresholds that differ; the last region of Ok-Topk's
 * repartition (quantiles at multiples of floor(k / P)) depends on the
 * count being k (bench/README.md section 7). */
static double kth_rank(sp_model *m, int rank, int iter, uint64_t k, double rf)
{
    double t = kth_value(m, (double)k) * rf;
    if (k == 0 || (double)k >= m->nz_total || !(t > 0) || !isfinite(t))
        return t;
    double z = z_of(m, SP_ST_MODEL_COUNT, rank, iter, 0);
    double lo = t, hi = t;
    for (int i = 0; i < 60 && count_rank(m, (float)lo, rf, z) < k; i++) /* a threshold with k or more above it */
        lo /= 1.05;
    for (int i = 0; i < 60 && count_rank(m, (float)hi, rf, z) >= k; i++) /* and one with fewer */
        hi *= 1.05;
    if (count_rank(m, (float)lo, rf, z) < k || count_rank(m, (float)hi, rf, z) >= k)
        return t;
    for (int i = 0; i < 80 && (float)lo != (float)hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (count_rank(m, (float)mid, rf, z) >= k)
            lo = mid;
        else
            hi = mid;
    }
    /* the largest float threshold that still leaves k or more above it */
    float f = (float)lo;
    for (int i = 0; i < 1000 && f > 0 && count_rank(m, f, rf, z) < k; i++)
        f = nextafterf(f, 0.0f);
    float up = nextafterf(f, INFINITY);
    for (int i = 0; i < 1000 && count_rank(m, up, rf, z) >= k; i++) {
        f = up;
        up = nextafterf(f, INFINITY);
    }
    return (double)f;
}

static double op_kth(void *state, int rank, int iter, uint64_t k)
{
    sp_model *m = state;
    advance_to(m, iter);
    const rank_view *v = view_of(m, rank, iter);
    rank_on(m, v);
    double t = kth_rank(m, rank, iter, k, v->R);
    rank_off(m);
    return t;
}

static double op_std(void *state, int rank, int iter)
{
    sp_model *m = state;
    advance_to(m, iter);
    const rank_view *rv = view_of(m, rank, iter);
    rank_on(m, rv);
    double v = 0;
    for (int s = 0; s < NC; s++) {
        double g = m->sigma[s] * m->gamma_scale, e = 0, var = g * g * (1 - m->p.mean);
        for (int k = 0; k < m->nm; k++)
            for (int j = 0; j < NS; j++) {
                double x = m->sigma[s] * sv[j] + grad_mean(m, s, k);
                e += m->m_w[k] * m->psi[s][k][j] * (x * x + var);
            }
        v += m->Ns[s] * e;
    }
    rank_off(m);
    return sqrt(v / (double)m->p.n) * rv->R;
}

static sp_model_set *op_select(void *state, int rank, int iter, double thr, uint64_t count)
{
    sp_model *m = state;
    advance_to(m, iter);
    sp_model_set *set = calloc(1, sizeof *set + (size_t)m->L * sizeof(uint64_t));
    double *w = malloc((size_t)m->L * sizeof *w), W = 0, tail[NC];
    if (!set || !w) {
        free(set);
        free(w);
        return NULL;
    }
    set->L = m->L;
    const rank_view *v = view_of(m, rank, iter);
    rank_on(m, v);
    tails_at(m, thr / v->R, tail);
    rank_off(m);
    for (int l = 0; l < m->L; l++) {
        w[l] = 0;
        for (int s = 0; s < NC; s++)
            w[l] += m->nls[l * NC + s] * tail[s];
        W += w[l];
    }
    uint64_t left = count;
    for (int l = 0; l < m->L && left > 0; l++) {
        uint64_t c = W > 0 ? binom(left, w[l] / W, bits_of(m, SP_ST_MODEL_SELECT, rank, iter, (uint64_t)l)) : 0;
        if (l == m->L - 1 || W <= w[l])
            c = left;
        if ((double)c > m->nz[l])
            c = (uint64_t)m->nz[l];
        set->count[l] = c;
        left -= c;
        W -= w[l];
    }
    /* what the layers could not take goes where room is left */
    for (int l = 0; l < m->L && left > 0; l++) {
        uint64_t room = (uint64_t)m->nz[l] - set->count[l], c = room < left ? room : left;
        set->count[l] += c;
        left -= c;
    }
    set->total = count - left;
    free(w);
    return set;
}

static int64_t op_index_at(void *state, const sp_model_set *s, uint64_t pos)
{
    const sp_model *m = state;
    uint64_t cum = 0;
    for (int l = 0; l < s->L; l++) {
        if (pos < cum + s->count[l]) {
            const sp_profile_layer *ly = &m->p.layers[l];
            double f = ((double)(pos - cum) + 0.5) / (double)s->count[l];
            return (int64_t)ly->offset + (int64_t)(f * (double)ly->size);
        }
        cum += s->count[l];
    }
    return (int64_t)m->p.n;
}

static void op_split(void *state, int rank, int iter, const sp_model_set *s, const int32_t *bounds, int nreg,
                     uint32_t *counts)
{
    const sp_model *m = state;
    memset(counts, 0, (size_t)nreg * sizeof *counts);
    int j = 0;
    for (int l = 0; l < s->L; l++) {
        const sp_profile_layer *ly = &m->p.layers[l];
        int64_t lo = (int64_t)ly->offset, hi = lo + (int64_t)ly->size;
        while (j < nreg - 1 && bounds[j + 1] <= lo)
            j++;
        uint64_t left = s->count[l];
        double room = (double)ly->size;
        uint64_t h = bits_of(m, SP_ST_MODEL_SPLIT, rank, iter, (uint64_t)l);
        for (int r = j; r < nreg && left > 0; r++) {
            int64_t a = bounds[r] > lo ? bounds[r] : lo, b = bounds[r + 1] < hi ? bounds[r + 1] : hi;
            if (b <= a) {
                if (bounds[r] >= hi)
                    break;
                continue;
            }
            double ov = (double)(b - a);
            uint64_t c = ov >= room ? left : binom(left, ov / room, sp_mix64(h + (uint64_t)r));
            counts[r] += (uint32_t)c; /* a region holds fewer than n < 2^31 entries */
            left -= c;
            room -= ov;
        }
        if (left > 0) /* ranges that do not cover the layer: the last one takes it */
            counts[nreg - 1] += (uint32_t)left;
    }
}

/* the expected count over [lo, hi) of per-class quantities f[s] (per entry) */
static double over_range(const sp_model *m, const double *f, int64_t lo, int64_t hi, double *nz_in)
{
    double sum = 0, nz = 0;
    for (int l = sp_profile_layer_of(&m->p, (uint64_t)(lo > 0 ? lo : 0)); l < m->L; l++) {
        const sp_profile_layer *ly = &m->p.layers[l];
        if ((int64_t)ly->offset >= hi)
            break;
        int64_t a = (int64_t)ly->offset > lo ? (int64_t)ly->offset : lo;
        int64_t b = (int64_t)(ly->offset + ly->size) < hi ? (int64_t)(ly->offset + ly->size) : hi;
        if (b <= a)
            continue;
        double frac = (double)(b - a) / (double)ly->size, e = 0;
        for (int s = 0; s < NC; s++)
            e += m->nls[l * NC + s] * f[s];
        sum += frac * e;
        nz += frac * m->nz[l];
    }
    if (nz_in)
        *nz_in = nz;
    return sum;
}

static uint64_t op_union(void *state, int rank, int iter, double thr, int64_t lo, int64_t hi, uint64_t at_least,
                         uint64_t at_most)
{
    sp_model *m = state;
    advance_to(m, iter);
    double u[NC], nz;
    const rank_view *v = view_of(m, rank, iter);
    rank_on(m, v);
    reduced_at(m, thr / v->R, -1, u);
    rank_off(m);
    double e = over_range(m, u, lo, hi, &nz);
    uint64_t c = draw_count(e, nz, z_of(m, SP_ST_MODEL_UNION, rank, iter, (uint64_t)lo));
    if (c < at_least)
        c = at_least;
    if (c > at_most)
        c = at_most;
    return c;
}

static uint64_t op_reduced_above(void *state, int rank, int iter, double thr, int64_t lo, int64_t hi,
                                 double thr_global, uint64_t at_most)
{
    sp_model *m = state;
    advance_to(m, iter);
    double f[NC], nz;
    rank_mix(m);
    reduced_mix(m, mix_threshold(m, rank, thr), thr_global, f, 1);
    double e = over_range(m, f, lo, hi, &nz);
    uint64_t c = draw_count(e, nz, z_of(m, SP_ST_MODEL_REDUCED, rank, iter, (uint64_t)lo));
    return c > at_most ? at_most : c;
}

static double op_global_kth(void *state, int rank, int iter, double thr, uint64_t K)
{
    sp_model *m = state;
    advance_to(m, iter);
    rank_mix(m);
    if (!mix_alike(m) && thr > 0) {
        /* the ranks' shared threshold, on the cells' 1% grid: the ranks ask
         * with counts a little apart, and the one answer all exact ranks get
         * is then worked out once or twice, not once per rank */
        thr = mix_threshold(m, rank, thr);
        thr = exp(CELL * round(log(thr) / CELL));
    }
    for (int i = 0; i < GKCACHE; i++)
        if (m->gk[i].t == iter && m->gk[i].thr == thr && m->gk[i].K == K)
            return m->gk[i].val;
    double lo = thr, hi = thr * 2;
    double f[NC];
    for (int i = 0; i < 60; i++) { /* an upper end with fewer than K above it */
        double e = 0;
        reduced_mix(m, thr, hi, f, 0);
        for (int s = 0; s < NC; s++)
            e += m->Ns[s] * f[s];
        if (e < (double)K)
            break;
        lo = hi;
        hi *= 2;
    }
    for (int i = 0; i < 50 && hi / lo > 1 + 1e-7; i++) {
        double mid = sqrt(lo * hi), e = 0;
        reduced_mix(m, thr, mid, f, 0);
        for (int s = 0; s < NC; s++)
            e += m->Ns[s] * f[s];
        if (e > (double)K)
            lo = mid;
        else
            hi = mid;
    }
    gk_entry *e = &m->gk[m->gk_next];
    m->gk_next = (m->gk_next + 1) % GKCACHE;
    *e = (gk_entry){iter, K, thr, sqrt(lo * hi)};
    return e->val;
}

static void op_consume(void *state, int rank, int iter, double thr, double thr_global)
{
    sp_model *m = state;
    advance_to(m, iter);
    const rank_view *v = view_of(m, rank, iter);
    if (thr > 0 && m->rcells) { /* ranks of their own: the population takes as many as they do */
        rank_on(m, v);
        m->sum_count += expected_count(m, thr / v->R);
        rank_off(m);
        m->n_count++;
        if (thr_global >= 0)
            m->sum_ratio_global += thr_global / thr;
    }
    if (thr > 0) /* the population's chain moves with the rank's threshold in its own units */
        thr /= v->R;
    if (thr < 0) {
        m->n_dense++;
    } else if (thr_global < 0) {
        m->n_local++;
        m->sum_thr += thr;
    } else {
        m->n_global++;
        m->sum_thr += thr;
        m->sum_thr_global += thr_global;
    }
}

/* The union of d teams' top h in [lo, hi) (SparDL's Spar-All-Gather across
 * teams).  A team's value of an entry is the sum of its W ranks' accumulated
 * values: given the direction node k and the common node q, W times the
 * ranks' mean (the direction, the common part and the residual's mean along
 * the direction) plus W independent deviations (the residual's spread and the
 * rank's own noise), taken as a normal of W times their variance.  A team
 * keeps the entries whose sum passes T, with T such that a team keeps h of
 * [lo, hi) on average; given (k, q) the teams are independent, so an entry of
 * class s is in the union with 1 - (1 - pi)^d.  The sum leaves out that the
 * Spar-Reduce-Scatter forwards only each block's top entries: their sum is
 * what decides which entries a team keeps.  Kept in [h, min(d h, cap)]. */
static double team_pi(const sp_model *m, int s, int k, int q, double W, double T, const double *rm, const double *rv)
{
    double g = m->sigma[s] * m->gamma_scale;
    double mu = g * (sqrt(m->p.mean) * m->m_x[k] + sqrt(m->p.common) * m->z_x[q]) + rm[k];
    double sd = sqrt(W * rv[k]);
    if (sd <= 0)
        return fabs(W * mu) > T;
    return Q((T - W * mu) / sd) + Q((T + W * mu) / sd);
}

static double team_count(const sp_model *m, const double *ns, double W, int d, double T, double rm[][NM_MAX],
                         double rv[][NM_MAX])
{
    double sum = 0;
    for (int s = 0; s < NC; s++) {
        if (ns[s] <= 0)
            continue;
        double e = 0;
        for (int k = 0; k < m->nm; k++)
            for (int q = 0; q < m->nzn; q++) {
                double pi = team_pi(m, s, k, q, W, T, rm[s], rv[s]);
                e += m->m_w[k] * m->z_w[q] * (d > 0 ? -expm1((double)d * log1p(-(pi < 1 ? pi : 1 - 1e-16))) : pi);
            }
        sum += ns[s] * e;
    }
    return sum;
}

static uint64_t op_team_union(void *state, int rank, int iter, int W, int d, uint64_t h, int64_t lo, int64_t hi,
                              uint64_t cap)
{
    sp_model *m = state;
    advance_to(m, iter);
    uint64_t most = (uint64_t)d * h < cap ? (uint64_t)d * h : cap, least = h < most ? h : most;
    /* the entries of each class in [lo, hi); each class's residual mean along a node, and the variance
     * of a rank's deviation from it (the residual's spread and the rank's own noise) */
    double ns[NC], one[NC], rm[NC][NM_MAX], rv[NC][NM_MAX], nz = 0;
    for (int s = 0; s < NC; s++) {
        for (int j = 0; j < NC; j++)
            one[j] = j == s;
        ns[s] = m->Ns[s] > 0 ? over_range(m, one, lo, hi, &nz) : 0; /* nz: the range's non-zeros */
        double own = 0;
        for (int u = 0; u < m->ncomp; u++)
            own += m->comp_w[s][u] * own_sd(m, s, u) * own_sd(m, s, u);
        for (int k = 0; k < m->nm; k++) {
            double a = 0, b = 0, w = 0;
            for (int j = 0; j < NS; j++) {
                double pw = m->psi[s][k][j], x = m->sigma[s] * sv[j];
                w += pw;
                a += pw * x;
                b += pw * x * x;
            }
            rm[s][k] = w > 0 ? a / w : 0;
            rv[s][k] = (w > 0 ? fmax(b / w - rm[s][k] * rm[s][k], 0) : 0) + own;
        }
    }
    /* T: a team keeps h on average (bisection on log T; the count falls as T grows) */
    double lo_t = 1e-30, hi_t = 1e30;
    for (int i = 0; i < 200 && hi_t / lo_t > 1 + 1e-9; i++) {
        double mid = sqrt(lo_t * hi_t);
        if (team_count(m, ns, (double)W, 0, mid, rm, rv) > (double)h)
            lo_t = mid;
        else
            hi_t = mid;
    }
    double u = team_count(m, ns, (double)W, d, sqrt(lo_t * hi_t), rm, rv);
    /* one draw per block and iteration: the d holders of a block find the same union */
    (void)rank;
    uint64_t c = draw_count(u, nz, z_of(m, SP_ST_MODEL_UNION, 0, iter, (uint64_t)lo + 1));
    return c < least ? least : c > most ? most : c;
}

static const sp_model_ops ops = {op_count_above, op_kth,        op_std,           op_select,
                                 op_index_at,    op_split,      op_union,         op_reduced_above,
                                 op_global_kth,  op_consume,    op_team_union};

const sp_model_ops *sp_model_ops_table(void) { return &ops; }

/* ---- construction ------------------------------------------------------------- */

sp_model *sp_model_new(const sp_profile *p, uint64_t seed, int ranks, int settle, int warmup, double density,
                       sp_model_ablation ablation, char *err, size_t errlen)
{
    tables_init();
    sp_model *m = calloc(1, sizeof *m);
    if (!m || sp_profile_copy(&m->p, p) != 0) {
        free(m);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->seed = seed;
    m->ablation = ablation;
    m->P = ranks;
    m->settle = settle;
    m->density = density;
    m->L = p->nlayers;
    for (int i = 0; i < GKCACHE; i++)
        m->gk[i].t = -1;
    m->mix_t = -1;
    /* the nodes: |M| at the positive Gauss-Hermite nodes (twice their weight),
     * the common component at its own; one node at 0 where there is none */
    if (p->mean > 0) {
        m->nm = NM_MAX;
        for (int k = 0; k < NM_MAX; k++) {
            m->m_x[k] = hz_x[NM_MAX + k];
            m->m_w[k] = 2 * hz_w[NM_MAX + k];
        }
    } else {
        m->nm = 1;
        m->m_x[0] = 0;
        m->m_w[0] = 1;
    }
    if (p->common > 0) {
        m->nzn = NZ_MAX;
        double zx[NZ_MAX], zw[NZ_MAX];
        gauss_hermite(NZ_MAX, zx, zw);
        for (int q = 0; q < NZ_MAX; q++) {
            m->z_x[q] = zx[q];
            m->z_w[q] = zw[q];
        }
    } else {
        m->nzn = 1;
        m->z_x[0] = 0;
        m->z_w[0] = 1;
    }
    /* the class grid: every layer's +-4.5 spreads */
    double gmin = INFINITY, gmax = -INFINITY;
    for (int l = 0; l < m->L; l++) {
        double a = p->layers[l].log10_scale - 4.5 * p->layers[l].log10_spread;
        double b = p->layers[l].log10_scale + 4.5 * p->layers[l].log10_spread;
        gmin = a < gmin ? a : gmin;
        gmax = b > gmax ? b : gmax;
    }
    if (gmax - gmin < 1e-3) {
        gmin -= 0.5e-3;
        gmax += 0.5e-3;
    }
    double h = (gmax - gmin) / (NC - 1);
    for (int s = 0; s < NC; s++)
        m->sigma[s] = pow(10.0, gmin + h * s);
    /* a rank's own noise: one normal, or two (spikes), or two for each row of
     * the noise's table, of which a class takes its row's (by its scale) */
    for (int b = 0; b < (p->nnoise > 0 ? p->nnoise : 1); b++) {
        double e = p->nnoise > 0 ? p->noise[b].spikes : p->spikes;
        double ks = p->nnoise > 0 ? p->noise[b].spike_scale : p->spike_scale, base = sp_noise_base(e, ks);
        int u0 = m->ncomp, two = e > 0 && ks > 1;
        m->comp_f[m->ncomp++] = base;
        if (two)
            m->comp_f[m->ncomp++] = base * ks;
        for (int s = 0; s < NC; s++)
            if (p->nnoise == 0 || sp_profile_noise_row(p, gmin + h * s) == b) {
                m->comp_w[s][u0] = two ? 1 - e : 1;
                if (two)
                    m->comp_w[s][u0 + 1] = e;
            }
    }
    m->nls = calloc((size_t)m->L * NC, sizeof *m->nls);
    m->nz = calloc((size_t)m->L, sizeof *m->nz);
    m->cells = calloc(NCELL, sizeof *m->cells);
    m->cell_epoch = 1;
    m->spare[0] = calloc(1, sizeof(cell_t));
    m->spare[1] = calloc(1, sizeof(cell_t));
    m->sm = malloc(sizeof *m->sm);
    if (p->rank_sd > 0) /* without it every rank answers as the population: no own tails */
        m->rcells = calloc(NRCELL, sizeof *m->rcells);
    if (!m->nls || !m->nz || !m->cells || !m->spare[0] || !m->spare[1] || !m->sm) {
        snprintf(err, errlen, "out of memory for the model of %d layers", m->L);
        sp_model_free(m);
        return NULL;
    }
    for (int l = 0; l < m->L; l++) {
        const sp_profile_layer *ly = &p->layers[l];
        double nz = (double)ly->size * (1 - ly->zeros), *w = &m->nls[l * NC], sum = 0;
        for (int s = 0; s < NC; s++) {
            double x = gmin + h * s;
            if (ly->log10_spread > 0) {
                double a = (x - 0.5 * h - ly->log10_scale) / ly->log10_spread;
                double b = (x + 0.5 * h - ly->log10_scale) / ly->log10_spread;
                w[s] = Phi(b) - Phi(a);
            } else {
                double d = fabs(x - ly->log10_scale) / h;
                w[s] = d < 1 ? 1 - d : 0; /* between the two nearest classes */
            }
            sum += w[s];
        }
        for (int s = 0; s < NC; s++) {
            w[s] = sum > 0 ? w[s] / sum * nz : 0;
            m->Ns[s] += w[s];
        }
        m->nz[l] = nz;
        m->nz_total += nz;
    }
    if (ablation == SP_MODEL_UNIFORM) /* every layer holds the same mix of classes */
        for (int l = 0; l < m->L; l++)
            for (int s = 0; s < NC; s++)
                m->nls[l * NC + s] = m->nz_total > 0 ? m->Ns[s] * m->nz[l] / m->nz_total : 0;
    for (int s = 0; s < NC; s++)
        for (int k = 0; k < m->nm; k++)
            m->psi[s][k][NG] = 1.0; /* no residual yet */
    /* --settle: local error feedback, each rank consuming its exact top-k */
    uint64_t k = (uint64_t)floor((double)p->n * density);
    set_iteration(m, -settle);
    while (m->state_t < 0) {
        note_share(m);
        step(m, 1, kth_value(m, (double)k), -1);
        set_iteration(m, m->state_t + 1);
    }
    m->last_mode = settle > 0 ? 1 : 0;
    m->last_count = m->k = (double)k;
    m->warmup = warmup;
    return m;
}

void sp_model_free(sp_model *m)
{
    if (!m)
        return;
    sp_profile_free(&m->p);
    free(m->nls);
    free(m->nz);
    if (m->cells)
        for (int i = 0; i < NCELL; i++)
            if (m->cells[i]) {
                free(m->cells[i]->plan);
                free(m->cells[i]);
            }
    for (int i = 0; i < 2; i++)
        if (m->spare[i]) {
            free(m->spare[i]->plan);
            free(m->spare[i]);
        }
    free(m->cells);
    free(m->one_terms);
    free(m->rcells);
    free(m->views);
    free(m->mix_all);
    free(m->share);
    free(m->ret);
    free(m->sm);
    free(m->walk);
    free(m->rank_walk);
    free(m);
}

double sp_model_union_over_k(sp_model *m, int P, uint64_t k)
{
    int keep = m->P;
    m->P = P;
    reset_cells(m);
    double thr = kth_value(m, (double)k), u[NC], sum = 0;
    reduced_at(m, thr, -1, u);
    for (int s = 0; s < NC; s++)
        sum += m->Ns[s] * u[s];
    m->P = keep;
    reset_cells(m);
    return sum / (double)k;
}
