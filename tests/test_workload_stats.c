/* test_workload_stats.c - the workload statistics (analysis/workload_stats.c)
 * on small in-memory gradient sources built so that each statistic has a
 * value known by construction or by hand: identical ranks, disjoint top-k
 * sets, +-1 vectors with a few spikes, Laplace and normal samples, a
 * constant gradient under error feedback, a layer table with a spiky layer,
 * and bad input. */
#include "analysis/workload_stats.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- an in-memory source */

typedef void (*t_gen)(const void *ctx, int it, int rank, uint64_t n, float *out);

typedef struct {
    sp_grad_source base; /* first: the source is the struct */
    t_gen gen;
    const void *ctx;
    int fail_it, fail_rank; /* fill fails there (-1: never) */
    int *ids;
    sp_layer *layers;
} t_src;

static int t_fill(sp_grad_source *s, int it, int rank, float *out, int add, char *err, size_t errlen)
{
    t_src *t = s->impl;
    if (it < 0 || it >= s->iters || rank < 0 || rank >= s->ranks || (it == t->fail_it && rank == t->fail_rank)) {
        snprintf(err, errlen, "boom at (%d, %d)", it, rank);
        return -1;
    }
    if (!add) {
        t->gen(t->ctx, it, rank, s->n, out);
        return 0;
    }
    float *tmp = malloc(s->n * sizeof *tmp);
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->gen(t->ctx, it, rank, s->n, tmp);
    for (uint64_t i = 0; i < s->n; i++)
        out[i] += tmp[i];
    free(tmp);
    return 0;
}

static void t_close(sp_grad_source *s)
{
    t_src *t = s->impl;
    free(t->ids);
    free(t->layers);
    free(t);
}

/* ids: NULL for 0, 1, 2, ... (copied); layers: nlayers (offset, size) pairs (copied) */
static sp_grad_source *t_src_new(uint64_t n, int ranks, int iters, t_gen gen, const void *ctx, const int *ids,
                                 const uint64_t (*layers)[2], int nlayers)
{
    t_src *t = calloc(1, sizeof *t);
    cr_assert(t);
    t->gen = gen;
    t->ctx = ctx;
    t->fail_it = t->fail_rank = -1;
    t->base.n = n;
    t->base.ranks = ranks;
    t->base.iters = iters;
    t->base.fill = t_fill;
    t->base.close = t_close;
    t->base.impl = t;
    if (ids) {
        t->ids = malloc((size_t)iters * sizeof *t->ids);
        cr_assert(t->ids);
        memcpy(t->ids, ids, (size_t)iters * sizeof *ids);
        t->base.iter_ids = t->ids;
    }
    if (nlayers > 0) {
        t->layers = calloc((size_t)nlayers, sizeof *t->layers);
        cr_assert(t->layers);
        for (int l = 0; l < nlayers; l++) {
            snprintf(t->layers[l].name, sizeof t->layers[l].name, "layer%d", l);
            t->layers[l].offset = layers[l][0];
            t->layers[l].size = layers[l][1];
        }
        t->base.layers = t->layers;
        t->base.nlayers = nlayers;
    }
    return &t->base;
}

static sp_wstats run_ok(sp_grad_source *src, double density, int ranks, int tau_prime, int max_iters)
{
    sp_wstats_opts o = {.density = density, .ranks = ranks, .tau_prime = tau_prime, .max_iters = max_iters};
    sp_wstats s;
    char err[256];
    int rc = sp_wstats_compute(src, &o, &s, err, sizeof err);
    cr_assert_eq(rc, 0, "sp_wstats_compute failed: %s", err);
    return s;
}

#define NEAR(a, b, tol) cr_assert(fabs((double)(a) - (double)(b)) <= (tol), "%s = %.10g, expected %.10g", #a, \
                                  (double)(a), (double)(b))

/* ------------------------------------------------------- identical ranks */

/* |g_i| runs through 1..1000 (/1000) once (7919 is prime to 1000), signs
 * alternate; the same for every rank and iteration */
static void gen_same(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)rank;
    for (uint64_t i = 0; i < n; i++)
        out[i] = (float)((i * 7919) % 1000 + 1) / 1000.0f * (i % 2 ? -1.0f : 1.0f);
}

