/* model.c - a rank's accumulated gradient as a statistical model.
 *
 * The same process as the generator (profile.h), described by populations
 * instead of vectors:
 *  - Scale classes: log10 sigma on a grid of SP_CLASSES points covering every
 *    layer's distribution; layer l holds n[l][s] non-zero entries of class s
 *    (its normal density of log10 sigma integrated over the class's cell).
 *    Within a layer, entries of a class are spread uniformly over its indices
 *    (where large entries sit is decided by the layers: the notes on real
 *    gradients show region imbalance explained by per-layer counts alone).
 *  - Residual ages: error feedback leaves an entry in the residual until it
 *    is consumed, so its accumulated value is the sum of the gradients since
 *    then: given its class s and age a (iterations since it was last
 *    consumed) it is normal with variance sigma_s^2 D_a, D_a the sum of S(t)^2
 *    over those iterations.  pi[s][a] is the share of class s at age a; each
 *    iteration, the entries the ranks consumed start again at age 1 and the
 *    others age by one (ages past 32 live in buckets of doubling width).
 *    One age state is shared by the ranks of a process (they are exchangeable;
 *    each rank's counts are drawn around the shared expectation), advanced
 *    with the ranks' mean consumption.
 *  - What an algorithm asks: the count above a threshold t is
 *    sum_s N_s sum_a pi[s][a] erfc(t / (sigma_s sqrt(2 D_a))), drawn around
 *    that mean per (rank, iteration) with one normal deviate, so counts at
 *    several thresholds of one rank stay ordered; where the entries lie is a
 *    multinomial draw over layers, then over the ranges that cut a layer; the
 *    ranks' selections cover sum_s n_s (1 - (1 - P_s)^P) distinct entries of a
 *    range (P_s a class's selection probability; ranks select independently
 *    given the class, their overlap comes from the shared scales); a reduced
 *    value is the sum of the J ~ Binomial(P, P_s) selected values: for J = 1
 *    the selected value itself (a truncated normal mixture), for J > 1 a
 *    normal with J times its second moment, raised by the common component.
 * Nothing here is O(n): memory is O(layers x classes + classes x ages).
 */
#include "model.h"
#include "hash.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SP_CLASSES 64
#define SINGLE_AGES 32
#define MAX_AGES 64
#define PS_CACHE 8

typedef struct {
    double thr;
    double ps[SP_CLASSES]; /* selection probability of each class at thr */
    int valid;
} ps_entry;

struct sp_model {
    sp_profile p;
    uint64_t seed;
    int P, settle;
    double density;
    int S;
    double sigma[SP_CLASSES];
    int L;
    double *nls;     /* [l * S + s]: non-zero entries of class s in layer l */
    double *nz;      /* [l]: non-zero entries of layer l */
    double Ns[SP_CLASSES];
    double nz_total;
    int A;
    double age_rep[MAX_AGES], age_width[MAX_AGES];
    double pi[SP_CLASSES * MAX_AGES];    /* the age state for run iteration state_t */
    double qsum[SP_CLASSES * MAX_AGES];  /* consumption accumulated in state_t */
    double qlast[SP_CLASSES * MAX_AGES]; /* the last iteration's mean consumption */
    int nq;
    int state_t;
    double D[MAX_AGES];                  /* D_a at state_t */
    double *q2;                          /* prefix sums of S(t)^2 over gradient iterations */
    int nq2;
    ps_entry cache[PS_CACHE];
    int cache_next;
    double gk_thr, gk_val; /* last global_kth */
    uint64_t gk_K;
    int gk_t;
};

/* ---- helpers --------------------------------------------------------------- */

static double normal_cdf(double x) { return 0.5 * erfc(-x / M_SQRT2); }

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

/* a count with mean `mean` out of `cap`, moved by `z` standard deviations */
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

static double z_of(const sp_model *m, int stream, int rank, int iter, uint64_t extra)
{
    return sp_normal_from_bits(sp_mix64(sp_stream_key(m->seed, (uint64_t)stream, (uint64_t)rank, (uint64_t)iter) +
                                        extra * SP_GOLD));
}

static uint64_t bits_of(const sp_model *m, int stream, int rank, int iter, uint64_t extra)
{
    return sp_mix64(sp_stream_key(m->seed, (uint64_t)stream, (uint64_t)rank, (uint64_t)iter) + extra * SP_GOLD);
}

