/* workload_stats.c - the statistics of a gradient source that decide
 * sparse-allreduce volumes (workload_stats.h).
 *
 * Every statistic is one of the project's reference notes on real
 * data-parallel gradients (shared/reference/gradients.md: the table "Density
 * 0.01, P = 8" and points 1-5 under it); the comment next to each piece of
 * code gives its exact definition.  Top-k sets are the project's exact top-k
 * (algorithms/topk_select.c: larger |value| first, then smaller index), so
 * the sets here are the sets the simulated algorithms select.
 *
 * 9 (not in the notes' table; issue of the workload on real data): how the
 * workers' gradient sizes differ within an iteration, ln RMS of each rank's
 * gradient about the iteration's mean over ranks, and how that persists.
 *
 * One pass over the iterations; within an iteration the ranks one after the
 * other, each (iteration, rank) filled once.  What later statistics need is
 * kept: each rank's previous gradient (cosine t -> t+1), the top-k index sets
 * of the last 32 iterations (Jaccard at lags up to 31), and each rank's two
 * error-feedback residuals (threshold drift).  The top-k of a long vector
 * streams once over it with sp_threshold_select below a sampled threshold and
 * selects among the few candidates (topk below): 2 or 3 top-k per (iteration,
 * rank) at n of millions and P = 32 stay within a minute per 32 iterations.
 */
#include "workload_stats.h"

#include "algorithms/select.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_statistics_float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const int LAGS[SP_WSTATS_NLAGS] = {1, 10, 31};
#define RING_DEPTH 32      /* top-k sets kept: lags up to 31 */
#define MIN_LAYER 16       /* layers of fewer entries have no per-layer kurtosis */
#define SETTLED_MIN_RUN 16 /* the settled drift needs a warm-up of at least 8 */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* A mean over the samples where a statistic is defined (NAN: not defined). */
typedef struct {
    double sum;
    long n;
} mean_acc;

static void macc(mean_acc *a, double v)
{
    if (!isnan(v)) {
        a->sum += v;
        a->n++;
    }
}

static double mget(const mean_acc *a) { return a->n ? a->sum / (double)a->n : NAN; }

/* Excess kurtosis m4 / m2^2 - 3 with the central moments
 * m_j = (1/n) sum (x - mean)^j: the population (biased) estimator, as
 * scipy.stats.kurtosis computes by default; Laplace 3, normal 0.  Moments
 * are taken around x[0] first so that a constant vector has m2 = 0 exactly
 * (NAN: not defined). */
static double excess_kurtosis(const float *x, uint64_t n)
{
    if (n == 0)
        return NAN;
    double shift = x[0], s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += (double)x[i] - shift;
    double mean = s / (double)n, m2 = 0, m4 = 0;
    for (uint64_t i = 0; i < n; i++) {
        double d = ((double)x[i] - shift) - mean, d2 = d * d;
        m2 += d2;
        m4 += d2 * d2;
    }
    m2 /= (double)n;
    m4 /= (double)n;
    if (!(m2 > 0))
        return NAN;
    return m4 / (m2 * m2) - 3.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

/* median of v[0..m) (sorts v); the mean of the two middle values for even m */
static double median_sorting(double *v, int m)
{
    if (m <= 0)
        return NAN;
    qsort(v, (size_t)m, sizeof *v, cmp_double);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* |A n B| / |A u B| of two index-ascending sets of k entries each */
static double jaccard(const int32_t *a, const int32_t *b, uint64_t k)
{
    uint64_t i = 0, j = 0, inter = 0;
    while (i < k && j < k) {
        if (a[i] < b[j])
            i++;
        else if (b[j] < a[i])
            j++;
        else {
            inter++;
            i++;
            j++;
        }
    }
    return (double)inter / (double)(2 * k - inter);
}

/* <g, g>, <g, a>, <g, b> in one pass (a, b may be g), in double with four
 * partial sums each so that the additions do not wait on one another */
static void dots3(const float *restrict g, const float *a, const float *b, uint64_t n, double out[3])
{
    double gg[4] = {0, 0, 0, 0}, ga[4] = {0, 0, 0, 0}, gb[4] = {0, 0, 0, 0};
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) {
            double x = g[i + j];
            gg[j] += x * x;
            ga[j] += x * a[i + j];
            gb[j] += x * b[i + j];
        }
    for (; i < n; i++) {
        double x = g[i];
        gg[0] += x * x;
        ga[0] += x * a[i];
        gb[0] += x * b[i];
    }
    out[0] = (gg[0] + gg[1]) + (gg[2] + gg[3]);
    out[1] = (ga[0] + ga[1]) + (ga[2] + ga[3]);
    out[2] = (gb[0] + gb[1]) + (gb[2] + gb[3]);
}

/* cosine <a, b> / (|a| |b|) from <a, b>, |a|^2, |b|^2; NAN when either is 0 */
static double cosine_of(double ab, double aa, double bb)
{
    if (!(aa > 0 && bb > 0))
        return NAN;
    return ab / (sqrt(aa) * sqrt(bb));
}

/* Exact top-k of |x| in the project's order (select.h), the same pairs as
 * sp_topk_exact, faster when k << n.  A threshold thr is guessed from a
 * strided sample of |x| (about the 2k-th largest); sp_threshold_select keeps
 * the m entries with |x| > thr in one streaming pass.  If m >= k, the k-th
 * largest |x| exceeds thr, so every member of the top-k (ties included) is a
 * candidate, and the top-k of the candidates in the same order
 * (sp_topk_pairs, index order kept) is the top-k of x.  When fewer than k or
 * more than the room pass, sp_topk_exact does it.  0, or -1 out of memory. */
#define TOPK_SAMPLE 65536
typedef struct {
    float *sample;  /* [TOPK_SAMPLE] */
    sp_pair *cand;  /* [cap] */
    uint64_t cap;
} topk_ws;

static int topk(const float *x, uint64_t n, uint64_t k, sp_pair *out, topk_ws *ws)
{
    uint64_t c = (uint64_t)(2.0 * TOPK_SAMPLE * (double)k / (double)n) + 16; /* rank in the sample */
    if (ws->cand && n >= 4 * TOPK_SAMPLE && c < TOPK_SAMPLE / 2) {
        for (uint64_t j = 0; j < TOPK_SAMPLE; j++)
            ws->sample[j] = fabsf(x[j * n / TOPK_SAMPLE]);
        float thr = gsl_stats_float_select(ws->sample, 1, TOPK_SAMPLE, TOPK_SAMPLE - c);
        if (thr >= 0) { /* not NAN */
            uint64_t m = sp_threshold_select(x, n, thr, ws->cand, ws->cap);
            if (m >= k && m <= ws->cap)
                return sp_topk_pairs(ws->cand, m, k, out) == k ? 0 : -1;
        }
    }
    return sp_topk_exact(x, n, k, out) == k ? 0 : -1;
}

/* the k-th largest |value| of a top-k selection: its smallest |value| */
static float kth_largest(const sp_pair *p, uint64_t k)
{
    float m = INFINITY;
    for (uint64_t j = 0; j < k; j++)
        if (fabsf(p[j].val) < m)
            m = fabsf(p[j].val);
    return m;
}

/* region of index i among P equal regions of width w = floor(n / P), the
 * last one taking the remainder */
static inline int region_of(uint64_t i, uint64_t w, int P)
{
    uint64_t r = i / w;
    return r < (uint64_t)P ? (int)r : P - 1;
}

/* max over regions / mean over regions of counts c[0..P) summing to total */
static double max_over_mean(const uint64_t *c, int P, uint64_t total)
{
    if (total == 0)
        return NAN;
    uint64_t mx = 0;
    for (int j = 0; j < P; j++)
        if (c[j] > mx)
            mx = c[j];
    return (double)mx * P / (double)total;
}

/* Error feedback with a reused threshold: acc += g, then the entries with
 * |acc| > thr are sent (counted) and leave the residual (set to 0). */
static uint64_t add_count_consume(float *restrict acc, const float *restrict g, uint64_t n, float thr)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; i++) { /* branch-free: the compiler vectorizes it */
        float a = acc[i] + g[i];
        int sent = fabsf(a) > thr;
        c += (uint64_t)sent;
        acc[i] = sent ? 0.0f : a;
    }
    return c;
}