Test(workload_stats, identical_ranks)
{
    sp_grad_source *src = t_src_new(1000, 4, 3, gen_same, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.05, 4, 32, 0); /* k = 50 */
    cr_assert_eq(s.k, 50);
    cr_assert_eq(s.nunion, 2);
    cr_assert_eq(s.union_p[0], 2);
    cr_assert_eq(s.union_p[1], 4);
    NEAR(s.union_over_k[0], 1.0, 0);
    NEAR(s.union_over_k[1], 1.0, 0);
    NEAR(s.jaccard_ranks, 1.0, 0);
    NEAR(s.cosine_ranks, 1.0, 1e-12);
    NEAR(s.global_in_rank0, 1.0, 0);
    NEAR(s.global_in_union, 1.0, 0);
    NEAR(s.region_union, s.region_rank0, 0);
    /* over time too: 2 pairs of consecutive iterations per rank */
    NEAR(s.jaccard_lag[0], 1.0, 0);
    cr_assert_eq(s.jaccard_lag_pairs[0], 2 * 4);
    cr_assert_eq(s.jaccard_lag_pairs[1], 0);
    cr_assert(isnan(s.jaccard_lag[1]));
    NEAR(s.jaccard_lag1_other, 1.0, 0);
    cr_assert_eq(s.jaccard_lag1_other_pairs, 2 * 3);
    NEAR(s.cosine_lag1, 1.0, 1e-12);
    /* |g| = 1..1000 / 1000: the 50th largest is 951, the median (500 +
     * 501) / 2, the 5th largest 996 */
    NEAR(s.kth_over_median, 951.0 / 500.5, 1e-6);
    NEAR(s.k10_over_kth, 996.0 / 951.0, 1e-6);
    NEAR(s.zeros, 0.0, 0);
    NEAR(s.norm_ratio, 1.0, 1e-12);
    sp_wstats_free(&s);
    cr_assert_null(s.per_iter);
    src->close(src);
}

/* all entries of equal |value|: the tie rule (smaller index first) makes
 * every rank's top-k the first k indices; ranks alternate in sign */
static void gen_ties(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it;
    for (uint64_t i = 0; i < n; i++)
        out[i] = rank % 2 ? -1.0f : 1.0f;
}

Test(workload_stats, ties_go_to_smaller_indices)
{
    sp_grad_source *src = t_src_new(100, 4, 1, gen_ties, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.1, 4, 32, 0); /* k = 10, regions of 25 */
    NEAR(s.union_over_k[1], 1.0, 0);
    NEAR(s.region_rank0, 4.0, 1e-12); /* 10 in region 0, mean 2.5 */
    NEAR(s.region_union, 4.0, 1e-12);
    NEAR(s.cosine_ranks, -1.0, 1e-12);
    NEAR(s.jaccard_ranks, 1.0, 0);
    /* the sum of the 4 ranks is 0 everywhere: its top-k is indices 0..9 too */
    NEAR(s.global_in_rank0, 1.0, 0);
    /* the median |g| is 1, the 10th largest 1 */
    NEAR(s.kth_over_median, 1.0, 0);
    NEAR(s.k10_over_kth, 1.0, 0);
    cr_assert(isnan(s.kurt_whole)); /* a constant vector has no kurtosis */
    cr_assert(isnan(s.drift_cold_mean)); /* one iteration: no drift */
    sp_wstats_free(&s);
    src->close(src);
}

/* ------------------------------------------------ disjoint top-k sets */

/* P regions of n / P entries; rank r at iteration t has its k = 8 large
 * entries (10 + j, j < 8) at the start of region (r - t) mod P, small
 * nonzero values elsewhere, the same small value at an index for all ranks */
static void gen_disjoint(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    int P = *(const int *)ctx;
    uint64_t w = n / (uint64_t)P;
    for (uint64_t i = 0; i < n; i++)
        out[i] = 0.01f * (float)(i % 7 + 1);
    uint64_t q = (uint64_t)(((rank - it) % P + P) % P);
    for (uint64_t j = 0; j < 8; j++)
        out[q * w + j] = 10.0f + (float)j;
}

