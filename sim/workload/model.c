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
 *  - Residuals: error feedback leaves an entry in the residual until it is
 *    consumed.  For each class the model keeps the distribution of |residual|
 *    over a log-spaced grid, with a point mass at 0 (consumed last time, or
 *    never accumulated).  An iteration adds a gradient of standard deviation
 *    gamma = sigma_s S(t): acc = residual + g.  Entries whose |acc| passes the
 *    ranks' threshold are consumed (every selected entry, or those whose
 *    reduced value passes the global threshold, or all of them in a dense
 *    iteration); the others keep |acc| as their residual.  This Markov chain
 *    on the residual, per class, is exact for one coordinate and one rank; it
 *    keeps the truncation a threshold imposes on what stays behind.  The
 *    ranks of a process share it (they are exchangeable); it moves on once
 *    per iteration with the ranks' mean threshold.
 *  - Across ranks: given the common component z of the gradient (profile
 *    "common"), the ranks' residuals and own noise are independent, so given
 *    z each rank selects with p(z) and J ~ Binomial(P, p(z)) ranks select an
 *    entry; the union is 1 - (1 - p(z))^P averaged over z (Gauss-Hermite), and
 *    a reduced value is the selected value itself for J = 1, or, for J >= 2,
 *    normal with J times the selected values' mean and variance.
 *  - What a rank sees: counts are drawn around the population's expectation
 *    with one normal deviate per (rank, iteration), so several thresholds of
 *    one rank give ordered counts; where the entries lie is a multinomial draw
 *    over layers, then over the ranges that cut a layer.
 * Threshold-dependent quantities are tabulated per iteration in 1% cells of
 * the threshold, computed when first asked for, and interpolated.
 */
#include "model.h"
#include "hash.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 64        /* scale classes */
#define NG 96        /* residual grid bins (besides the mass at 0) */
#define NZ 10        /* Gauss-Hermite nodes for the common component */
#define NCELL 64     /* threshold cells kept per iteration */
#define CELL 0.01    /* a cell spans 1% of threshold */
#define RG_LO 0.02   /* residual grid: [RG_LO, RG_HI] x sigma_s */
#define RG_HI 4000.0
#define STRATA 16

/* ---- numerics ------------------------------------------------------------- */

static double gh_z[NZ], gh_w[NZ];
static double strata[STRATA];
static double rg_edge[NG + 1], rg_mid[NG]; /* the residual grid in units of sigma_s */

static void tables_init(void)
{
    if (gh_w[0] > 0)
        return;
    gsl_integration_fixed_workspace *w = gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, NZ, 0, 0.5, 0, 0);
    if (w) {
        const double *x = gsl_integration_fixed_nodes(w), *wt = gsl_integration_fixed_weights(w);
        double sum = 0;
        for (int i = 0; i < NZ; i++)
            sum += wt[i];
        for (int i = 0; i < NZ; i++) {
            gh_z[i] = x[i];
            gh_w[i] = wt[i] / sum;
        }
        gsl_integration_fixed_free(w);
    } else {
        gh_z[0] = 0;
        gh_w[0] = 1; /* a single node: no common component */
    }
    for (int i = 0; i < STRATA; i++)
        strata[i] = gsl_cdf_ugaussian_Pinv((i + 0.5) / STRATA);
    double r = log(RG_HI / RG_LO) / NG;
    for (int j = 0; j <= NG; j++)
        rg_edge[j] = RG_LO * exp(r * j);
    rg_edge[0] = 0;
    for (int j = 0; j < NG; j++)
        rg_mid[j] = j == 0 ? 0.5 * rg_edge[1] : sqrt(rg_edge[j] * rg_edge[j + 1]);
}