/* Setting a threshold: the entries with |acc| >= thr leave the residual. */
static void consume_at_least(float *acc, uint64_t n, float thr)
{
    for (uint64_t i = 0; i < n; i++)
        acc[i] = fabsf(acc[i]) >= thr ? 0.0f : acc[i];
}

static void add_into(float *restrict acc, const float *restrict g, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        acc[i] += g[i];
}

/* the index of the iteration at or before `it` - 1, within the last 31, whose
 * training iteration is `want`; -1 if the source does not hold it there */
static int find_iteration(const sp_grad_source *src, int it, int want)
{
    for (int j = it - 1; j >= 0 && j >= it - (RING_DEPTH - 1); j--)
        if (sp_grad_iter_id(src, j) == want)
            return j;
    return -1;
}

/* Statistics 1 and 2 of one iteration, rank 0's gradient g with its top-k
 * `top`.  scratch holds n floats, lk nlayers doubles. */
static void rank0_stats(const sp_grad_source *src, const float *g, uint64_t n, const sp_pair *top, uint64_t k,
                        float *scratch, double *lk, int *layers_used, sp_wstats_iter *pi)
{
    /* 1a: excess kurtosis of the whole flattened vector (table row 1) */
    pi->kurt_whole = excess_kurtosis(g, n);

    /* 1b: median over layers of >= 16 entries of the excess kurtosis within
     * the layer (table row 2); without a layer table the vector is one
     * layer; a constant layer (m2 = 0) has none and is left out */
    int m = 0, used = 0;
    if (src->layers && src->nlayers > 0) {
        for (int l = 0; l < src->nlayers; l++) {
            if (src->layers[l].size < MIN_LAYER)
                continue;
            used++;
            double v = excess_kurtosis(g + src->layers[l].offset, src->layers[l].size);
            if (!isnan(v))
                lk[m++] = v;
        }
    } else if (n >= MIN_LAYER) {
        used = 1;
        if (!isnan(pi->kurt_whole))
            lk[m++] = pi->kurt_whole;
    }
    pi->kurt_layer_median = median_sorting(lk, m);
    *layers_used = used;

    /* 2: fraction of entries exactly 0 (table row 5); norm for statistic 8 */
    uint64_t zeros = 0;
    double sq = 0;
    for (uint64_t i = 0; i < n; i++) {
        zeros += g[i] == 0.0f;
        sq += (double)g[i] * g[i];
        scratch[i] = fabsf(g[i]);
    }
    pi->zeros = (double)zeros / (double)n;
    pi->norm = sqrt(sq);

    /* 1c: k-th largest |g| / median |g| (table row 3; Laplace 6.6, normal
     * 3.8 at density 0.01); NAN when the median is 0 */
    double med = gsl_stats_float_median(scratch, 1, n);
    float kth = kth_largest(top, k);
    pi->kth_over_median = med > 0 ? (double)kth / med : NAN;

    /* 1d: (k/10)-th largest |g| / k-th largest (table row 4; Laplace 1.50),
     * k/10 rounded down and at least 1 */
    uint64_t k10 = k / 10 ? k / 10 : 1;
    for (uint64_t j = 0; j < k; j++)
        scratch[j] = fabsf(top[j].val);
    double v10 = gsl_stats_float_select(scratch, 1, k, k - k10); /* (k - k10)-th smallest, 0-based */
    pi->k10_over_kth = kth > 0 ? v10 / (double)kth : NAN;
}

typedef struct {
    float **grad;       /* [1 + nprev]: grad[0] the buffer being filled, then each rank's last */
    int ngrad;
    float *sum, *scratch;
    uint8_t *marks;
    sp_pair *top, *top2;
    int32_t *ring;      /* [depth][P][k] top-k index sets */
    double *lk;         /* per-layer kurtosis */
    uint64_t *reg_union, *reg_one;
    float **cold, **settled;
    float *cold_thr, *settled_thr;
    int *run_of, *run_start;
    double *settled_sum;
    double *norm2;      /* [1 + nprev]: |grad[j]|^2 */
    double *lrms, *lrms_prev; /* [P]: this and the last iteration's ln RMS per rank */
    topk_ws tk;
} work;

static void work_free(work *w, int P)
{
    if (w->grad)
        for (int j = 0; j < w->ngrad; j++)
            free(w->grad[j]);
    free(w->grad);
    if (w->cold)
        for (int r = 0; r < P; r++)
            free(w->cold[r]);
    if (w->settled)
        for (int r = 0; r < P; r++)
            free(w->settled[r]);
    free(w->cold);
    free(w->settled);
    free(w->sum);
    free(w->scratch);
    free(w->marks);
    free(w->top);
    free(w->top2);
    free(w->ring);
    free(w->lk);
    free(w->reg_union);
    free(w->reg_one);
    free(w->cold_thr);
    free(w->settled_thr);
    free(w->run_of);
    free(w->run_start);
    free(w->settled_sum);
    free(w->norm2);
    free(w->lrms);
    free(w->lrms_prev);
    free(w->tk.sample);
    free(w->tk.cand);
}