Test(workload_stats, disjoint_sets)
{
    int P = 8;
    sp_grad_source *src = t_src_new(800, P, 12, gen_disjoint, &P, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.01, P, 32, 0); /* k = 8 */
    cr_assert_eq(s.k, 8);
    cr_assert_eq(s.nunion, 3);
    NEAR(s.union_over_k[0], 2.0, 0);
    NEAR(s.union_over_k[1], 4.0, 0);
    NEAR(s.union_over_k[2], 8.0, 0);
    NEAR(s.jaccard_ranks, 0.0, 0);
    /* the union has 8 in every region; rank 0 has all 8 in one */
    NEAR(s.region_union, 1.0, 1e-12);
    NEAR(s.region_rank0, 8.0, 1e-12);
    /* the same rank moves one region per iteration: disjoint at lag 1 and
     * 10 (10 mod 8 = 2); rank r+1 at t+1 is where rank r was at t */
    NEAR(s.jaccard_lag[0], 0.0, 0);
    NEAR(s.jaccard_lag[1], 0.0, 0);
    cr_assert_eq(s.jaccard_lag_pairs[0], 11 * 8);
    cr_assert_eq(s.jaccard_lag_pairs[1], 2 * 8);
    cr_assert_eq(s.jaccard_lag_pairs[2], 0);
    NEAR(s.jaccard_lag1_other, 1.0, 0);
    /* the sum's 8 largest are the 17s + 7 small, one per region: one of
     * them in rank 0's set, all in the union */
    NEAR(s.global_in_rank0, 1.0 / 8, 1e-12);
    NEAR(s.global_in_union, 1.0, 0);
    sp_wstats_free(&s);
    src->close(src);
}

Test(workload_stats, union_sizes_up_to_a_rank_count_not_a_power_of_two)
{
    int P = 6;
    sp_grad_source *src = t_src_new(600, 8, 1, gen_disjoint, &P, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 8.0 / 600, P, 32, 0); /* k = 8 */
    cr_assert_eq(s.nunion, 3);
    cr_assert_eq(s.union_p[2], 6);
    NEAR(s.union_over_k[0], 2.0, 0);
    NEAR(s.union_over_k[1], 4.0, 0);
    NEAR(s.union_over_k[2], 6.0, 0);
    sp_wstats_free(&s);
    src->close(src);
}

/* ---------------------------------- two ranks, a global top-k by hand */

static void gen_two(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)n;
    static const float g0[8] = {5, 4, 0, 0, 0, 0, 3, 0}, g1[8] = {0, 0, 0, 0, 0, 0, 3, 4.5f};
    memcpy(out, rank ? g1 : g0, sizeof g0);
}

Test(workload_stats, global_topk_by_hand)
{
    sp_grad_source *src = t_src_new(8, 2, 1, gen_two, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.25, 2, 32, 0); /* k = 2 */
    /* top-2: rank 0 {0, 1}, rank 1 {6, 7}; sum (5 4 0 0 0 0 6 4.5): {0, 6} */
    NEAR(s.union_over_k[0], 2.0, 0);
    NEAR(s.jaccard_ranks, 0.0, 0);
    NEAR(s.global_in_rank0, 0.5, 0);
    NEAR(s.global_in_union, 1.0, 0);
    /* <g0, g1> = 9, |g0|^2 = 50, |g1|^2 = 29.25 */
    NEAR(s.cosine_ranks, 9.0 / sqrt(50.0 * 29.25), 1e-12);
    /* regions [0, 4), [4, 8): the union 2 + 2, rank 0 2 + 0 */
    NEAR(s.region_union, 1.0, 0);
    NEAR(s.region_rank0, 2.0, 0);
    /* 5 of 8 entries are 0; the median |g| is 0: no ratio */
    NEAR(s.zeros, 5.0 / 8, 0);
    cr_assert(isnan(s.kth_over_median));

    cJSON *j = sp_wstats_json(&s);
    cr_assert(j);
    cJSON *u = cJSON_GetObjectItem(j, "union_over_k");
    cr_assert(cJSON_IsArray(u));
    cr_assert_eq(cJSON_GetArraySize(u), 1);
    NEAR(cJSON_GetArrayItem(u, 0)->valuedouble, 2.0, 0);
    NEAR(cJSON_GetObjectItem(j, "global_in_rank0")->valuedouble, 0.5, 0);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "kth_over_median")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "cosine_lag1")));
    cJSON *its = cJSON_GetObjectItem(j, "per_iteration");
    cr_assert_eq(cJSON_GetArraySize(its), 1);
    NEAR(cJSON_GetObjectItem(cJSON_GetArrayItem(its, 0), "zeros")->valuedouble, 0.625, 0);
    cJSON_Delete(j);

    FILE *f = tmpfile();
    cr_assert(f);
    sp_wstats_print(&s, f);
    rewind(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    cr_assert(strstr(text, "union of local top-k / k, p = 2"), "%s", text);
    cr_assert(strstr(text, "exact global top-k: share inside rank 0's top-k"), "%s", text);
    sp_wstats_free(&s);
    src->close(src);
}

/* two ranks sharing one of their two top-k entries; and two ranks whose
 * largest entries cancel in the sum */