static inline double Q(double x) { return 0.5 * erfc(x * M_SQRT1_2); }
static inline double Phi(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline double phi(double x) { return exp(-0.5 * x * x) * 0.3989422804014327; }

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

/* what a threshold cell holds, per class: the tail P(|acc| > t), and given
 * each common value z the selection probability and the selected values'
 * mean and variance */
#define NXCACHE 4
typedef struct {
    int64_t cell;
    int have_z;
    double tail[NC];
    double p[NC][NZ], m1[NC][NZ], v1[NC][NZ];
    /* reduced_class at a few x (owners share the global threshold) */
    double xs[NXCACHE], xf[NXCACHE][NC];
    int nx, xnext;
} cell_t;

struct sp_model {
    sp_model_ablation ablation;
    sp_profile p;
    uint64_t seed;
    int P, settle;
    double density;
    double sigma[NC];
    int L;
    double *nls;     /* [l * NC + s]: non-zero entries of class s in layer l */
    double *nz;      /* [l]: non-zero entries of layer l */
    double Ns[NC];
    double nz_total;
    double psi[NC][NG + 1]; /* residual distribution of each class: [0] the mass at 0, [j+1] bin j */
    int state_t;            /* the run iteration psi is the state of (before its gradient) */
    double gamma_scale;     /* S(t) of that iteration */
    double *walk;           /* ln S(t) / drift, per gradient iteration */
    int nwalk;
    /* the rules the ranks consumed with in state_t */
    double sum_thr, sum_thr_global;
    int n_local, n_global, n_dense;
    double last_thr, last_thr_global; /* the previous iteration's rule (for skipped ones) */
    int last_mode;                    /* 0 none, 1 local, 2 global, 3 dense */
    cell_t *cells;                    /* NCELL, for state_t */
    int ncells_used;
    double gk_thr, gk_val;
    uint64_t gk_K;
    int gk_t;
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
        for (int t = m->nwalk; t < nw; t++)
            w[t] = t == 0 ? 0 : w[t - 1] + sp_walk_step(m->seed, t);
        m->walk = w;
        m->nwalk = nw;
    }
    return exp(m->p.drift * m->walk[g]);
}

/* residual value (absolute) of grid point j of class s; j = 0 is the mass at 0 */
static inline double resid(const sp_model *m, int s, int j) { return j == 0 ? 0 : m->sigma[s] * rg_mid[j - 1]; }

/* ---- threshold cells -------------------------------------------------------- */

static void cell_tail(const sp_model *m, cell_t *c, double t)
{
    for (int s = 0; s < NC; s++) {
        double g = m->sigma[s] * m->gamma_scale, tail = 0;
        if (m->Ns[s] <= 0) {
            c->tail[s] = 0;
            continue;
        }
        for (int j = 0; j <= NG; j++) {
            double w = m->psi[s][j];
            if (w <= 0)
                continue;
            double r = resid(m, s, j);
            tail += w * (Q((t - r) / g) + Q((t + r) / g));
        }
        c->tail[s] = tail;
    }
}

/* given z: acc = r + g with g ~ N(mu_z, sd^2) (mu_z the common part, sd the
 * rank's own) and r the residual (its sign independent of z) */
static void cell_z(const sp_model *m, cell_t *c, double t)
{
    double cc = m->p.common;
    for (int s = 0; s < NC; s++) {
        double g = m->sigma[s] * m->gamma_scale, sd = g * sqrt(1 - cc);
        if (sd <= 0)
            sd = 1e-300;
        for (int k = 0; k < NZ; k++) {
            double mu = g * sqrt(cc) * gh_z[k], p = 0, e1 = 0, e2 = 0;
            if (m->Ns[s] > 0)
                for (int j = 0; j <= NG; j++) {
                    double w = m->psi[s][j];
                    if (w <= 0)
                        continue;
                    /* the residual's sign is + or - with equal odds */
                    double r = resid(m, s, j);
                    for (int sg = 0; sg < (j ? 2 : 1); sg++) {
                        double mm = mu + (sg ? -r : r), ww = j ? 0.5 * w : w;
                        double al = (t - mm) / sd, be = (t + mm) / sd;
                        double qa = Q(al), qb = Q(be), pa = phi(al), pb = phi(be);
                        p += ww * (qa + qb);
                        e1 += ww * ((mm * qa + sd * pa) - (-mm * qb + sd * pb));
                        e2 += ww * ((mm * mm + sd * sd) * (qa + qb) + sd * (t + mm) * pa + sd * (t - mm) * pb);
                    }
                }
            c->p[s][k] = p;
            c->m1[s][k] = p > 0 ? e1 / p : 0;
            double v = p > 0 ? e2 / p - c->m1[s][k] * c->m1[s][k] : 0;
            c->v1[s][k] = v > 0 ? v : 0;
        }
    }
    c->have_z = 1;
}