/* P arrays of n floats (calloc: the residuals start at 0) */
static float **alloc_rows(int P, uint64_t n)
{
    float **rows = calloc((size_t)P, sizeof *rows);
    if (!rows)
        return NULL;
    for (int r = 0; r < P; r++) {
        rows[r] = calloc(n, sizeof **rows);
        if (!rows[r]) {
            for (int q = 0; q < r; q++)
                free(rows[q]);
            free(rows);
            return NULL;
        }
    }
    return rows;
}

void sp_wstats_free(sp_wstats *s)
{
    if (!s)
        return;
    if (s->runs)
        for (int j = 0; j < s->nruns; j++)
            free(s->runs[j].cold);
    free(s->runs);
    free(s->per_iter);
    memset(s, 0, sizeof *s);
}

static int check_input(const sp_grad_source *src, const sp_wstats_opts *o, uint64_t *k, char *err, size_t errlen)
{
    if (!src || !o || !src->fill) {
        set_err(err, errlen, "workload statistics: no source or no options");
        return -1;
    }
    if (src->n == 0 || src->n > (uint64_t)INT32_MAX + 1) {
        set_err(err, errlen, "workload statistics: gradient length n = %llu, need 1 <= n <= 2^31",
                (unsigned long long)src->n);
        return -1;
    }
    if (!(o->density > 0 && o->density <= 1)) {
        set_err(err, errlen, "workload statistics: density %g is not in (0, 1]", o->density);
        return -1;
    }
    *k = (uint64_t)floor((double)src->n * o->density);
    if (*k < 1) {
        set_err(err, errlen, "workload statistics: k = floor(n * density) = floor(%llu * %g) = 0, need k >= 1",
                (unsigned long long)src->n, o->density);
        return -1;
    }
    if (o->ranks < 1 || o->ranks > src->ranks) {
        set_err(err, errlen, "workload statistics: %d ranks asked, the source has %d", o->ranks, src->ranks);
        return -1;
    }
    if (o->tau_prime < 2) {
        set_err(err, errlen, "workload statistics: tau_prime = %d, need >= 2", o->tau_prime);
        return -1;
    }
    if (o->max_iters < 0 || src->iters < 1) {
        set_err(err, errlen, "workload statistics: %d iterations in the source, max_iters = %d", src->iters,
                o->max_iters);
        return -1;
    }
    if (src->nlayers < 0 || (src->nlayers > 0 && !src->layers)) {
        set_err(err, errlen, "workload statistics: %d layers without a table", src->nlayers);
        return -1;
    }
    for (int l = 0; src->layers && l < src->nlayers; l++) {
        const sp_layer *ly = &src->layers[l];
        if (ly->offset > src->n || ly->size > src->n - ly->offset) {
            set_err(err, errlen, "workload statistics: layer %d (%s) [%llu, +%llu) lies outside n = %llu", l,
                    ly->name, (unsigned long long)ly->offset, (unsigned long long)ly->size,
                    (unsigned long long)src->n);
            return -1;
        }
    }
    return 0;
}

/* the statistics being computed: the source, the sizes, the buffers, and
 * the means over (iteration, rank) pairs kept across iterations */
typedef struct {
    sp_grad_source *src;
    sp_wstats *out;
    uint64_t n, k;
    int P, tau, I, depth;
    uint64_t rw; /* region width (0: n < P, regions undefined) */
    work w;
    mean_acc jlag[SP_WSTATS_NLAGS], jother, clag;
    double rank_v2, rank_c2, rank_cv; /* 9: pooled squares of the deviations, and their lag-1 products */
    long rank_dof;
    char *err;
    size_t errlen;
} wstats_pass;

/* one iteration's place in its run and what its ranks add up */
typedef struct {
    int it, ri, pos, half;
    sp_wstats_iter *pi;
    sp_wstats_run *run;
    int32_t *sets;     /* this iteration's top-k sets, rank-major */
    int lag_it[SP_WSTATS_NLAGS]; /* where the same ranks' sets of training iteration t - lag are (-1: none) */
    uint64_t in_union; /* members of the union of the sets so far */
    int next_p;        /* the next union_p to reach */
    mean_acc jr, cr;   /* Jaccard and cosine of ranks r-1 and r */
} wstats_iter;

#define WS_OOM 1  /* out of memory: the message is written at the end */
#define WS_FAIL 2 /* failed, the message written */

/* the sizes and what they imply: the statistics' own parameters */
static void describe(wstats_pass *s, const sp_wstats_opts *o)
{
    sp_wstats *out = s->out;
    out->n = s->n;
    out->k = s->k;
    out->density = o->density;
    out->ranks = s->P;
    out->tau_prime = s->tau;
    out->iters = s->I;
    for (int l = 0; l < SP_WSTATS_NLAGS; l++)
        out->lags[l] = LAGS[l];
    /* statistic 3's p: 2, 4, 8, ... <= P, and P itself if not a power of two */
    for (long p = 2; p <= s->P; p *= 2)
        out->union_p[out->nunion++] = (int)p;
    if (s->P >= 2 && (s->P & (s->P - 1)) != 0)
        out->union_p[out->nunion++] = s->P;
}

/* runs of consecutive training iterations (iter_ids increasing by 1), and
 * how many drift iterations each holds; *any_cold, *any_settled: whether
 * any run needs the residuals.  0 or WS_OOM */
