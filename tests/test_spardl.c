/* test_spardl.c - SparDL (algorithms/spardl.c): the global result and the
 * residuals of exact runs against a reference written here from the
 * algorithm's definition (every rank of every team stepped together, plain
 * sorts for the top-k), for P = 2..7 and 8 with several team counts d and
 * both residual rules; nothing lost or created; message counts and volumes
 * where they are fixed (d = 1) and the bound's ceiling for d > 1; the model
 * payload's fixed sizes; bad options refused. */
#include "helpers.h"
#include "sim/driver/run.h"
#include "sim/workload/generator.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct combo {
    int P, d, residual, iters;
    double share;
};

/* ---- the reference ---------------------------------------------------------- */

/* blocks as blocks.h cuts them: the first n mod W one longer */
static uint64_t blk_off(uint64_t n, int W, int j)
{
    uint64_t q = n / (uint64_t)W, rem = n % (uint64_t)W;
    return (uint64_t)j * q + ((uint64_t)j < rem ? (uint64_t)j : rem);
}
static uint64_t blk_len(uint64_t n, int W, int j) { return blk_off(n, W, j + 1) - blk_off(n, W, j); }

/* indices of the top cnt of |v| over [off, off + len) (larger |v| first,
 * then the smaller index), sorted by index: into out */
static void top_of(const float *v, uint64_t off, uint64_t len, uint64_t cnt, int32_t *out, int32_t *tmp)
{
    for (uint64_t i = 0; i < len; i++)
        tmp[i] = (int32_t)(off + i);
    t_sort_by_magnitude(tmp, len, v);
    memcpy(out, tmp, cnt * sizeof *out);
    for (uint64_t a = 1; a < cnt; a++) /* insertion sort by index: cnt is small */
        for (uint64_t b = a; b > 0 && out[b - 1] > out[b]; b--) {
            int32_t x = out[b];
            out[b] = out[b - 1];
            out[b - 1] = x;
        }
}

/* The steps of the reduce-scatter among W ranks, from the definition: with
 * R = ceil(log2 W) the rounds move W - 2^(R-1), then 2^(R-2), ..., 1 blocks,
 * the first at distance 2^(R-1), each next at half the distance. */
static int steps_of(int W, int *gap, int *off)
{
    int R = 0, s = 0;
    while ((1 << R) < W)
        R++;
    for (int i = 0; i < R; i++) {
        int size = i == 0 ? W - (1 << (R - 1)) : 1 << (R - 1 - i);
        for (int b = 0; b < size; b++, s++) {
            gap[s] = 1 << (R - 1 - i);
            off[s] = b;
        }
    }
    return s;
}

/* The last iteration's global result into ref, and every rank's residual
 * after the last iteration into acc (P x n). */