/* the cell of threshold cell index ci, computed when first asked for */
static cell_t *cell_get(sp_model *m, int64_t ci, int need_z)
{
    cell_t *c = NULL;
    for (int i = 0; i < m->ncells_used; i++)
        if (m->cells[i].cell == ci) {
            c = &m->cells[i];
            break;
        }
    double t = exp(CELL * (double)ci);
    if (!c) {
        if (m->ncells_used < NCELL)
            c = &m->cells[m->ncells_used++];
        else
            c = &m->cells[(uint64_t)ci % NCELL]; /* full: reuse a slot */
        c->cell = ci;
        c->have_z = 0;
        c->nx = c->xnext = 0;
        cell_tail(m, c, t);
    }
    if (need_z && !c->have_z)
        cell_z(m, c, t);
    return c;
}

/* the two cells around t and the weight of the upper one */
static void cells_around(sp_model *m, double t, int need_z, cell_t **lo, cell_t **hi, double *f)
{
    double x = log(t > 1e-300 ? t : 1e-300) / CELL;
    int64_t ci = (int64_t)floor(x);
    *f = x - (double)ci;
    *lo = cell_get(m, ci, need_z);
    *hi = cell_get(m, ci + 1, need_z);
    if ((*lo)->cell != ci) /* the upper one took the lower's slot */
        *lo = cell_get(m, ci, need_z);
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
    cells_around(m, t, 0, &a, &b, &f);
    for (int s = 0; s < NC; s++)
        tail[s] = (1 - f) * a->tail[s] + f * b->tail[s];
}

/* ---- the state moves on ------------------------------------------------------ */

static void reset_cells(sp_model *m)
{
    m->ncells_used = 0;
    m->gk_t = -1;
}

static void set_iteration(sp_model *m, int t)
{
    m->state_t = t;
    m->gamma_scale = scale_at(m, m->settle + t);
    reset_cells(m);
}

/* P(|x + S| > y) for a rank's own |acc| = x and the sum S of j' others'
 * selected values (given z), j' ~ Binomial(P - 1, p) */