static int plan_runs(wstats_pass *s, int *any_cold, int *any_settled)
{
    sp_wstats *out = s->out;
    work *w = &s->w;
    const int I = s->I, tau = s->tau;
    w->run_of = malloc((size_t)I * sizeof *w->run_of);
    w->run_start = malloc((size_t)I * sizeof *w->run_start);
    if (!w->run_of || !w->run_start)
        return WS_OOM;
    for (int it = 0; it < I; it++) {
        if (it == 0 || sp_grad_iter_id(s->src, it) != sp_grad_iter_id(s->src, it - 1) + 1)
            w->run_start[out->nruns++] = it;
        w->run_of[it] = out->nruns - 1;
    }
    out->runs = calloc((size_t)out->nruns, sizeof *out->runs);
    w->settled_sum = calloc((size_t)out->nruns, sizeof *w->settled_sum);
    if (!out->runs || !w->settled_sum)
        return WS_OOM;
    *any_cold = *any_settled = 0;
    for (int j = 0; j < out->nruns; j++) {
        sp_wstats_run *run = &out->runs[j];
        int end = j + 1 < out->nruns ? w->run_start[j + 1] : I;
        run->first_iter_id = sp_grad_iter_id(s->src, w->run_start[j]);
        run->length = end - w->run_start[j];
        run->ncold = run->length - 1 < tau - 1 ? run->length - 1 : tau - 1;
        if (run->length >= SETTLED_MIN_RUN) {
            int reuse = run->length - run->length / 2 - 1;
            run->nsettled = reuse < tau - 1 ? reuse : tau - 1;
        }
        run->cold = malloc((size_t)(run->ncold + 1) * sizeof *run->cold);
        if (!run->cold)
            return WS_OOM;
        run->cold[0] = NAN;
        for (int l = 1; l <= run->ncold; l++)
            run->cold[l] = 0;
        run->cold_mean = run->settled_mean = run->norm_ratio = NAN;
        *any_cold |= run->ncold > 0;
        *any_settled |= run->nsettled > 0;
    }
    return 0;
}

/* every buffer of the pass.  0 or WS_OOM */
static int alloc_work(wstats_pass *s, int any_cold, int any_settled)
{
    work *w = &s->w;
    const uint64_t n = s->n, k = s->k;
    const int P = s->P;
    s->out->per_iter = calloc((size_t)s->I, sizeof *s->out->per_iter);
    w->ngrad = 1 + (s->I > 1 ? P : 1);
    w->grad = calloc((size_t)w->ngrad, sizeof *w->grad);
    if (!s->out->per_iter || !w->grad)
        return WS_OOM;
    for (int j = 0; j < w->ngrad; j++)
        if (!(w->grad[j] = malloc(n * sizeof(float))))
            return WS_OOM;
    if ((uint64_t)s->depth * (uint64_t)P > SIZE_MAX / sizeof(int32_t) / k)
        return WS_OOM;
    w->ring = malloc((size_t)s->depth * (size_t)P * k * sizeof *w->ring);
    w->sum = malloc(n * sizeof *w->sum);
    w->scratch = malloc(n * sizeof *w->scratch);
    w->marks = malloc(n);
    w->top = malloc(k * sizeof *w->top);
    w->top2 = malloc(k * sizeof *w->top2);
    w->lk = malloc((size_t)(s->src->nlayers > 1 ? s->src->nlayers : 1) * sizeof *w->lk);
    w->reg_union = malloc((size_t)P * sizeof *w->reg_union);
    w->reg_one = malloc((size_t)P * sizeof *w->reg_one);
    w->cold_thr = malloc((size_t)P * sizeof *w->cold_thr);
    w->settled_thr = malloc((size_t)P * sizeof *w->settled_thr);
    w->norm2 = calloc((size_t)w->ngrad, sizeof *w->norm2);
    w->lrms = calloc((size_t)P, sizeof *w->lrms);
    w->lrms_prev = calloc((size_t)P, sizeof *w->lrms_prev);
    if (n >= 4 * TOPK_SAMPLE) { /* room for about 4k candidates (topk) */
        w->tk.cap = 4 * k + 64 * (n / TOPK_SAMPLE) + 1024;
        if (w->tk.cap > n)
            w->tk.cap = n;
        w->tk.sample = malloc(TOPK_SAMPLE * sizeof *w->tk.sample);
        w->tk.cand = malloc(w->tk.cap * sizeof *w->tk.cand);
        if (!w->tk.sample || !w->tk.cand)
            return WS_OOM;
    }
    if (!w->norm2 || !w->lrms || !w->lrms_prev || !w->ring || !w->sum || !w->scratch || !w->marks || !w->top || !w->top2 || !w->lk ||
        !w->reg_union || !w->reg_one || !w->cold_thr || !w->settled_thr)
        return WS_OOM;
    if (any_cold && !(w->cold = alloc_rows(P, n)))
        return WS_OOM;
    if (any_settled && !(w->settled = alloc_rows(P, n)))
        return WS_OOM;
    return 0;
}

/* iteration it's record, undefined statistics NAN, and its place */
static void start_iteration(wstats_pass *s, int it, wstats_iter *x)
{
    sp_wstats_iter *pi = &s->out->per_iter[it];
    memset(x, 0, sizeof *x);
    pi->iter_id = sp_grad_iter_id(s->src, it);
    pi->kurt_whole = pi->kurt_layer_median = pi->kth_over_median = pi->k10_over_kth = NAN;
    pi->zeros = pi->norm = pi->region_union = pi->region_rank0 = NAN;
    pi->jaccard_ranks = pi->cosine_ranks = pi->global_in_rank0 = pi->global_in_union = NAN;
    pi->rank_log_sd = pi->rank_max_over_min = NAN;
    for (int j = 0; j < SP_WSTATS_MAX_UNION; j++)
        pi->union_over_k[j] = NAN;
    x->it = it;
    x->pi = pi;
    x->ri = s->w.run_of[it];
    x->pos = it - s->w.run_start[x->ri];
    x->run = &s->out->runs[x->ri];
    x->half = x->run->length / 2;
    x->sets = s->w.ring + (size_t)(it % s->depth) * (size_t)s->P * s->k;
    for (int l = 0; l < SP_WSTATS_NLAGS; l++)
        x->lag_it[l] = find_iteration(s->src, it, pi->iter_id - LAGS[l]);
    memset(s->w.marks, 0, s->n);
    memset(s->w.reg_union, 0, (size_t)s->P * sizeof *s->w.reg_union);
}

/* 3: |union of the top-k sets of ranks 0..p-1| / k, with marks; 4a counts
 * the union's members per region as they join */
static void join_union(wstats_pass *s, wstats_iter *x, int r, const int32_t *set)
{
    work *w = &s->w;
    for (uint64_t j = 0; j < s->k; j++)
        if (!w->marks[set[j]]) {
            w->marks[set[j]] = 1;
            x->in_union++;
            if (s->rw > 0)
                w->reg_union[region_of((uint64_t)set[j], s->rw, s->P)]++;
        }
    if (x->next_p < s->out->nunion && s->out->union_p[x->next_p] == r + 1)
        x->pi->union_over_k[x->next_p++] = (double)x->in_union / (double)s->k;
}