static void gen_partial(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)it, (void)n;
    static const float a[2][8] = {{5, 4, 1, 0, 0, 0, 0, 0}, {5, 0, 0, 4, 0, 0, 0, 0}};
    static const float b[2][8] = {{3, 2, 0, 0, 0, 0, 0, 0}, {-3, 2, 0, 0, 0, 0, 0, 0}};
    memcpy(out, ctx ? b[rank] : a[rank], sizeof a[0]);
}

Test(workload_stats, partial_overlap_and_cancelling_sum)
{
    /* k = 2: {0, 1} and {0, 3}: Jaccard 1 / 3, union 3 / 2; sum (10 4 1 4):
     * {0, 1} (4 = 4: smaller index), inside rank 0's set */
    sp_grad_source *src = t_src_new(8, 2, 1, gen_partial, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.25, 2, 32, 0);
    NEAR(s.jaccard_ranks, 1.0 / 3, 1e-12);
    NEAR(s.union_over_k[0], 1.5, 0);
    NEAR(s.global_in_rank0, 1.0, 0);
    NEAR(s.global_in_union, 1.0, 0);
    NEAR(s.cosine_ranks, 25.0 / (sqrt(42.0) * sqrt(41.0)), 1e-12);
    sp_wstats_free(&s);
    src->close(src);

    /* k = 1: both ranks pick index 0 (|3| = |-3|), the sum (0 4) has index
     * 1: outside rank 0's set and outside the union */
    static const int flag = 1;
    src = t_src_new(8, 2, 1, gen_partial, &flag, NULL, NULL, 0);
    s = run_ok(src, 0.125, 2, 32, 0);
    NEAR(s.union_over_k[0], 1.0, 0);
    NEAR(s.global_in_rank0, 0.0, 0);
    NEAR(s.global_in_union, 0.0, 0);
    NEAR(s.cosine_ranks, -5.0 / 13, 1e-12);
    sp_wstats_free(&s);
    src->close(src);
}

/* n = 10 in 3 regions of width 3: [0, 3), [3, 6), [6, 10); the top-2 at 8
 * and 9 both lie in the last, which takes the remainder */
static void gen_remainder(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)rank;
    for (uint64_t i = 0; i < n; i++)
        out[i] = i >= 8 ? 5.0f : 1.0f;
}

Test(workload_stats, last_region_takes_the_remainder)
{
    sp_grad_source *src = t_src_new(10, 3, 1, gen_remainder, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.2, 3, 32, 0); /* k = 2 */
    NEAR(s.region_rank0, 3.0, 1e-12); /* counts 0 0 2, mean 2/3 */
    NEAR(s.region_union, 3.0, 1e-12);
    sp_wstats_free(&s);
    src->close(src);
}

/* a vector long enough for the sampled-threshold top-k (n >= 4 x 65536)
 * with 97 magnitudes only, so that the k-th largest is tied thousands of
 * times; rank 1 is rank 0 in the first half and rank 0 reversed in the
 * second, so that their top-k sets overlap partly */
#define BIG_N 300000
static float big_value(uint64_t i) { return (float)((i * 7919) % 97) * (i % 3 ? 1.0f : -1.0f); }

static void gen_big_ties(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it;
    for (uint64_t i = 0; i < n; i++)
        out[i] = big_value(rank && i >= n / 2 ? n - 1 - i : i);
}

/* the reference top-k, written the simplest way: sort by (|x| desc, index
 * asc), keep k, then index order */
static const float *ref_x;
static int ref_by_mag(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    float x = fabsf(ref_x[i]), y = fabsf(ref_x[j]);
    if (x != y)
        return x > y ? -1 : 1;
    return i < j ? -1 : (i > j);
}
static int ref_by_idx(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return i < j ? -1 : (i > j);
}
static uint8_t *ref_topk_marks(const float *x, uint64_t n, uint64_t k)
{
    int32_t *order = malloc(n * sizeof *order);
    uint8_t *in = calloc(n, 1);
    cr_assert(order && in);
    for (uint64_t i = 0; i < n; i++)
        order[i] = (int32_t)i;
    ref_x = x;
    qsort(order, n, sizeof *order, ref_by_mag);
    qsort(order, k, sizeof *order, ref_by_idx);
    for (uint64_t j = 0; j < k; j++)
        in[order[j]] = 1;
    free(order);
    return in;
}