static void reference(const sp_plan *p, const struct combo *c, uint64_t k, float *ref, float *acc)
{
    uint64_t n = p->n;
    int P = c->P, d = c->d, W = P / d;
    uint64_t kb = k / (uint64_t)W ? k / (uint64_t)W : 1;
    uint64_t h = (uint64_t)floor((c->share > 0 ? c->share : 1.0 / d) * (double)kb + 1e-9);
    h = h < 1 ? 1 : h > kb ? kb : h;
    sp_generator *gen = t_generator(p);
    float *w = malloc(n * (size_t)P * sizeof *w);
    int32_t *tmp = malloc(n * sizeof *tmp), *sel = malloc(n * (size_t)P * sizeof *sel);
    int gap[64], off[64];
    int steps = steps_of(W, gap, off);
    float *sum = calloc(n, sizeof *sum);
    unsigned char *in = calloc(n, 1), *keep = calloc(n, 1);
    cr_assert(w && tmp && sel && sum && in && keep);
    memset(acc, 0, n * (size_t)P * sizeof *acc);
    for (int it = 0; it < c->iters; it++) {
        for (int r = 0; r < P; r++)
            sp_generator_fill(gen, r, it, acc + (size_t)r * n, 1);
        memcpy(w, acc, n * (size_t)P * sizeof *w);
        /* 1. every team, every step at once: each rank forwards the top k_b of
         * its partial sum of one block, which leave it */
        for (int s = 0; s < steps; s++) {
            uint64_t *cnt = calloc((size_t)P, sizeof *cnt);
            for (int r = 0; r < P; r++) {
                int q = r % W, blk = (q + gap[s] + off[s]) % W;
                uint64_t len = blk_len(n, W, blk);
                cnt[r] = kb < len ? kb : len;
                float *wr = w + (size_t)r * n;
                top_of(wr, blk_off(n, W, blk), len, cnt[r], sel + (size_t)r * n, tmp);
            }
            float *vals = malloc((kb + 1) * (size_t)P * sizeof *vals);
            for (int r = 0; r < P; r++)
                for (uint64_t j = 0; j < cnt[r]; j++) {
                    int32_t i = sel[(size_t)r * n + j];
                    vals[(size_t)r * kb + j] = w[(size_t)r * n + i];
                    w[(size_t)r * n + i] = 0;
                }
            for (int r = 0; r < P; r++) {
                int t = r / W, q = r % W, dst = t * W + (q + gap[s]) % W;
                for (uint64_t j = 0; j < cnt[r]; j++)
                    w[(size_t)dst * n + sel[(size_t)r * n + j]] += vals[(size_t)r * kb + j];
            }
            free(vals);
            free(cnt);
        }
        /* 2. the holder's top h; 3. the sum over the d holders of a block, cut
         * to the top k_b; 4. the union of the blocks */
        memset(ref, 0, n * sizeof *ref);
        memset(in, 0, n);
        for (int q = 0; q < W; q++) {
            uint64_t qoff = blk_off(n, W, q), len = blk_len(n, W, q);
            uint64_t hq = h < len ? h : len, cap = kb < len ? kb : len, m = 0;
            float *own = calloc(n * (size_t)d, sizeof *own);
            memset(sum + qoff, 0, len * sizeof *sum);
            memset(keep + qoff, 0, len);
            for (int t = 0; t < d; t++) {
                int r = t * W + q;
                top_of(w + (size_t)r * n, qoff, len, hq, sel + (size_t)r * n, tmp);
                for (uint64_t j = 0; j < hq; j++) {
                    int32_t i = sel[(size_t)r * n + j];
                    own[(size_t)t * n + i] = w[(size_t)r * n + i];
                    w[(size_t)r * n + i] = 0;
                    m += !keep[i];
                    sum[i] = keep[i] ? sum[i] + own[(size_t)t * n + i] : own[(size_t)t * n + i];
                    keep[i] = 1;
                }
            }
            if (m > cap) { /* the top cap of the summed entries; the rest go back to their holders */
                int32_t *u = malloc(m * sizeof *u), *kept = malloc(cap * sizeof *kept);
                float *tmpv = calloc(n, sizeof *tmpv);
                uint64_t a = 0;
                for (uint64_t i = qoff; i < qoff + len; i++)
                    if (keep[i])
                        u[a++] = (int32_t)i, tmpv[i] = sum[i];
                t_sort_by_magnitude(u, m, tmpv);
                memcpy(kept, u, cap * sizeof *kept);
                for (uint64_t j = cap; j < m; j++) {
                    keep[u[j]] = 0;
                    for (int t = 0; t < d; t++)
                        w[(size_t)(t * W + q) * n + u[j]] += own[(size_t)t * n + u[j]];
                }
                free(u);
                free(kept);
                free(tmpv);
            }
            for (uint64_t i = qoff; i < qoff + len; i++)
                if (keep[i]) {
                    ref[i] = sum[i];
                    in[i] = 1;
                }
            free(own);
        }
        /* the residual: everything dropped (collect), or the authors' rule */
        for (int r = 0; r < P; r++)
            for (uint64_t i = 0; i < n; i++)
                if (c->residual == 0 || in[i])
                    acc[(size_t)r * n + i] = w[(size_t)r * n + i];
    }
    free(w);
    free(tmp);
    free(sel);
    free(sum);
    free(in);
    free(keep);
    sp_generator_free(gen);
}

static sp_plan plan_of(const struct combo *c, uint64_t n, double density)
{
    sp_plan p;
    t_plan(&p, "spardl", c->P, n, density);
    p.iters = c->iters;
    p.seed = 11;
    p.opts.spardl_teams = c->d;
    p.opts.spardl_residual = c->residual;
    p.opts.spardl_share = c->share;
    return p;
}

ParameterizedTestParameters(spardl, equals_reference)
{
    static struct combo params[] = {
        {2, 1, 0, 3, 0}, {3, 1, 0, 3, 0}, {4, 1, 0, 3, 0}, {5, 1, 0, 3, 0}, {6, 1, 0, 3, 0}, {7, 1, 0, 3, 0},
        {8, 1, 0, 3, 0}, {2, 2, 0, 3, 0}, {4, 2, 0, 3, 0}, {6, 2, 0, 3, 0}, {6, 3, 0, 3, 0}, {8, 4, 0, 3, 0},
        {5, 1, 1, 3, 0}, {6, 3, 1, 3, 0}, {6, 2, 0, 3, 1}, {4, 4, 0, 3, 0}, {7, 7, 1, 2, 0.5},
    };
    return cr_make_param_array(struct combo, params, sizeof params / sizeof params[0]);
}