static double delivered_given(const sp_model *m, double x, double y, double p, double m1, double v1)
{
    uint64_t n = (uint64_t)(m->P - 1);
    double mean = (double)n * p, sum = 0;
    if (n == 0 || p <= 0)
        return x > y;
    if (mean < 12 && p < 0.5) {
        double pmf = exp((double)n * log1p(-p)), r = p / (1 - p), cum = pmf;
        sum += pmf * (x > y);
        for (uint64_t j = 0; j < n && cum < 1 - 1e-9; j++) {
            pmf *= (double)(n - j) / (double)(j + 1) * r;
            cum += pmf;
            double jj = (double)(j + 1), mu = x + jj * m1, sd = sqrt(jj * v1);
            sum += pmf * (sd > 0 ? Q((y - mu) / sd) + Q((y + mu) / sd) : fabs(mu) > y);
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
        sum += (sj > 0 ? Q((y - mu) / sj) + Q((y + mu) / sj) : fabs(mu) > y) / STRATA;
    }
    return sum;
}

/* one iteration of error feedback with the rule (mode, t, y): every class's
 * residual distribution moves on */
static void step(sp_model *m, int mode, double t, double y)
{
    cell_t *zc = NULL;
    if (mode == 2) {
        cell_t *a, *b;
        double f;
        cells_around(m, t, 1, &a, &b, &f);
        zc = f < 0.5 ? a : b;
    }
    for (int s = 0; s < NC; s++) {
        if (m->Ns[s] <= 0)
            continue;
        double g = m->sigma[s] * m->gamma_scale;
        double next[NG + 1];
        memset(next, 0, sizeof next);
        /* where |acc| = x above t is consumed, by grid bin of x */
        double cons[NG];
        for (int b = 0; b < NG; b++) {
            double x = m->sigma[s] * rg_mid[b];
            if (m->sigma[s] * rg_edge[b + 1] > t && x <= t)
                x = t; /* a bin across the threshold: its selected part sits just above it */
            if (mode == 3)
                cons[b] = 1;
            else if (mode == 0 || m->sigma[s] * rg_edge[b + 1] <= t)
                cons[b] = 0;
            else if (mode == 1)
                cons[b] = 1;
            else {
                double h = 0;
                for (int k = 0; k < NZ; k++)
                    h += gh_w[k] * delivered_given(m, x, y, zc->p[s][k], zc->m1[s][k], zc->v1[s][k]);
                cons[b] = h;
            }
        }
        for (int j = 0; j <= NG; j++) {
            double w = m->psi[s][j];
            if (w <= 0)
                continue;
            double r = resid(m, s, j);
            /* |r + g| falls in bin b of x = sigma_s * [e_b, e_b+1) */
            double prev = 0; /* P(|acc| < lower edge) */
            for (int b = 0; b < NG; b++) {
                double hi = m->sigma[s] * rg_edge[b + 1];
                double cdf = b == NG - 1 ? 1.0 : Phi((hi - r) / g) - Phi((-hi - r) / g);
                double mass = cdf - prev;
                prev = cdf;
                if (mass <= 0)
                    continue;
                double lo = m->sigma[s] * rg_edge[b];
                if (mode != 3 && mode != 0 && lo < t && hi > t) {
                    /* the bin straddles the threshold: the part below stays */
                    double below = Phi((t - r) / g) - Phi((-t - r) / g) - (b ? Phi((lo - r) / g) - Phi((-lo - r) / g) : 0);
                    if (below < 0)
                        below = 0;
                    if (below > mass)
                        below = mass;
                    next[b + 1] += w * below;
                    next[b + 1] += w * (mass - below) * (1 - cons[b]);
                    next[0] += w * (mass - below) * cons[b];
                } else {
                    next[b + 1] += w * mass * (1 - cons[b]);
                    next[0] += w * mass * cons[b];
                }
            }
        }
        memcpy(m->psi[s], next, sizeof next);
    }
}

/* the state of run iteration t: the iterations between move on with the
 * rule the ranks used (skipped ones with the last one) */
static void advance_to(sp_model *m, int t)
{
    while (m->state_t < t) {
        int mode;
        double thr, y;
        if (m->n_dense) {
            mode = 3;
            thr = y = 0;
        } else if (m->n_global) {
            mode = 2;
            thr = m->sum_thr / m->n_global;
            y = m->sum_thr_global / m->n_global;
        } else if (m->n_local) {
            mode = 1;
            thr = m->sum_thr / m->n_local;
            y = -1;
        } else {
            mode = m->last_mode;
            thr = m->last_thr;
            y = m->last_thr_global;
        }
        step(m, mode, thr, y);
        m->last_mode = mode;
        m->last_thr = thr;
        m->last_thr_global = y;
        m->sum_thr = m->sum_thr_global = 0;
        m->n_local = m->n_global = m->n_dense = 0;
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

/* P(|R| > x) for R the sum of j >= 1 selected values (given z) */
static double sum_tail(const cell_t *c, int s, int k, double j, double x, double t, const sp_model *m)
{
    if (j < 1.5) {
        /* one value: |acc| > x given |acc| > t: the tail of the mixture at max(x, t) */
        double p = c->p[s][k];
        if (p <= 0)
            return 0;
        if (x <= t)
            return 1;
        double g = m->sigma[s] * m->gamma_scale, sd = g * sqrt(1 - m->p.common), mu = g * sqrt(m->p.common) * gh_z[k];
        double tail = 0;
        for (int jj = 0; jj <= NG; jj++) {
            double w = m->psi[s][jj];
            if (w <= 0)
                continue;
            double r = resid(m, s, jj);
            if (jj == 0)
                tail += w * (Q((x - mu) / sd) + Q((x + mu) / sd));
            else
                tail += 0.5 * w * (Q((x - mu - r) / sd) + Q((x + mu + r) / sd) + Q((x - mu + r) / sd) + Q((x + mu - r) / sd));
        }
        return tail / p;
    }
    double mm = j * c->m1[s][k], sd = sqrt(j * c->v1[s][k]);
    if (sd <= 0)
        return fabs(mm) > x;
    return Q((x - mm) / sd) + Q((x + mm) / sd);
}

/* per entry of class s: in the union, with |reduced| > x (x < 0: the union) */
static double reduced_class(const sp_model *m, const cell_t *c, int s, double x, double t)
{
    double f = 0;
    uint64_t n = (uint64_t)m->P;
    for (int k = 0; k < NZ; k++) {
        double p = c->p[s][k];
        if (p <= 1e-15)
            continue;
        if (m->ablation == SP_MODEL_DISJOINT) { /* no two ranks select the same entry */
            double u = (double)n * p < 1 ? (double)n * p : 1;
            f += gh_w[k] * (x < 0 ? u : u * sum_tail(c, s, k, 1, x, t, m));
            continue;
        }
        if (x < 0) {
            f += gh_w[k] * -expm1((double)n * log1p(-(p < 1 ? p : 1 - 1e-16)));
            continue;
        }
        double mean = (double)n * p, sum = 0;
        if (mean < 12 && p < 0.5) {
            double pmf = exp((double)n * log1p(-p)), r = p / (1 - p), cum = pmf;
            for (uint64_t j = 0; j < n && cum < 1 - 1e-10; j++) {
                pmf *= (double)(n - j) / (double)(j + 1) * r;
                cum += pmf;
                sum += pmf * sum_tail(c, s, k, (double)(j + 1), x, t, m);
            }
        } else {
            double sd = sqrt(mean * (1 - p));
            for (int i = 0; i < STRATA; i++) {
                double j = floor(mean + sd * strata[i] + 0.5);
                if (j < 1)
                    continue;
                if (j > (double)n)
                    j = (double)n;
                sum += sum_tail(c, s, k, j, x, t, m) / STRATA;
            }
        }
        f += gh_w[k] * sum;
    }
    return f;
}

/* every class's reduced_class at the cell's own threshold, remembered for
 * the last few x */
static const double *reduced_cell(const sp_model *m, cell_t *c, double x, int keep)
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
    cells_around(m, t, 1, &a, &b, &w);
    const double *fa = reduced_cell(m, a, x, keep);
    double va[NC];
    memcpy(va, fa, sizeof va);
    const double *fb = reduced_cell(m, b, x, keep);
    for (int s = 0; s < NC; s++)
        f[s] = (1 - w) * va[s] + w * fb[s];
}

static void reduced_at(sp_model *m, double t, double x, double *f) { reduced_at_keep(m, t, x, f, 1); }

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

static uint64_t op_count_above(void *state, int rank, int iter, double thr)
{
    sp_model *m = state;
    advance_to(m, iter);
    return draw_count(expected_count(m, thr), m->nz_total, z_of(m, SP_ST_MODEL_COUNT, rank, iter, 0));
}

static double op_kth(void *state, int rank, int iter, uint64_t k)
{
    (void)rank;
    sp_model *m = state;
    advance_to(m, iter);
    return kth_value(m, (double)k);
}

static double op_std(void *state, int rank, int iter)
{
    (void)rank;
    sp_model *m = state;
    advance_to(m, iter);
    double v = 0;
    for (int s = 0; s < NC; s++) {
        double g = m->sigma[s] * m->gamma_scale, e = 0;
        for (int j = 0; j <= NG; j++)
            e += m->psi[s][j] * (resid(m, s, j) * resid(m, s, j) + g * g);
        v += m->Ns[s] * e;
    }
    return sqrt(v / (double)m->p.n);
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
    tails_at(m, thr, tail);
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

static void op_split(void *state, int rank, int iter, const sp_model_set *s, const int64_t *bounds, int nreg,
                     uint64_t *counts)
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
            counts[r] += c;
            left -= c;
            room -= ov;
        }
        if (left > 0) /* ranges that do not cover the layer: the last one takes it */
            counts[nreg - 1] += left;
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
    reduced_at(m, thr, -1, u);
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
    reduced_at(m, thr, thr_global, f);
    double e = over_range(m, f, lo, hi, &nz);
    uint64_t c = draw_count(e, nz, z_of(m, SP_ST_MODEL_REDUCED, rank, iter, (uint64_t)lo));
    return c > at_most ? at_most : c;
}

static double op_global_kth(void *state, int iter, double thr, uint64_t K)
{
    sp_model *m = state;
    advance_to(m, iter);
    if (m->gk_t == iter && m->gk_thr == thr && m->gk_K == K)
        return m->gk_val;
    double lo = thr, hi = thr * 2;
    double f[NC];
    for (int i = 0; i < 60; i++) { /* an upper end with fewer than K above it */
        double e = 0;
        reduced_at_keep(m, thr, hi, f, 0);
        for (int s = 0; s < NC; s++)
            e += m->Ns[s] * f[s];
        if (e < (double)K)
            break;
        lo = hi;
        hi *= 2;
    }
    for (int i = 0; i < 50 && hi / lo > 1 + 1e-7; i++) {
        double mid = sqrt(lo * hi), e = 0;
        reduced_at_keep(m, thr, mid, f, 0);
        for (int s = 0; s < NC; s++)
            e += m->Ns[s] * f[s];
        if (e > (double)K)
            lo = mid;
        else
            hi = mid;
    }
    m->gk_t = iter;
    m->gk_thr = thr;
    m->gk_K = K;
    m->gk_val = sqrt(lo * hi);
    return m->gk_val;
}

static void op_consume(void *state, int rank, int iter, double thr, double thr_global)
{
    (void)rank;
    sp_model *m = state;
    advance_to(m, iter);
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

static const sp_model_ops ops = {op_count_above, op_kth,   op_std,           op_select,     op_index_at,
                                 op_split,       op_union, op_reduced_above, op_global_kth, op_consume};

const sp_model_ops *sp_model_ops_table(void) { return &ops; }

/* ---- construction ------------------------------------------------------------- */

sp_model *sp_model_new(const sp_profile *p, uint64_t seed, int ranks, int settle, double density,
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
    m->gk_t = -1;
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
    m->nls = calloc((size_t)m->L * NC, sizeof *m->nls);
    m->nz = calloc((size_t)m->L, sizeof *m->nz);
    m->cells = calloc(NCELL, sizeof *m->cells);
    if (!m->nls || !m->nz || !m->cells) {
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
        m->psi[s][0] = 1.0; /* no residual yet */
    /* --settle: local error feedback, each rank consuming its exact top-k */
    uint64_t k = (uint64_t)floor((double)p->n * density);
    set_iteration(m, -settle);
    while (m->state_t < 0) {
        step(m, 1, kth_value(m, (double)k), -1);
        set_iteration(m, m->state_t + 1);
    }
    m->last_mode = settle > 0 ? 1 : 0;
    return m;
}

void sp_model_free(sp_model *m)
{
    if (!m)
        return;
    sp_profile_free(&m->p);
    free(m->nls);
    free(m->nz);
    free(m->cells);
    free(m->walk);
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