/* 5 and 6: Jaccard and cosine of rank r's gradient g (set: its top-k) with
 * rank r-1's and with its own at earlier iterations; *g2 gets |g|^2 */
static void compare_pairs(wstats_pass *s, wstats_iter *x, int r, const float *g, const int32_t *set, double *g2)
{
    work *w = &s->w;
    const uint64_t k = s->k;
    const int depth = s->depth, P = s->P;
    /* grad[1 + q] holds rank q's gradient of the latest iteration filled
     * for it (a single slot when there is one iteration) */
    const int mine = s->I > 1 ? 1 + r : 1, left = s->I > 1 ? r : 1;
    const int cos_left = r > 0, cos_lag = x->it > 0 && x->lag_it[0] == x->it - 1;
    double d[3]; /* |g|^2, <g, rank r-1's>, <g, its own at t-1> */
    dots3(g, cos_left ? w->grad[left] : g, cos_lag ? w->grad[mine] : g, s->n, d);
    if (r > 0) {
        /* 5a, 6a: ranks r-1 and r, same iteration */
        macc(&x->jr, jaccard(x->sets + (size_t)(r - 1) * k, set, k));
        macc(&x->cr, cosine_of(d[1], d[0], w->norm2[left]));
    }
    /* 5b: same rank, training iterations t - lag and t */
    for (int l = 0; l < SP_WSTATS_NLAGS; l++)
        if (x->lag_it[l] >= 0)
            macc(&s->jlag[l], jaccard(w->ring + ((size_t)(x->lag_it[l] % depth) * P + r) * k, set, k));
    if (x->lag_it[0] >= 0 && r > 0) /* 5c: rank r-1 at t-1, rank r at t */
        macc(&s->jother, jaccard(w->ring + ((size_t)(x->lag_it[0] % depth) * P + r - 1) * k, set, k));
    if (cos_lag) /* 6b: same rank, t-1 and t (its buffer still holds t-1) */
        macc(&s->clag, cosine_of(d[2], d[0], w->norm2[mine]));
    *g2 = d[0];
}

/* 8: the drift of a reused threshold under error feedback, rank r's
 * gradient g (kth: the k-th largest |g|).  0 or WS_OOM */
static int drift(wstats_pass *s, wstats_iter *x, int r, const float *g, float kth)
{
    work *w = &s->w;
    sp_wstats_run *run = x->run;
    const uint64_t n = s->n, k = s->k;
    const int pos = x->pos, half = x->half;
    /* cold: residual 0 at the run's first iteration t0; there acc = g, thr
     * = k-th largest |acc|, entries with |acc| >= thr sent; at t0 + l (l =
     * 1..tau'-1) acc += g, count = #{|acc| > thr}, those sent.
     * run->cold[l] sums count/k over ranks. */
    if (run->ncold > 0 && pos <= run->ncold) {
        if (pos == 0) {
            memcpy(w->cold[r], g, n * sizeof *g);
            w->cold_thr[r] = kth;
            consume_at_least(w->cold[r], n, kth);
        } else
            run->cold[pos] += (double)add_count_consume(w->cold[r], g, n, w->cold_thr[r]) / (double)k;
    }
    /* settled: runs of >= 16; error feedback with the exact top-k over the
     * first half (positions 0..half-1), the threshold set at position half
     * as above, reused after it for up to tau'-1 iterations; settled_sum
     * sums count/k. */
    if (run->nsettled > 0 && pos <= half + run->nsettled) {
        float *acc = w->settled[r];
        if (pos == 0) /* residual 0 at the run's start */
            memcpy(acc, g, n * sizeof *g);
        else if (pos <= half)
            add_into(acc, g, n);
        if (pos < half) {
            if (topk(acc, n, k, w->top2, &w->tk) != 0)
                return WS_OOM;
            for (uint64_t j = 0; j < k; j++)
                acc[w->top2[j].idx] = 0.0f;
        } else if (pos == half) {
            if (topk(acc, n, k, w->top2, &w->tk) != 0)
                return WS_OOM;
            w->settled_thr[r] = kth_largest(w->top2, k);
            consume_at_least(acc, n, w->settled_thr[r]);
        } else
            w->settled_sum[x->ri] += (double)add_count_consume(acc, g, n, w->settled_thr[r]) / (double)k;
    }
    return 0;
}

/* rank r's gradient of iteration x->it: filled, summed, its top-k, and
 * every statistic it adds to.  0, WS_OOM or WS_FAIL */
static int add_rank(wstats_pass *s, wstats_iter *x, int r)
{
    work *w = &s->w;
    const uint64_t n = s->n, k = s->k;
    float *g = w->grad[0];
    char msg[256] = "";
    if (s->src->fill(s->src, x->it, r, g, 0, msg, sizeof msg) != 0) {
        set_err(s->err, s->errlen, "workload statistics: iteration %d (training iteration %d), rank %d: %s", x->it,
                x->pi->iter_id, r, msg);
        return WS_FAIL;
    }
    if (r == 0)
        memcpy(w->sum, g, n * sizeof *g);
    else
        add_into(w->sum, g, n);
    if (topk(g, n, k, w->top, &w->tk) != 0)
        return WS_OOM;
    int32_t *set = x->sets + (size_t)r * k;
    for (uint64_t j = 0; j < k; j++)
        set[j] = w->top[j].idx;
    float kth = kth_largest(w->top, k);
    if (r == 0) {
        rank0_stats(s->src, g, n, w->top, k, w->scratch, w->lk, &s->out->layers, x->pi);
        /* 4b: rank 0's top-k alone in the P regions: max/mean */
        if (s->rw > 0) {
            memset(w->reg_one, 0, (size_t)s->P * sizeof *w->reg_one);
            for (uint64_t j = 0; j < k; j++)
                w->reg_one[region_of((uint64_t)set[j], s->rw, s->P)]++;
            x->pi->region_rank0 = max_over_mean(w->reg_one, s->P, k);
        }
    }
    join_union(s, x, r, set);
    double g2;
    compare_pairs(s, x, r, g, set, &g2);
    w->lrms[r] = 0.5 * log(g2 > 0 ? g2 / (double)n : 1e-300);
    if (drift(s, x, r, g, kth) != 0)
        return WS_OOM;
    /* keep g as rank r's latest; the old buffer is filled next */
    const int mine = s->I > 1 ? 1 + r : 1;
    w->grad[0] = w->grad[mine];
    w->grad[mine] = g;
    w->norm2[mine] = g2;
    return 0;
}