Test(workload_stats, tied_topk_on_a_long_vector_matches_a_sort)
{
    static const double densities[2] = {0.01, 4000.0 / BIG_N}; /* k = 3000: inside the ties of 96; 4000: of 95 */
    float *g0 = malloc(BIG_N * sizeof *g0), *g1 = malloc(BIG_N * sizeof *g1), *sum = malloc(BIG_N * sizeof *sum);
    cr_assert(g0 && g1 && sum);
    gen_big_ties(NULL, 0, 0, BIG_N, g0);
    gen_big_ties(NULL, 0, 1, BIG_N, g1);
    for (uint64_t i = 0; i < BIG_N; i++)
        sum[i] = g0[i] + g1[i];
    for (int d = 0; d < 2; d++) {
        uint64_t k = (uint64_t)floor(BIG_N * densities[d]);
        uint8_t *a = ref_topk_marks(g0, BIG_N, k), *b = ref_topk_marks(g1, BIG_N, k);
        uint8_t *gl = ref_topk_marks(sum, BIG_N, k);
        uint64_t inter = 0, g_in_a = 0, g_in_u = 0;
        for (uint64_t i = 0; i < BIG_N; i++) {
            inter += a[i] && b[i];
            g_in_a += gl[i] && a[i];
            g_in_u += gl[i] && (a[i] || b[i]);
        }
        sp_grad_source *src = t_src_new(BIG_N, 2, 1, gen_big_ties, NULL, NULL, NULL, 0);
        sp_wstats s = run_ok(src, densities[d], 2, 32, 0);
        cr_assert_eq(s.k, k);
        cr_assert(inter > 0 && inter < k, "the case must overlap partly (%llu of %llu)", (unsigned long long)inter,
                  (unsigned long long)k);
        NEAR(s.jaccard_ranks, (double)inter / (double)(2 * k - inter), 0);
        NEAR(s.union_over_k[0], (double)(2 * k - inter) / (double)k, 0);
        NEAR(s.global_in_rank0, (double)g_in_a / (double)k, 0);
        NEAR(s.global_in_union, (double)g_in_u / (double)k, 0);
        sp_wstats_free(&s);
        src->close(src);
        free(a);
        free(b);
        free(gl);
    }
    free(g0);
    free(g1);
    free(sum);
}

/* ------------------------------------------------------------ tail shape */

/* +-1 everywhere, 3 exact zeros, 11 spikes of |value| 50 40 30 20 12 11 10
 * 9 8 7 6 */
static void gen_spikes(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)rank;
    static const float spikes[11] = {50, 40, 30, 20, 12, 11, 10, 9, 8, 7, 6};
    for (uint64_t i = 0; i < n; i++)
        out[i] = i % 2 ? -1.0f : 1.0f;
    out[500] = out[501] = out[502] = 0.0f;
    for (int j = 0; j < 11; j++)
        out[10 * j + 5] = j % 2 ? -spikes[j] : spikes[j];
}

Test(workload_stats, spikes_on_plus_minus_one)
{
    sp_grad_source *src = t_src_new(1000, 1, 1, gen_spikes, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.01, 1, 32, 0); /* k = 10, k/10 = 1 */
    /* the 10th largest |g| is 7; the median |g| is 1 (986 ones, 3 zeros,
     * 11 spikes); the largest is 50 */
    NEAR(s.kth_over_median, 7.0, 0);
    NEAR(s.k10_over_kth, 50.0 / 7.0, 1e-12);
    NEAR(s.zeros, 0.003, 1e-15);
    cr_assert_eq(s.nunion, 0); /* one rank */
    cr_assert(isnan(s.jaccard_ranks));
    NEAR(s.region_rank0, 1.0, 0); /* one region */
    sp_wstats_free(&s);
    src->close(src);
}

static float *g_sample; /* 1e6 draws, made by the test */

static void gen_sample(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)rank;
    memcpy(out, g_sample, n * sizeof *out);
}