/* the middles of STRATA equal-probability strata of the unit normal */
#define STRATA 16
static double strata[STRATA];

static void strata_init(void)
{
    if (strata[STRATA - 1] > 0)
        return;
    for (int i = 0; i < STRATA; i++)
        strata[i] = gsl_cdf_ugaussian_Pinv((i + 0.5) / STRATA);
}

/* ---- the overall scale and the accumulated variance ----------------------- */

/* prefix sum of S(t)^2 over gradient iterations 0..t (0 for t < 0) */
static double q2_at(sp_model *m, double t)
{
    if (t < 0)
        return 0;
    int need = (int)ceil(t) + 1;
    if (need > m->nq2) {
        int cap = need > 2 * m->nq2 ? need : 2 * m->nq2;
        double *q = realloc(m->q2, (size_t)cap * sizeof *q);
        if (!q)
            return t + 1; /* no drift, if memory runs out */
        /* the walk from its start (O(t), once per doubling) */
        double walk = 0, sum = 0;
        for (int i = 0; i < cap; i++) {
            if (i > 0)
                walk += sp_walk_step(m->seed, i);
            double s = exp(m->p.drift * walk);
            sum += s * s;
            q[i] = sum;
        }
        m->q2 = q;
        m->nq2 = cap;
    }
    int i = (int)floor(t);
    double f = t - i, lo = m->q2[i], hi = i + 1 < m->nq2 ? m->q2[i + 1] : lo;
    return lo + f * (hi - lo);
}

/* D_a for the run iteration the state is at: the sum of S^2 over the last
 * age_rep[a] gradient iterations (not before the first) */
static void compute_D(sp_model *m)
{
    double g = (double)(m->settle + m->state_t);
    for (int a = 0; a < m->A; a++) {
        double d = q2_at(m, g) - q2_at(m, g - m->age_rep[a]);
        m->D[a] = d > 0 ? d : q2_at(m, g) - q2_at(m, g - 1);
    }
}

/* ---- the age state ------------------------------------------------------------ */

static double ps_of_class(const sp_model *m, int s, double thr)
{
    double p = 0;
    const double *pi = &m->pi[s * MAX_AGES];
    for (int a = 0; a < m->A; a++)
        if (pi[a] > 0)
            p += pi[a] * erfc(thr / (m->sigma[s] * sqrt(2.0 * m->D[a])));
    return p;
}

/* selection probabilities of every class at thr, for the current state */
static const double *ps_at(sp_model *m, double thr)
{
    for (int i = 0; i < PS_CACHE; i++)
        if (m->cache[i].valid && m->cache[i].thr == thr)
            return m->cache[i].ps;
    ps_entry *e = &m->cache[m->cache_next];
    m->cache_next = (m->cache_next + 1) % PS_CACHE;
    e->thr = thr;
    e->valid = 1;
    for (int s = 0; s < m->S; s++)
        e->ps[s] = thr < 0 ? 1.0 : ps_of_class(m, s, thr);
    return e->ps;
}

/* the state moves on to the next iteration with the mean consumption q */
static void step(sp_model *m, const double *q)
{
    double next[SP_CLASSES * MAX_AGES];
    memset(next, 0, sizeof next);
    for (int s = 0; s < m->S; s++) {
        const double *pi = &m->pi[s * MAX_AGES];
        double *nx = &next[s * MAX_AGES];
        for (int a = 0; a < m->A; a++) {
            double mass = pi[a];
            if (mass <= 0)
                continue;
            double c = q ? q[s * MAX_AGES + a] : 0;
            nx[0] += mass * c;
            double stay = mass * (1 - c);
            if (a == m->A - 1) {
                nx[a] += stay;
            } else {
                double move = stay / m->age_width[a]; /* uniform within a bucket: 1/width leaves it */
                nx[a + 1] += move;
                nx[a] += stay - move;
            }
        }
    }
    memcpy(m->pi, next, sizeof next);
    m->state_t++;
    compute_D(m);
    for (int i = 0; i < PS_CACHE; i++)
        m->cache[i].valid = 0;
}