/* every entry of the last result and of every rank's residual (the sum over
 * ranks the run reports) equals the reference's */
ParameterizedTest(struct combo *c, spardl, equals_reference)
{
    sp_plan p = plan_of(c, 1000 + (uint64_t)c->P /* not a multiple of P */, 0.05);
    sp_report rep = t_run_ok(&p);
    cr_assert_not_null(rep.result);
    float *ref = malloc(p.n * sizeof *ref), *acc = malloc(p.n * (size_t)c->P * sizeof *acc);
    reference(&p, c, rep.k, ref, acc);
    int nonzero = 0;
    for (uint64_t i = 0; i < p.n; i++) {
        cr_assert(fabsf(rep.result[i] - ref[i]) <= 1e-6f * (1 + fabsf(ref[i])),
                  "P=%d d=%d: result[%llu] = %.9g, reference %.9g", c->P, c->d, (unsigned long long)i, rep.result[i],
                  ref[i]);
        nonzero += ref[i] != 0;
        double res = 0;
        for (int r = 0; r < c->P; r++)
            res += acc[(size_t)r * p.n + i];
        cr_assert(fabs(rep.residual_sum[i] - res) <= 1e-5 * (1 + fabs(res)), "P=%d d=%d: residual[%llu] = %.9g, "
                  "reference %.9g", c->P, c->d, (unsigned long long)i, rep.residual_sum[i], res);
    }
    cr_assert_gt(nonzero, 0, "the reference is all zeros");
    free(ref);
    free(acc);
    sp_report_free(&rep);
}

/* results plus residuals equal the gradients, under both rules */
ParameterizedTestParameters(spardl, preserves_mass)
{
    static struct combo params[] = {{5, 1, 0, 4, 0}, {6, 2, 0, 4, 0}, {6, 3, 1, 4, 0}, {8, 2, 0, 4, 1}};
    return cr_make_param_array(struct combo, params, sizeof params / sizeof params[0]);
}

ParameterizedTest(struct combo *c, spardl, preserves_mass)
{
    sp_plan p = plan_of(c, 2000, 0.02);
    sp_report rep = t_run_ok(&p);
    double *mag, *want = t_gradient_sum(&p, &mag);
    for (uint64_t i = 0; i < p.n; i++) {
        double got = rep.result_sum[i] + rep.residual_sum[i];
        cr_assert(fabs(got - want[i]) <= 1e-4 * mag[i] + 1e-6, "entry %llu: results + residuals = %.9g, gradients "
                  "%.9g", (unsigned long long)i, got, want[i]);
    }
    free(want);
    free(mag);
    sp_report_free(&rep);
}

/* ---- messages and volume ------------------------------------------------------ */

static int clog2(int x)
{
    int r = 0;
    while ((1 << r) < x)
        r++;
    return r;
}

struct pm {
    int P, model;
};

ParameterizedTestParameters(spardl, fixed_messages_and_volume)
{
    static struct pm c[] = {{2, 0}, {3, 0}, {5, 0}, {6, 0}, {7, 0}, {8, 0}, {12, 0}, {3, 1}, {8, 1}, {12, 1}};
    return cr_make_param_array(struct pm, c, sizeof c / sizeof c[0]);
}

/* d = 1: per rank P-1 reduce-scatter messages of k/P pairs and ceil(log2 P)
 * of Bruck's allgather (P-1 blocks of k/P pairs): the volume is 4k(P-1)/P
 * words, the bound exactly, in exact and model payloads alike (one run a
 * process: SimGrid's engine runs once) */