static sp_wstats sample_stats(int laplace)
{
    enum { N = 1000000 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert(rng);
    gsl_rng_set(rng, 20240611);
    g_sample = malloc(N * sizeof *g_sample);
    cr_assert(g_sample);
    for (int i = 0; i < N; i++)
        g_sample[i] = (float)(laplace ? gsl_ran_laplace(rng, 1.0) : gsl_ran_gaussian(rng, 1.0));
    gsl_rng_free(rng);
    sp_grad_source *src = t_src_new(N, 1, 1, gen_sample, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.01, 1, 32, 0);
    src->close(src);
    free(g_sample);
    return s;
}

Test(workload_stats, laplace_sample)
{
    sp_wstats s = sample_stats(1);
    NEAR(s.kurt_whole, 3.0, 0.2);
    /* no layer table: the vector is the one layer */
    cr_assert_eq(s.layers, 1);
    NEAR(s.kurt_layer_median, s.kurt_whole, 0);
    /* |x| is exponential: q(0.99) / q(0.5) = ln 100 / ln 2 = 6.64,
     * q(0.999) / q(0.99) = ln 1000 / ln 100 = 1.5 (the notes' table) */
    NEAR(s.kth_over_median, log(100.0) / log(2.0), 0.1);
    NEAR(s.k10_over_kth, 1.5, 0.03);
    sp_wstats_free(&s);
}

Test(workload_stats, normal_sample)
{
    sp_wstats s = sample_stats(0);
    NEAR(s.kurt_whole, 0.0, 0.2);
    /* |x| half-normal: 2.5758 / 0.6745 = 3.82, 3.2905 / 2.5758 = 1.277 */
    NEAR(s.kth_over_median, 2.5758293 / 0.6744898, 0.06);
    NEAR(s.k10_over_kth, 3.2905267 / 2.5758293, 0.03);
    sp_wstats_free(&s);
}

/* ------------------------------------------------- kurtosis per layer */

/* layer 0 [0, 100): 1 except 4 spikes of 11; layer 1 [100, 200): +-1;
 * layer 2 [200, 210): 9 zeros and one 5, fewer than 16 entries: skipped */
static void gen_layers(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)rank, (void)n;
    for (int i = 0; i < 100; i++)
        out[i] = i % 25 == 3 ? 11.0f : 1.0f;
    for (int i = 100; i < 200; i++)
        out[i] = i % 2 ? -1.0f : 1.0f;
    for (int i = 200; i < 210; i++)
        out[i] = i == 205 ? 5.0f : 0.0f;
}

Test(workload_stats, kurtosis_median_over_layers)
{
    static const uint64_t layers[3][2] = {{0, 100}, {100, 100}, {200, 10}};
    sp_grad_source *src = t_src_new(210, 1, 1, gen_layers, NULL, NULL, layers, 3);
    sp_wstats s = run_ok(src, 0.1, 1, 32, 0);
    /* a two-valued layer, a fraction p at one value: excess kurtosis
     * (1 - 6 p q) / (p q), q = 1 - p.  Layer 0: p = 0.04, pq = 0.0384,
     * (1 - 0.2304) / 0.0384 = 20.041666...; layer 1: p = 1/2, -2.  Median
     * of two: 9.0208333...  (Layer 2, p = 0.1, would give 5.11 and make
     * the median 5.11.) */
    cr_assert_eq(s.layers, 2);
    NEAR(s.kurt_layer_median, (0.7696 / 0.0384 - 2.0) / 2.0, 1e-9);
    sp_wstats_free(&s);
    src->close(src);
}

/* ------------------------------------------------------- threshold drift */

static void gen_const(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)ctx, (void)it, (void)rank;
    static const float g[8] = {3, 2, 1, 0, 0, 0, 0, 0};
    memcpy(out, g, n * sizeof *out);
}

/* g = (3 2 1 0 0 0 0 0) every iteration, k = 2; only the first three
 * entries matter, written (a b c).
 *
 * Cold: t0: acc = (3 2 1), thr = 2nd largest = 2, |acc| >= 2 sent: (0 0 1).
 *   lag 1: (3 2 2)  > 2: {0}       count 1 -> (0 2 2)
 *   lag 2: (3 4 3)  > 2: {0 1 2}   count 3 -> (0 0 0)
 *   lag 3: (3 2 1)  > 2: {0}       count 1 -> (0 2 1)
 *   lag 4: (3 4 2)  > 2: {0 1}     count 2 -> (0 0 2)
 *   lag 5: (3 2 3)  > 2: {0 2}     count 2 -> (0 2 0)
 *   lag 6: (3 4 1)  > 2: {0 1}     count 2 -> (0 0 1), the state after t0
 * so count/k repeats with period 6: 0.5 1.5 0.5 1 1 1.  Lag 10 = lag 4: 1;
 * lag 31 = lag 1: 0.5.  Over lags 1..31: 5 periods (11 each) + lag 31 (1)
 * = 56 counts, 56 / (31 * 2) = 0.9032...
 *
 * Settled, a run of 32: top-2 error feedback at positions 0..15, from 0:
 *   pos 0: (3 2 1)  top-2 {0 1} -> (0 0 1)
 *   pos 1: (3 2 2)  top-2 {0 1} (2 = 2: smaller index) -> (0 0 2)
 *   pos 2: (3 2 3)  top-2 {0 2} -> (0 2 0)
 *   pos 3: (3 4 1)  top-2 {0 1} -> (0 0 1), the state after pos 0
 * period 3, so after pos 15 (15 = 0 mod 3): (0 0 1).  pos 16: (3 2 2),
 * thr = 2, all three sent: (0 0 0).  Reuse at pos 17..31 (15 iterations):
 *   (3 2 1) 1 -> (0 2 1); (3 4 2) 2 -> (0 0 2); (3 2 3) 2 -> (0 2 0);
 *   (3 4 1) 2 -> (0 0 1); (3 2 2) 1 -> (0 2 2); (3 4 3) 3 -> (0 0 0);
 *   (3 2 1) 1 -> (0 2 1), as after the first: period 6 from the second,
 * counts 1, then 2 2 2 1 3 1 twice, then 2 2: 1 + 11 + 11 + 4 = 27,
 * 27 / (15 * 2) = 0.9. */