/* the state of run iteration t (iterations that no rank consumed in age
 * every entry; skipped ones repeat the last mean consumption) */
static void advance_to(sp_model *m, int t)
{
    while (m->state_t < t) {
        if (m->nq > 0) {
            for (int i = 0; i < SP_CLASSES * MAX_AGES; i++)
                m->qlast[i] = m->qsum[i] / m->nq;
            step(m, m->qlast);
        } else {
            step(m, m->state_t < t - 1 ? m->qlast : NULL);
        }
        memset(m->qsum, 0, sizeof m->qsum);
        m->nq = 0;
    }
}

/* expected count above thr (non-zero entries) */
static double expected_count(sp_model *m, double thr)
{
    const double *ps = ps_at(m, thr);
    double e = 0;
    for (int s = 0; s < m->S; s++)
        e += m->Ns[s] * ps[s];
    return e;
}

/* the magnitude with expected count k above it (bisection on log scale) */
static double kth_value(sp_model *m, double k)
{
    if (k <= 0)
        return INFINITY;
    if (k >= m->nz_total)
        return 0;
    double hi = m->sigma[m->S - 1] * sqrt(m->D[m->A - 1]) * 12, lo = m->sigma[0] * 1e-6;
    for (int i = 0; i < 100 && hi / lo > 1 + 1e-12; i++) {
        double mid = sqrt(lo * hi);
        if (expected_count(m, mid) > k)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

/* ---- joint selection by the ranks, and reduced values ---------------------
 * A coordinate of class s whose residual has age a holds on rank r
 *   X_r = sigma_s sqrt(D_a) (sqrt(c) Z + sqrt(1 - c) Z_r),
 * Z the common component accumulated over those iterations (shared by the
 * ranks) and Z_r the rank's own.  Given Z = z the ranks select independently,
 * each with p(z) = P(|X_r| > t): their selections overlap through the shared
 * scale and the common component.  Ranks share a coordinate's age (their
 * error feedback consumes the same large entries together).  The expectation
 * over z is a Gauss-Hermite sum; given z, J ~ Binomial(P, p(z)) ranks select,
 * and the reduced value is the selected value itself for J = 1 (a truncated
 * normal) and, for J >= 2, normal with J times the selected values' mean and
 * variance. */

#define NZ 10
static double gh_z[NZ], gh_w[NZ];

static void gh_init(void)
{
    if (gh_w[0] > 0)
        return;
    gsl_integration_fixed_workspace *w = gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, NZ, 0, 0.5, 0, 0);
    if (!w)
        return;
    const double *x = gsl_integration_fixed_nodes(w), *wt = gsl_integration_fixed_weights(w);
    double sum = 0;
    for (int i = 0; i < NZ; i++)
        sum += wt[i];
    for (int i = 0; i < NZ; i++) {
        gh_z[i] = x[i];
        gh_w[i] = wt[i] / sum;
    }
    gsl_integration_fixed_free(w);
}

static inline double Q(double x) { return 0.5 * erfc(x / M_SQRT2); }
static inline double phi(double x) { return exp(-0.5 * x * x) / sqrt(2 * M_PI); }

/* one rank's selection at threshold t given the common value: its
 * probability and the selected value's mean and variance */
typedef struct {
    double p, m1, var1, mu, sd;
} sel_stats;

static void sel_at(double v, double c, double z, double t, sel_stats *o)
{
    double mu = sqrt(v * c) * z, sd = sqrt(v * (1 - c));
    if (sd <= 0)
        sd = 1e-300;
    double al = (t - mu) / sd, be = (t + mu) / sd;
    double qa = Q(al), qb = Q(be), pa = phi(al), pb = phi(be);
    o->p = qa + qb;
    o->mu = mu;
    o->sd = sd;
    if (o->p <= 0) {
        o->m1 = 0;
        o->var1 = v;
        return;
    }
    double e1 = (mu * qa + sd * pa) - (-mu * qb + sd * pb);
    double e2 = (mu * mu + sd * sd) * (qa + qb) + sd * (t + mu) * pa + sd * (t - mu) * pb;
    o->m1 = e1 / o->p;
    o->var1 = e2 / o->p - o->m1 * o->m1;
    if (o->var1 < 0)
        o->var1 = 0;
}

/* P(|R| > x) for the sum R of j selected values (j >= 1) */
static double sum_tail(const sel_stats *st, double j, double x)
{
    if (j < 1.5) /* one value: |X| > x given |X| > t */
        return st->p > 0 ? (Q((x - st->mu) / st->sd) + Q((x + st->mu) / st->sd)) / st->p : 0;
    double m = j * st->m1, sdj = sqrt(j * st->var1);
    if (sdj <= 0)
        return fabs(m) > x;
    return Q((x - m) / sdj) + Q((x + m) / sdj);
}

/* E over J ~ Binomial(n, p) of 1(J >= j0) f(J + shift), f = sum_tail at x */
static double over_j(uint64_t n, double p, int j0, double shift, const sel_stats *st, double x)
{
    if (n == 0 || p <= 0)
        return j0 == 0 ? sum_tail(st, shift, x) : 0;
    double mean = (double)n * p, var = mean * (1 - p);
    if (mean < 12 && p < 0.5) {
        double pmf = exp((double)n * log1p(-p)), r = p / (1 - p), sum = 0, cum = pmf;
        if (j0 == 0)
            sum += pmf * sum_tail(st, shift, x);
        for (uint64_t j = 0; j < n && cum < 1 - 1e-10; j++) {
            pmf *= (double)(n - j) / (double)(j + 1) * r;
            cum += pmf;
            if ((int64_t)j + 1 >= j0)
                sum += pmf * sum_tail(st, (double)(j + 1) + shift, x);
        }
        return sum;
    }
    double sum = 0, sd = sqrt(var);
    for (int i = 0; i < STRATA; i++) {
        double j = floor(mean + sd * strata[i] + 0.5);
        if (j > (double)n)
            j = (double)n;
        if (j < j0)
            continue;
        sum += sum_tail(st, j + shift, x) / STRATA;
    }
    return sum;
}

/* per entry of class s: selected by some rank at thr (the union) */
static double union_class_indep(const sp_model *m, int s, double thr)
{
    const double *pi = &m->pi[s * MAX_AGES];
    double u = 0;
    for (int k = 0; k < NZ; k++) {
        double pbar = 0;
        for (int a = 0; a < m->A; a++) {
            if (pi[a] <= 0)
                continue;
            sel_stats st;
            sel_at(m->sigma[s] * m->sigma[s] * m->D[a], m->p.common, gh_z[k], thr, &st);
            pbar += pi[a] * st.p;
        }
        u += gh_w[k] * -expm1((double)m->P * log1p(-(pbar < 1 ? pbar : 1 - 1e-16)));
    }
    return u;
}

static double union_class(const sp_model *m, int s, double thr)
{
    if (getenv("SPARSIM_INDEP"))
        return union_class_indep(m, s, thr);
    double u = 0;
    const double *pi = &m->pi[s * MAX_AGES];
    for (int a = 0; a < m->A; a++) {
        if (pi[a] <= 0)
            continue;
        double v = m->sigma[s] * m->sigma[s] * m->D[a], ua = 0;
        for (int k = 0; k < NZ; k++) {
            sel_stats st;
            sel_at(v, m->p.common, gh_z[k], thr, &st);
            ua += gh_w[k] * -expm1((double)m->P * log1p(-(st.p < 1 ? st.p : 1 - 1e-16)));
        }
        u += pi[a] * ua;
    }
    return u;
}

/* per entry of class s: in the union with a reduced value above x */
static double reduced_pass(const sp_model *m, int s, double thr, double x)
{
    double f = 0;
    const double *pi = &m->pi[s * MAX_AGES];
    for (int a = 0; a < m->A; a++) {
        if (pi[a] <= 0)
            continue;
        double v = m->sigma[s] * m->sigma[s] * m->D[a], fa = 0;
        for (int k = 0; k < NZ; k++) {
            sel_stats st;
            sel_at(v, m->p.common, gh_z[k], thr, &st);
            if (st.p > 1e-14)
                fa += gh_w[k] * over_j((uint64_t)m->P, st.p, 1, 0, &st, x);
        }
        f += pi[a] * fa;
    }
    return f;
}

/* per entry of class s at age a: this rank selects it and its reduced
 * value (with the others' selections) passes x */
static double mine_delivered(const sp_model *m, int s, int a, double thr, double x)
{
    double v = m->sigma[s] * m->sigma[s] * m->D[a], f = 0;
    for (int k = 0; k < NZ; k++) {
        sel_stats st;
        sel_at(v, m->p.common, gh_z[k], thr, &st);
        if (st.p > 1e-14)
            f += gh_w[k] * st.p * over_j((uint64_t)(m->P - 1), st.p, 0, 1, &st, x);
    }
    return f;
}

/* ---- the operations ------------------------------------------------------- */

struct sp_model_set {
    int L;
    uint64_t total;
    uint64_t count[]; /* per layer */
};

static uint64_t op_count_above(void *state, int rank, int iter, double thr)
{
    sp_model *m = state;
    advance_to(m, iter);
    double e = expected_count(m, thr);
    return draw_count(e, m->nz_total, z_of(m, SP_ST_MODEL_COUNT, rank, iter, 0));
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
    for (int s = 0; s < m->S; s++)
        for (int a = 0; a < m->A; a++)
            v += m->Ns[s] * m->pi[s * MAX_AGES + a] * m->sigma[s] * m->sigma[s] * m->D[a];
    return sqrt(v / (double)m->p.n);
}

static sp_model_set *op_select(void *state, int rank, int iter, double thr, uint64_t count)
{
    sp_model *m = state;
    advance_to(m, iter);
    sp_model_set *set = calloc(1, sizeof *set + (size_t)m->L * sizeof(uint64_t));
    if (!set)
        return NULL;
    set->L = m->L;
    const double *ps = ps_at(m, thr);
    double *w = malloc((size_t)m->L * sizeof *w), W = 0;
    if (!w) {
        free(set);
        return NULL;
    }
    for (int l = 0; l < m->L; l++) {
        w[l] = 0;
        for (int s = 0; s < m->S; s++)
            w[l] += m->nls[l * m->S + s] * ps[s];
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
    /* what the layers' sizes could not take goes where room is left */
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
            if (b <= a)
                continue;
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

/* the expected count over [lo, hi) of per-class quantities f[s] */
static double over_range(const sp_model *m, const double *f, int64_t lo, int64_t hi, double *nz_in)
{
    double sum = 0, nz = 0;
    for (int l = sp_profile_layer_of(&m->p, (uint64_t)(lo > 0 ? lo : 0)); l < m->L; l++) {
        const sp_profile_layer *ly = &m->p.layers[l];
        int64_t a = (int64_t)ly->offset > lo ? (int64_t)ly->offset : lo;
        int64_t b = (int64_t)(ly->offset + ly->size) < hi ? (int64_t)(ly->offset + ly->size) : hi;
        if ((int64_t)ly->offset >= hi)
            break;
        if (b <= a)
            continue;
        double frac = (double)(b - a) / (double)ly->size, e = 0;
        for (int s = 0; s < m->S; s++)
            e += m->nls[l * m->S + s] * f[s];
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
    double u[SP_CLASSES], nz;
    for (int s = 0; s < m->S; s++)
        u[s] = union_class(m, s, thr);
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
    double f[SP_CLASSES], nz;
    for (int s = 0; s < m->S; s++)
        f[s] = reduced_pass(m, s, thr, thr_global);
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
    const double *ps = ps_at(m, thr);
    double lo = thr * 1e-3, hi = thr * 1e4 + m->sigma[m->S - 1] * sqrt(m->D[m->A - 1]) * 12 * sqrt((double)m->P);
    for (int i = 0; i < 60 && hi / lo > 1 + 1e-9; i++) {
        double mid = sqrt(lo * hi), e = 0;
        for (int s = 0; s < m->S; s++)
            if (m->Ns[s] > 0 && ps[s] > 0)
                e += m->Ns[s] * reduced_pass(m, s, thr, mid);
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
    for (int s = 0; s < m->S; s++)
        for (int a = 0; a < m->A; a++) {
            double q;
            if (thr < 0)
                q = 1.0; /* a dense allreduce delivers every entry */
            else if (m->pi[s * MAX_AGES + a] <= 0)
                q = 0;
            else if (thr_global < 0)
                q = erfc(thr / (m->sigma[s] * sqrt(2.0 * m->D[a])));
            else
                q = mine_delivered(m, s, a, thr, thr_global);
            m->qsum[s * MAX_AGES + a] += q;
        }
    m->nq++;
}

static const sp_model_ops ops = {op_count_above, op_kth,   op_std,           op_select,     op_index_at,
                                 op_split,       op_union, op_reduced_above, op_global_kth, op_consume};

const sp_model_ops *sp_model_ops_table(void) { return &ops; }

/* ---- construction --------------------------------------------------------- */

sp_model *sp_model_new(const sp_profile *p, uint64_t seed, int ranks, int settle, double density, char *err,
                       size_t errlen)
{
    strata_init();
    gh_init();
    sp_model *m = calloc(1, sizeof *m);
    if (!m || sp_profile_copy(&m->p, p) != 0) {
        free(m);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->seed = seed;
    m->P = ranks;
    m->settle = settle;
    m->density = density;
    m->L = p->nlayers;
    m->S = SP_CLASSES;
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
    double h = (gmax - gmin) / (m->S - 1);
    for (int s = 0; s < m->S; s++)
        m->sigma[s] = pow(10.0, gmin + h * s);
    m->nls = calloc((size_t)m->L * (size_t)m->S, sizeof *m->nls);
    m->nz = calloc((size_t)m->L, sizeof *m->nz);
    if (!m->nls || !m->nz) {
        snprintf(err, errlen, "out of memory for the model of %d layers", m->L);
        sp_model_free(m);
        return NULL;
    }
    for (int l = 0; l < m->L; l++) {
        const sp_profile_layer *ly = &p->layers[l];
        double nz = (double)ly->size * (1 - ly->zeros), *w = &m->nls[l * m->S], sum = 0;
        for (int s = 0; s < m->S; s++) {
            double x = gmin + h * s;
            if (ly->log10_spread > 0) {
                double a = (x - 0.5 * h - ly->log10_scale) / ly->log10_spread;
                double b = (x + 0.5 * h - ly->log10_scale) / ly->log10_spread;
                w[s] = normal_cdf(b) - normal_cdf(a);
            } else {
                double d = fabs(x - ly->log10_scale) / h;
                w[s] = d < 1 ? 1 - d : 0; /* between the two nearest classes */
            }
            sum += w[s];
        }
        for (int s = 0; s < m->S; s++) {
            w[s] = sum > 0 ? w[s] / sum * nz : 0;
            m->Ns[s] += w[s];
        }
        m->nz[l] = nz;
        m->nz_total += nz;
    }
    /* ages 1..32 one by one, then buckets of doubling width */
    int a = 0;
    for (; a < SINGLE_AGES; a++) {
        m->age_rep[a] = a + 1;
        m->age_width[a] = 1;
    }
    for (double lo = SINGLE_AGES + 1, w = SINGLE_AGES; a < MAX_AGES && lo < 1e8; a++, lo += w, w *= 2) {
        m->age_rep[a] = lo + (w - 1) / 2;
        m->age_width[a] = w;
    }
    m->A = a;
    for (int s = 0; s < m->S; s++)
        m->pi[s * MAX_AGES] = 1.0; /* the first iteration: only its own gradient */
    m->state_t = -settle;
    compute_D(m);
    /* --settle: local error feedback, each rank consuming its exact top-k */
    uint64_t k = (uint64_t)floor((double)p->n * density);
    while (m->state_t < 0) {
        double thr = kth_value(m, (double)k);
        double q[SP_CLASSES * MAX_AGES];
        for (int s = 0; s < m->S; s++)
            for (int b = 0; b < m->A; b++)
                q[s * MAX_AGES + b] = erfc(thr / (m->sigma[s] * sqrt(2.0 * m->D[b])));
        step(m, q);
    }
    return m;
}

void sp_model_free(sp_model *m)
{
    if (!m)
        return;
    sp_profile_free(&m->p);
    free(m->nls);
    free(m->nz);
    free(m->q2);
    free(m);
}

double sp_model_union_over_k(sp_model *m, int P, uint64_t k)
{
    double thr = kth_value(m, (double)k);
    int keep = m->P;
    m->P = P;
    double u = 0;
    for (int s = 0; s < m->S; s++)
        u += m->Ns[s] * union_class(m, s, thr);
    m->P = keep;
    return u / (double)k;
}