/* after the ranks: 4a, the means over pairs, 7 (the exact global top-k,
 * the top-k of |sum of the P gradients|: its share inside rank 0's top-k
 * and inside the union), and at a run's last iteration its means.  0 or
 * WS_OOM */
static int end_iteration(wstats_pass *s, wstats_iter *x)
{
    work *w = &s->w;
    sp_wstats_iter *pi = x->pi;
    sp_wstats_run *run = x->run;
    const uint64_t k = s->k;
    const int P = s->P;
    if (s->rw > 0)
        pi->region_union = max_over_mean(w->reg_union, P, x->in_union);
    pi->jaccard_ranks = mget(&x->jr);
    pi->cosine_ranks = mget(&x->cr);
    if (topk(w->sum, s->n, k, w->top2, &w->tk) != 0)
        return WS_OOM;
    uint64_t in0 = 0, inu = 0;
    for (uint64_t i = 0, j = 0; i < k && j < k;) {
        if (w->top2[i].idx < x->sets[j])
            i++;
        else if (x->sets[j] < w->top2[i].idx)
            j++;
        else {
            in0++;
            i++;
            j++;
        }
    }
    for (uint64_t i = 0; i < k; i++)
        inu += w->marks[w->top2[i].idx];
    pi->global_in_rank0 = (double)in0 / (double)k;
    pi->global_in_union = (double)inu / (double)k;
    /* 9: the ranks' ln RMS about their mean; the previous iteration's, where
     * it is the previous training iteration, for the persistence */
    double mu = 0, mp = 0, lo = INFINITY, hi = -INFINITY, v2 = 0;
    int prev = x->lag_it[0] >= 0 && x->lag_it[0] == x->it - 1;
    for (int r = 0; r < P; r++) {
        mu += w->lrms[r] / P;
        mp += w->lrms_prev[r] / P;
        lo = w->lrms[r] < lo ? w->lrms[r] : lo;
        hi = w->lrms[r] > hi ? w->lrms[r] : hi;
    }
    for (int r = 0; r < P; r++) {
        double d = w->lrms[r] - mu, dp = w->lrms_prev[r] - mp;
        v2 += d * d;
        if (prev) {
            s->rank_c2 += d * dp;
            s->rank_cv += dp * dp;
        }
    }
    if (P > 1) {
        s->rank_v2 += v2;
        s->rank_dof += P - 1;
        pi->rank_log_sd = sqrt(v2 / (P - 1));
        pi->rank_max_over_min = exp(hi - lo);
    }
    double *t = w->lrms_prev;
    w->lrms_prev = w->lrms;
    w->lrms = t;
    if (x->pos == run->length - 1) { /* the run's last iteration: its means over lags, ranks */
        mean_acc cm = {0, 0};
        for (int l = 1; l <= run->ncold; l++) {
            run->cold[l] /= P;
            macc(&cm, run->cold[l]);
        }
        run->cold_mean = mget(&cm);
        if (run->nsettled > 0)
            run->settled_mean = w->settled_sum[x->ri] / ((double)run->nsettled * P);
        /* rank 0's gradient norm at the run's last iteration / first */
        double first = s->out->per_iter[w->run_start[x->ri]].norm;
        if (run->length >= 2 && first > 0)
            run->norm_ratio = pi->norm / first;
    }
    return 0;
}

/* the means over iterations and pairs */
static void mean_over_iterations(wstats_pass *s)
{
    sp_wstats *out = s->out;
    mean_acc a[11], au[SP_WSTATS_MAX_UNION];
    memset(a, 0, sizeof a);
    memset(au, 0, sizeof au);
    for (int it = 0; it < s->I; it++) {
        const sp_wstats_iter *pi = &out->per_iter[it];
        macc(&a[0], pi->kurt_whole);
        macc(&a[1], pi->kurt_layer_median);
        macc(&a[2], pi->kth_over_median);
        macc(&a[3], pi->k10_over_kth);
        macc(&a[4], pi->zeros);
        macc(&a[5], pi->region_union);
        macc(&a[6], pi->region_rank0);
        macc(&a[7], pi->jaccard_ranks);
        macc(&a[8], pi->cosine_ranks);
        macc(&a[9], pi->global_in_rank0);
        macc(&a[10], pi->global_in_union);
        for (int j = 0; j < out->nunion; j++)
            macc(&au[j], pi->union_over_k[j]);
    }
    out->kurt_whole = mget(&a[0]);
    out->kurt_layer_median = mget(&a[1]);
    out->kth_over_median = mget(&a[2]);
    out->k10_over_kth = mget(&a[3]);
    out->zeros = mget(&a[4]);
    out->region_union = mget(&a[5]);
    out->region_rank0 = mget(&a[6]);
    out->jaccard_ranks = mget(&a[7]);
    out->cosine_ranks = mget(&a[8]);
    out->global_in_rank0 = mget(&a[9]);
    out->global_in_union = mget(&a[10]);
    for (int j = 0; j < out->nunion; j++)
        out->union_over_k[j] = mget(&au[j]);
    for (int l = 0; l < SP_WSTATS_NLAGS; l++) {
        out->jaccard_lag[l] = mget(&s->jlag[l]);
        out->jaccard_lag_pairs[l] = s->jlag[l].n;
    }
    out->jaccard_lag1_other = mget(&s->jother);
    out->jaccard_lag1_other_pairs = s->jother.n;
    out->cosine_lag1 = mget(&s->clag);
    out->cosine_lag1_pairs = s->clag.n;
    out->rank_log_sd = s->rank_dof ? sqrt(s->rank_v2 / (double)s->rank_dof) : NAN;
    out->rank_log_corr = s->rank_cv > 0 ? s->rank_c2 / s->rank_cv : NAN;
    double *ratios = malloc((size_t)(s->I ? s->I : 1) * sizeof *ratios);
    int m = 0;
    for (int it = 0; ratios && it < s->I; it++)
        if (!isnan(out->per_iter[it].rank_max_over_min))
            ratios[m++] = out->per_iter[it].rank_max_over_min;
    out->rank_max_over_min = ratios && m ? median_sorting(ratios, m) : NAN;
    free(ratios);
}