Test(workload_stats, cold_and_settled_drift_by_hand)
{
    sp_grad_source *src = t_src_new(8, 2, 32, gen_const, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.25, 2, 32, 0);
    cr_assert_eq(s.nruns, 1);
    cr_assert_eq(s.runs[0].ncold, 31);
    static const double period[6] = {0.5, 1.5, 0.5, 1.0, 1.0, 1.0};
    for (int l = 1; l <= 31; l++)
        NEAR(s.runs[0].cold[l], period[(l - 1) % 6], 0);
    NEAR(s.drift_cold[0], 0.5, 0);
    NEAR(s.drift_cold[1], 1.0, 0);
    NEAR(s.drift_cold[2], 0.5, 0);
    NEAR(s.drift_cold_mean, 56.0 / 62.0, 1e-12);
    cr_assert_eq(s.runs[0].nsettled, 15);
    NEAR(s.drift_settled_mean, 0.9, 1e-12);
    NEAR(s.norm_ratio, 1.0, 0);
    sp_wstats_free(&s);
    src->close(src);
}

Test(workload_stats, drift_horizon_and_runs)
{
    /* tau' = 8: lags 1..7 only: counts 1 3 1 2 2 2 1 = 12, 12 / 14;
     * lags 10 and 31 are beyond the horizon */
    sp_grad_source *src = t_src_new(8, 1, 40, gen_const, NULL, NULL, NULL, 0);
    sp_wstats s = run_ok(src, 0.25, 1, 8, 0);
    NEAR(s.drift_cold_mean, 12.0 / 14.0, 1e-12);
    cr_assert(isnan(s.drift_cold[1]));
    cr_assert(isnan(s.drift_cold[2]));
    sp_wstats_free(&s);
    src->close(src);

    /* two runs, training iterations 0..4 and 100..131: lag 1 in both,
     * lag 10 only in the second; run 1: (0.5 + 1.5 + 0.5 + 1) / 4 = 0.875,
     * run 2: 56 / 62 as above; settled only in run 2 (0.9), its residual
     * starting from 0 again */
    int ids[37];
    for (int i = 0; i < 5; i++)
        ids[i] = i;
    for (int i = 0; i < 32; i++)
        ids[5 + i] = 100 + i;
    src = t_src_new(8, 2, 37, gen_const, NULL, ids, NULL, 0);
    s = run_ok(src, 0.25, 2, 32, 0);
    cr_assert_eq(s.nruns, 2);
    cr_assert_eq(s.runs[0].length, 5);
    cr_assert_eq(s.runs[1].first_iter_id, 100);
    NEAR(s.drift_cold[0], 0.5, 0);
    NEAR(s.drift_cold[1], 1.0, 0);
    NEAR(s.runs[0].cold_mean, 0.875, 1e-12);
    NEAR(s.drift_cold_mean, (0.875 + 56.0 / 62.0) / 2, 1e-12);
    cr_assert(isnan(s.runs[0].settled_mean));
    NEAR(s.drift_settled_mean, 0.9, 1e-12);
    /* Jaccard lag 1: 4 + 31 consecutive pairs per rank, none across the gap */
    cr_assert_eq(s.jaccard_lag_pairs[0], 2 * 35);
    sp_wstats_free(&s);
    src->close(src);

    /* max_iters 3 cuts the first run to 3 iterations */
    src = t_src_new(8, 2, 37, gen_const, NULL, ids, NULL, 0);
    s = run_ok(src, 0.25, 2, 32, 3);
    cr_assert_eq(s.iters, 3);
    cr_assert_eq(s.nruns, 1);
    NEAR(s.drift_cold_mean, 1.0, 1e-12); /* (0.5 + 1.5) / 2 */
    sp_wstats_free(&s);
    src->close(src);
}

/* training iterations below 100: large entries at 3..7 that error
 * feedback cannot keep up with (k = 2 of 5 growing); from 100 on, the
 * gradient of the test above */