ParameterizedTest(struct pm *c, spardl, fixed_messages_and_volume)
{
    struct combo cb = {c->P, 1, 0, 2, 0};
    sp_plan p = plan_of(&cb, 16800, 0.05); /* k = 840, a multiple of every P here */
    if (c->model)
        p.payload = SP_PAYLOAD_MODEL;
    sp_report rep = t_run_ok(&p);
    uint64_t k = rep.k, P = (uint64_t)c->P;
    cr_assert_eq(k, 840);
    for (int it = 0; it < p.iters; it++) {
        cr_assert_eq(rep.iters[it].msgs, P * (P - 1) + P * (uint64_t)clog2(c->P), "P=%d model=%d: %llu messages",
                     c->P, c->model, (unsigned long long)rep.iters[it].msgs);
        cr_assert_eq(rep.iters[it].bytes, P * 2 * (P - 1) * 8 * (k / P));
        uint64_t vol = 0;
        for (int ph = 0; ph < rep.nphases; ph++)
            vol += rep.iters[it].phase_volume[ph];
        cr_assert_eq(vol, 16 * k * (P - 1) / P, "P=%d: volume %llu bytes", c->P, (unsigned long long)vol);
    }
    cr_assert(rep.bound.known);
    cr_assert_float_eq(rep.bound.words, 4.0 * (double)k * (double)(P - 1) / (double)P, 1e-9);
    sp_report_free(&rep);
}

/* d = 1 on 1gbe under CM02 (alpha = 100 us, beta = 8 ns/B, no contention:
 * every step is a pair exchange), no device: the simulated iteration equals
 * the closed form (P-1)(alpha + 8k_b beta) + ceil(log2 P) alpha + 8k_b(P-1)
 * beta, written out here, and the registry's prediction */
Test(spardl, time_equals_alpha_beta)
{
    struct combo c = {8, 1, 0, 1, 0};
    sp_plan p = plan_of(&c, 800000, 0.01); /* k = 8000, k_b = 1000 */
    char err[256];
    cr_assert_eq(sp_plan_set(&p, "device", "none", err, sizeof err), 0, "%s", err);
    sp_report rep = t_run_ok(&p);
    double alpha = 100e-6, beta = 1.0 / 125e6, kb = 1000;
    cr_assert_float_eq(rep.alpha, alpha, 1e-12);
    double expect = 7 * (alpha + 8 * kb * beta) + 3 * alpha + 8 * kb * 7 * beta;
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert(fabs(got - expect) <= 1e-3 * expect, "simulated %.9g s, formula %.9g s", got, expect);
    cr_assert(fabs(rep.predicted_s - expect) <= 1e-9 * expect, "predicted %.9g s", rep.predicted_s);
    sp_report_free(&rep);
}

/* d > 1: the reduce-scatter's W - 1 messages of k_b pairs, Bruck across the
 * teams of h pairs, and the team's allgather at most k_b a block: the volume
 * stays within the bound and above the part that is fixed */
Test(spardl, teams_within_bound)
{
    struct combo c = {12, 3, 0, 2, 0};
    sp_plan p = plan_of(&c, 24000, 0.02); /* k = 480, W = 4, k_b = 120, h = 40 */
    sp_report rep = t_run_ok(&p);
    cr_assert(rep.bound.known);
    double fixed = 2.0 * 120 * 3 + 2.0 * 40 * 2; /* words: the reduce-scatter, across the teams */
    cr_assert_float_eq(rep.bound.words, fixed + 2.0 * 3 + 2.0 * 120 * 3, 1e-9);
    for (int it = 0; it < p.iters; it++) {
        uint64_t vol = 0;
        for (int ph = 0; ph < rep.nphases; ph++)
            vol += rep.iters[it].phase_volume[ph];
        cr_assert_leq((double)vol, 4.0 * rep.bound.words);
        cr_assert_gt((double)vol, 4.0 * fixed);
    }
    sp_report_free(&rep);
}

/* ---- bad input --------------------------------------------------------------- */

Test(spardl, bad_options_refused)
{
    const char *a0[] = {"run", "--algo", "spardl", "--ranks", "8", "--spardl-teams", "3", "--quiet", NULL};
    t_refused(a0, "--spardl-teams");
    const char *a1[] = {"run", "--algo", "spardl", "--spardl-teams", "0", "--quiet", NULL};
    t_refused(a1, "--spardl-teams");
    const char *a2[] = {"run", "--algo", "spardl", "--spardl-share", "1.5", "--quiet", NULL};
    t_refused(a2, "--spardl-share");
    const char *a3[] = {"run", "--algo", "spardl", "--spardl-residual", "keep", "--quiet", NULL};
    t_refused(a3, "--spardl-residual");
    /* the node-aware forms run it inside their groups, which do not nest */
    const char *a4[] = {"run", "--algo", "rail:spardl", "--platform", "dgx-h100:2", "--ranks", "16",
                        "--spardl-teams", "2", "--quiet", NULL};
    t_refused(a4, "--spardl-teams");
}