/* the means over runs: the drift, and the norm's ratio */
static void mean_over_runs(sp_wstats *out)
{
    mean_acc a[SP_WSTATS_NLAGS + 3];
    memset(a, 0, sizeof a);
    for (int j = 0; j < out->nruns; j++) {
        const sp_wstats_run *run = &out->runs[j];
        for (int l = 0; l < SP_WSTATS_NLAGS; l++)
            if (LAGS[l] <= run->ncold)
                macc(&a[l], run->cold[LAGS[l]]);
        macc(&a[SP_WSTATS_NLAGS], run->cold_mean);
        macc(&a[SP_WSTATS_NLAGS + 1], run->settled_mean);
        macc(&a[SP_WSTATS_NLAGS + 2], run->norm_ratio);
    }
    for (int l = 0; l < SP_WSTATS_NLAGS; l++)
        out->drift_cold[l] = mget(&a[l]);
    out->drift_cold_mean = mget(&a[SP_WSTATS_NLAGS]);
    out->drift_settled_mean = mget(&a[SP_WSTATS_NLAGS + 1]);
    out->norm_ratio = mget(&a[SP_WSTATS_NLAGS + 2]);
}

int sp_wstats_compute(sp_grad_source *src, const sp_wstats_opts *o, sp_wstats *out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out) {
        set_err(err, errlen, "workload statistics: nowhere to write");
        return -1;
    }
    memset(out, 0, sizeof *out);
    wstats_pass s = {.src = src, .out = out, .err = err, .errlen = errlen};
    if (check_input(src, o, &s.k, err, errlen) != 0)
        return -1;
    s.n = src->n;
    s.P = o->ranks;
    s.tau = o->tau_prime;
    s.I = o->max_iters > 0 && o->max_iters < src->iters ? o->max_iters : src->iters;
    s.depth = s.I < RING_DEPTH ? s.I : RING_DEPTH;
    s.rw = s.n / (uint64_t)s.P;
    describe(&s, o);
    int any_cold, any_settled;
    int rc = plan_runs(&s, &any_cold, &any_settled);
    if (!rc)
        rc = alloc_work(&s, any_cold, any_settled);
    for (int it = 0; it < s.I && !rc; it++) {
        wstats_iter x;
        start_iteration(&s, it, &x);
        for (int r = 0; r < s.P && !rc; r++)
            rc = add_rank(&s, &x, r);
        if (!rc)
            rc = end_iteration(&s, &x);
    }
    if (!rc) {
        mean_over_iterations(&s);
        mean_over_runs(out);
    }
    if (rc == WS_OOM)
        set_err(err, errlen, "workload statistics: out of memory (n = %llu, k = %llu, P = %d)",
                (unsigned long long)s.n, (unsigned long long)s.k, s.P);
    work_free(&s.w, s.P);
    if (rc) {
        sp_wstats_free(out);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ output */

static void print_row(FILE *f, const char *what, double v)
{
    if (isnan(v))
        fprintf(f, "  %-62s %10s\n", what, "-");
    else
        fprintf(f, "  %-62s %10.4g\n", what, v);
}

void sp_wstats_print(const sp_wstats *s, FILE *f)
{
    char what[128];
    fprintf(f, "workload statistics: n = %llu, k = %llu (density %g), P = %d, %d iterations in %d run%s\n",
            (unsigned long long)s->n, (unsigned long long)s->k, s->density, s->ranks, s->iters, s->nruns,
            s->nruns == 1 ? "" : "s");
    print_row(f, "excess kurtosis, whole vector (Laplace 3, normal 0)", s->kurt_whole);
    snprintf(what, sizeof what, "excess kurtosis within a layer (median of %d)", s->layers);
    print_row(f, what, s->kurt_layer_median);
    print_row(f, "k-th largest / median of |g|", s->kth_over_median);
    print_row(f, "(k/10)-th / k-th largest |g|", s->k10_over_kth);
    print_row(f, "exact zeros", s->zeros);
    for (int j = 0; j < s->nunion; j++) {
        snprintf(what, sizeof what, "union of local top-k / k, p = %d", s->union_p[j]);
        print_row(f, what, s->union_over_k[j]);
    }
    snprintf(what, sizeof what, "union of top-k, %d equal regions: max/mean", s->ranks);
    print_row(f, what, s->region_union);
    snprintf(what, sizeof what, "rank 0's top-k, %d equal regions: max/mean", s->ranks);
    print_row(f, what, s->region_rank0);
    print_row(f, "Jaccard of top-k, ranks r and r+1", s->jaccard_ranks);
    for (int l = 0; l < SP_WSTATS_NLAGS; l++) {
        snprintf(what, sizeof what, "Jaccard, same rank, t -> t+%d (%ld pairs)", s->lags[l], s->jaccard_lag_pairs[l]);
        print_row(f, what, s->jaccard_lag[l]);
    }
    snprintf(what, sizeof what, "Jaccard t -> t+1, another rank (%ld pairs)", s->jaccard_lag1_other_pairs);
    print_row(f, what, s->jaccard_lag1_other);
    print_row(f, "cosine of gradients, ranks r and r+1", s->cosine_ranks);
    snprintf(what, sizeof what, "cosine t -> t+1, same rank (%ld pairs)", s->cosine_lag1_pairs);
    print_row(f, what, s->cosine_lag1);
    print_row(f, "exact global top-k: share inside rank 0's top-k", s->global_in_rank0);
    print_row(f, "exact global top-k: share inside the union", s->global_in_union);
    for (int l = 0; l < SP_WSTATS_NLAGS; l++) {
        snprintf(what, sizeof what, "threshold reuse, cold residual: count/k at t0+%d", s->lags[l]);
        print_row(f, what, s->drift_cold[l]);
    }
    snprintf(what, sizeof what, "same, mean over lags 1..%d", s->tau_prime - 1);
    print_row(f, what, s->drift_cold_mean);
    print_row(f, "threshold reuse, settled residual: mean count/k", s->drift_settled_mean);
    print_row(f, "gradient norm, last / first iteration of a run", s->norm_ratio);
    print_row(f, "ranks' gradient sizes: sd of ln RMS over ranks", s->rank_log_sd);
    print_row(f, "ranks' gradient sizes: largest / smallest RMS (median)", s->rank_max_over_min);
    print_row(f, "ranks' gradient sizes: persistence t -> t+1", s->rank_log_corr);
    for (int j = 0; j < s->nruns; j++) {
        const sp_wstats_run *r = &s->runs[j];
        fprintf(f, "  run %d: training iterations %d..%d: cold mean %.4g over %d lags, settled mean %.4g over %d, "
                   "norm ratio %.4g\n",
                j, r->first_iter_id, r->first_iter_id + r->length - 1, r->cold_mean, r->ncold, r->settled_mean,
                r->nsettled, r->norm_ratio);
    }
}

/* JSON building: any failed allocation sets *bad; NAN becomes null */
static void jadd(cJSON *o, const char *key, cJSON *x, int *bad)
{
    if (!x || !cJSON_AddItemToObject(o, key, x)) {
        cJSON_Delete(x);
        *bad = 1;
    }
}

static cJSON *jval(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static void jnum(cJSON *o, const char *key, double v, int *bad) { jadd(o, key, jval(v), bad); }

static cJSON *jarr(const double *v, int m, int *bad)
{
    cJSON *a = cJSON_CreateArray();
    if (!a) {
        *bad = 1;
        return NULL;
    }
    for (int j = 0; j < m; j++) {
        cJSON *x = jval(v[j]);
        if (!x || !cJSON_AddItemToArray(a, x)) {
            cJSON_Delete(x);
            *bad = 1;
        }
    }
    return a;
}

cJSON *sp_wstats_json(const sp_wstats *s)
{
    int bad = 0;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    jnum(o, "n", (double)s->n, &bad);
    jnum(o, "k", (double)s->k, &bad);
    jnum(o, "density", s->density, &bad);
    jnum(o, "ranks", s->ranks, &bad);
    jnum(o, "tau_prime", s->tau_prime, &bad);
    jnum(o, "iterations", s->iters, &bad);
    jnum(o, "layers", s->layers, &bad);
    jnum(o, "kurtosis_whole", s->kurt_whole, &bad);
    jnum(o, "kurtosis_layer_median", s->kurt_layer_median, &bad);
    jnum(o, "kth_over_median", s->kth_over_median, &bad);
    jnum(o, "k10_over_kth", s->k10_over_kth, &bad);
    jnum(o, "zeros", s->zeros, &bad);
    jadd(o, "union_p", cJSON_CreateIntArray(s->union_p, s->nunion), &bad);
    jadd(o, "union_over_k", jarr(s->union_over_k, s->nunion, &bad), &bad);
    jnum(o, "region_union_max_over_mean", s->region_union, &bad);
    jnum(o, "region_rank0_max_over_mean", s->region_rank0, &bad);
    jnum(o, "jaccard_ranks", s->jaccard_ranks, &bad);
    jadd(o, "lags", cJSON_CreateIntArray(s->lags, SP_WSTATS_NLAGS), &bad);
    jadd(o, "jaccard_lag", jarr(s->jaccard_lag, SP_WSTATS_NLAGS, &bad), &bad);
    double pairs[SP_WSTATS_NLAGS];
    for (int l = 0; l < SP_WSTATS_NLAGS; l++)
        pairs[l] = (double)s->jaccard_lag_pairs[l];
    jadd(o, "jaccard_lag_pairs", jarr(pairs, SP_WSTATS_NLAGS, &bad), &bad);
    jnum(o, "jaccard_lag1_other_rank", s->jaccard_lag1_other, &bad);
    jnum(o, "jaccard_lag1_other_rank_pairs", (double)s->jaccard_lag1_other_pairs, &bad);
    jnum(o, "cosine_ranks", s->cosine_ranks, &bad);
    jnum(o, "cosine_lag1", s->cosine_lag1, &bad);
    jnum(o, "cosine_lag1_pairs", (double)s->cosine_lag1_pairs, &bad);
    jnum(o, "global_in_rank0", s->global_in_rank0, &bad);
    jnum(o, "global_in_union", s->global_in_union, &bad);
    jadd(o, "drift_cold", jarr(s->drift_cold, SP_WSTATS_NLAGS, &bad), &bad);
    jnum(o, "drift_cold_mean", s->drift_cold_mean, &bad);
    jnum(o, "drift_settled_mean", s->drift_settled_mean, &bad);
    jnum(o, "norm_ratio", s->norm_ratio, &bad);
    jnum(o, "rank_log_sd", s->rank_log_sd, &bad);
    jnum(o, "rank_max_over_min", s->rank_max_over_min, &bad);
    jnum(o, "rank_log_corr", s->rank_log_corr, &bad);

    cJSON *its = cJSON_CreateArray();
    jadd(o, "per_iteration", its, &bad);
    for (int it = 0; its && it < s->iters; it++) {
        const sp_wstats_iter *pi = &s->per_iter[it];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(its, e)) {
            cJSON_Delete(e);
            bad = 1;
            break;
        }
        jnum(e, "iter_id", pi->iter_id, &bad);
        jnum(e, "kurtosis_whole", pi->kurt_whole, &bad);
        jnum(e, "kurtosis_layer_median", pi->kurt_layer_median, &bad);
        jnum(e, "kth_over_median", pi->kth_over_median, &bad);
        jnum(e, "k10_over_kth", pi->k10_over_kth, &bad);
        jnum(e, "zeros", pi->zeros, &bad);
        jnum(e, "norm", pi->norm, &bad);
        jnum(e, "rank_log_sd", pi->rank_log_sd, &bad);
        jnum(e, "rank_max_over_min", pi->rank_max_over_min, &bad);
        jadd(e, "union_over_k", jarr(pi->union_over_k, s->nunion, &bad), &bad);
        jnum(e, "region_union_max_over_mean", pi->region_union, &bad);
        jnum(e, "region_rank0_max_over_mean", pi->region_rank0, &bad);
        jnum(e, "jaccard_ranks", pi->jaccard_ranks, &bad);
        jnum(e, "cosine_ranks", pi->cosine_ranks, &bad);
        jnum(e, "global_in_rank0", pi->global_in_rank0, &bad);
        jnum(e, "global_in_union", pi->global_in_union, &bad);
    }

    cJSON *runs = cJSON_CreateArray();
    jadd(o, "runs", runs, &bad);
    for (int j = 0; runs && j < s->nruns; j++) {
        const sp_wstats_run *r = &s->runs[j];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(runs, e)) {
            cJSON_Delete(e);
            bad = 1;
            break;
        }
        jnum(e, "first_iter_id", r->first_iter_id, &bad);
        jnum(e, "length", r->length, &bad);
        /* count/k at lags 1..ncold (element l-1 is lag l) */
        jadd(e, "cold_by_lag", jarr(r->cold + 1, r->ncold, &bad), &bad);
        jnum(e, "cold_mean", r->cold_mean, &bad);
        jnum(e, "settled_iterations", r->nsettled, &bad);
        jnum(e, "settled_mean", r->settled_mean, &bad);
        jnum(e, "norm_ratio", r->norm_ratio, &bad);
    }
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