static void gen_two_phase(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    const int *ids = ctx;
    if (ids[it] >= 100) {
        gen_const(NULL, it, rank, n, out);
        return;
    }
    for (uint64_t i = 0; i < n; i++)
        out[i] = i >= 3 ? 9.0f + (float)i : 0.0f;
}

Test(workload_stats, each_run_starts_from_zero_residual)
{
    /* run 1: training iterations 0..15, its residual large at 3..7; run 2:
     * 100..131 with g = (3 2 1 0 ...), whose values are the hand-computed
     * ones above only if both residuals restart at 0 */
    int ids[48];
    for (int i = 0; i < 16; i++)
        ids[i] = i;
    for (int i = 0; i < 32; i++)
        ids[16 + i] = 100 + i;
    sp_grad_source *src = t_src_new(8, 2, 48, gen_two_phase, ids, ids, NULL, 0);
    sp_wstats s = run_ok(src, 0.25, 2, 32, 0);
    cr_assert_eq(s.nruns, 2);
    cr_assert_eq(s.runs[0].nsettled, 7); /* 16 - 8 - 1 */
    NEAR(s.runs[1].cold_mean, 56.0 / 62.0, 1e-12);
    NEAR(s.runs[1].settled_mean, 0.9, 1e-12);
    sp_wstats_free(&s);
    src->close(src);
}

/* -------------------------------------- consecutive training iterations */

/* one rank; training iteration x has 10 entries of 1 at block x / 2, the
 * rest 0: iterations 0, 1 share a block, 3 and 4 do not */
static void gen_blocks(const void *ctx, int it, int rank, uint64_t n, float *out)
{
    (void)rank;
    const int *ids = ctx;
    memset(out, 0, n * sizeof *out);
    int b = ids[it] / 2;
    for (int j = 0; j < 10; j++)
        out[10 * b + j] = 1.0f;
}

Test(workload_stats, lags_only_between_consecutive_iterations)
{
    static const int ids[4] = {0, 1, 3, 4};
    sp_grad_source *src = t_src_new(100, 1, 4, gen_blocks, ids, ids, NULL, 0);
    sp_wstats s = run_ok(src, 0.1, 1, 32, 0); /* k = 10 */
    /* pairs (0, 1): Jaccard 1, cosine 1; (3, 4): 0, 0; (1, 3) is no pair */
    cr_assert_eq(s.jaccard_lag_pairs[0], 2);
    NEAR(s.jaccard_lag[0], 0.5, 0);
    cr_assert_eq(s.cosine_lag1_pairs, 2);
    NEAR(s.cosine_lag1, 0.5, 1e-12);
    cr_assert_eq(s.nruns, 2);
    NEAR(s.zeros, 0.9, 1e-12);
    sp_wstats_free(&s);
    src->close(src);
}

/* ------------------------------------------------------------- bad input */

Test(workload_stats, bad_input)
{
    sp_grad_source *src = t_src_new(100, 4, 3, gen_same, NULL, NULL, NULL, 0);
    sp_wstats s;
    char err[256];
    sp_wstats_opts o = {.density = 0.001, .ranks = 4, .tau_prime = 32, .max_iters = 0}; /* k = 0 */
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "k = floor"), "%s", err);
    cr_assert_null(s.per_iter);

    o.density = 0.1;
    o.ranks = 5;
    err[0] = '\0';
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "5 ranks asked, the source has 4"), "%s", err);

    o.ranks = 0;
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    o.ranks = 4;
    o.tau_prime = 1;
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "tau_prime"), "%s", err);
    o.tau_prime = 32;
    o.density = 1.5;
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    o.density = 0.1;

    /* a failing fill: its message comes through, nothing is left allocated */
    ((t_src *)src->impl)->fail_it = 1;
    ((t_src *)src->impl)->fail_rank = 2;
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "rank 2: boom at (1, 2)"), "%s", err);
    cr_assert_null(s.per_iter);
    cr_assert_null(s.runs);
    src->close(src);

    /* a layer outside the vector */
    static const uint64_t layers[1][2] = {{50, 51}};
    src = t_src_new(100, 1, 1, gen_same, NULL, NULL, layers, 1);
    o.ranks = 1;
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "outside"), "%s", err);
    src->close(src);

    /* and with the same options a good source works */
    src = t_src_new(100, 1, 1, gen_same, NULL, NULL, NULL, 0);
    cr_assert_eq(sp_wstats_compute(src, &o, &s, err, sizeof err), 0, "%s", err);
    sp_wstats_free(&s);
    src->close(src);
}
