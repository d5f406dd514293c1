/* test_powersgd.c - PowerSGD (algorithms/powersgd.c): exact results and
 * residuals against a reference written here in double precision from the
 * paper's Algorithm 1 (summed factors, Gram-Schmidt of the summed P, warm
 * start, error feedback), over a recorded trace whose layers.json gives the
 * tensors' shapes; volume and time against the ring's closed form on a
 * crossbar; the tensors' shapes where no shape is recorded; bad input. */
#include "helpers.h"
#include "analysis/bounds.h"
#include "sim/driver/layers.h"
#include "sim/driver/run.h"
#include "sim/workload/fit.h"
#include "traces/gradients.h"
#include "traces/npy.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the trace's tensors: a conv weight (6, 2, 2, 2) as 6 x 8, its bias, a
 * 10 x 7 weight, a 3 x 3 one too small to compress at rank 2 (2(3 + 3) >= 9),
 * a 5 x 40 one */
typedef struct {
    const char *name, *shape;
    uint64_t size, rows; /* rows 0: sent dense whatever the rank */
} t_tensor;

static const t_tensor tensors[] = {{"conv.weight", "[6, 2, 2, 2]", 48, 6}, {"conv.bias", "[6]", 6, 0},
                                   {"fc.weight", "[10, 7]", 70, 10},      {"small.weight", "[3, 3]", 9, 3},
                                   {"wide.weight", "[5, 40]", 200, 5}};
#define NT (sizeof tensors / sizeof tensors[0])
#define TN 333 /* the sum of the sizes */

/* (I, P, TN) gradients of a stream of our own, in dir/g.npy with its layers.json */
static float *write_trace(const char *dir, int I, int P)
{
    float *g = malloc((size_t)I * (size_t)P * TN * sizeof *g);
    cr_assert(g);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < (size_t)I * (size_t)P * TN; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        g[i] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5) * (float)(1 + i % 7);
    }
    uint64_t shape[3] = {(uint64_t)I, (uint64_t)P, TN};
    char err[256];
    cr_assert_eq(sp_npy_write(t_path(dir, "g.npy"), g, 3, shape, err, sizeof err), 0, "%s", err);
    char json[2048];
    int at = snprintf(json, sizeof json, "{\"layers\": [");
    uint64_t off = 0;
    for (size_t t = 0; t < NT; t++) {
        at += snprintf(json + at, sizeof json - (size_t)at, "%s{\"name\": \"%s\", \"offset\": %llu, \"size\": %llu, "
                       "\"shape\": %s}", t ? ", " : "", tensors[t].name, (unsigned long long)off,
                       (unsigned long long)tensors[t].size, tensors[t].shape);
        off += tensors[t].size;
    }
    snprintf(json + at, sizeof json - (size_t)at, "]}");
    cr_assert_eq(off, TN);
    cr_assert_eq(t_write_file(t_path(dir, "layers.json"), json), 0);
    return g;
}

/* ---- the reference: Algorithm 1 of Vogels et al. in doubles -------------- */

static void ref_orthonormalise(double *p, uint64_t rows, int r)
{
    for (int k = 0; k < r; k++) {
        double ss = 0;
        for (uint64_t i = 0; i < rows; i++)
            ss += p[i * r + k] * p[i * r + k];
        double norm = sqrt(ss);
        for (uint64_t i = 0; norm > 0 && i < rows; i++)
            p[i * r + k] /= norm;
        for (int j = k + 1; j < r; j++) {
            double d = 0;
            for (uint64_t i = 0; i < rows; i++)
                d += p[i * r + k] * p[i * r + j];
            for (uint64_t i = 0; i < rows; i++)
                p[i * r + j] -= d * p[i * r + k];
        }
    }
}

/* I iterations over P ranks at rank r: the last result and the residuals' sum */
static void ref_powersgd(const float *g, int I, int P, int r, uint64_t seed, double *result, double *res_sum)
{
    double *acc = calloc((size_t)P * TN, sizeof *acc), *q[NT] = {0};
    cr_assert(acc);
    uint64_t m = 0, off = 0;
    for (size_t t = 0; t < NT; t++) {
        uint64_t rows = tensors[t].rows, cols = rows ? tensors[t].size / rows : 0;
        if (rows && (uint64_t)r * (rows + cols) < tensors[t].size) { /* compressed: its first Q */
            q[t] = malloc(cols * r * sizeof *q[t]);
            for (uint64_t i = 0; i < cols * r; i++)
                q[t][i] = sp_powersgd_q0(seed, m, i);
            m++;
        }
    }
    for (int it = 0; it < I; it++) {
        for (int w = 0; w < P; w++)
            for (uint64_t i = 0; i < TN; i++)
                acc[(size_t)w * TN + i] += g[((size_t)it * P + w) * TN + i];
        off = 0;
        for (size_t t = 0; t < NT; off += tensors[t].size, t++) {
            uint64_t rows = tensors[t].rows, cols = rows ? tensors[t].size / rows : 0;
            if (!q[t]) { /* dense: the sum, and the residual empties */
                for (uint64_t i = 0; i < tensors[t].size; i++) {
                    result[off + i] = 0;
                    for (int w = 0; w < P; w++) {
                        result[off + i] += acc[(size_t)w * TN + off + i];
                        acc[(size_t)w * TN + off + i] = 0;
                    }
                }
                continue;
            }
            double *ps = calloc(rows * r, sizeof *ps), *qs = calloc(cols * r, sizeof *qs);
            for (int w = 0; w < P; w++) /* P = sum_w M_w Q */
                for (uint64_t i = 0; i < rows; i++)
                    for (uint64_t j = 0; j < cols; j++)
                        for (int k = 0; k < r; k++)
                            ps[i * r + k] += acc[(size_t)w * TN + off + i * cols + j] * q[t][j * r + k];
            ref_orthonormalise(ps, rows, r);
            for (int w = 0; w < P; w++) /* Q = sum_w M_w^T P */
                for (uint64_t i = 0; i < rows; i++)
                    for (uint64_t j = 0; j < cols; j++)
                        for (int k = 0; k < r; k++)
                            qs[j * r + k] += acc[(size_t)w * TN + off + i * cols + j] * ps[i * r + k];
            for (uint64_t i = 0; i < rows; i++)
                for (uint64_t j = 0; j < cols; j++) {
                    double a = 0;
                    for (int k = 0; k < r; k++)
                        a += ps[i * r + k] * qs[j * r + k];
                    result[off + i * cols + j] = a; /* the sum over ranks */
                    for (int w = 0; w < P; w++)
                        acc[(size_t)w * TN + off + i * cols + j] -= a / P; /* e_w = M_w - mean approximation */
                }
            for (uint64_t i = 0; i < cols * r; i++)
                q[t][i] = qs[i] / P; /* the warm start: the averaged Q */
            free(ps);
            free(qs);
        }
    }
    for (uint64_t i = 0; i < TN; i++) {
        res_sum[i] = 0;
        for (int w = 0; w < P; w++)
            res_sum[i] += acc[(size_t)w * TN + i];
    }
    for (size_t t = 0; t < NT; t++)
        free(q[t]);
    free(acc);
}

struct psgd_case {
    int P, iters, rank;
    char allreduce[16];
};

ParameterizedTestParameters(powersgd, exact_equals_reference)
{
    static struct psgd_case c[] = {{1, 3, 2, "ring"},     {2, 4, 2, "ring"},        {3, 3, 1, "ring"},
                                   {4, 4, 3, "ring"},     {5, 3, 2, "rabenseifner"}, {3, 2, 2, "recdoubling"},
                                   {4, 3, 2, "nccl-tree"}};
    return cr_make_param_array(struct psgd_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct psgd_case *c, powersgd, exact_equals_reference)
{
    const char *dir = t_tmpdir();
    float *g = write_trace(dir, c->iters, c->P);
    sp_plan p;
    t_plan(&p, "powersgd", c->P, TN, 0.01);
    char err[256];
    cr_assert_eq(sp_plan_set(&p, "grad-file", t_path(dir, "g.npy"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(sp_plan_set(&p, "powersgd-allreduce", c->allreduce, err, sizeof err), 0, "%s", err);
    p.iters = c->iters;
    p.opts.powersgd_rank = c->rank;
    sp_report rep = t_run_ok(&p);
    double want[TN], res[TN];
    ref_powersgd(g, c->iters, c->P, c->rank, p.seed, want, res);
    /* floats against doubles, and the ranks' sums in the allreduce's order:
     * equal to 1e-4 of the largest entry of each tensor */
    uint64_t off = 0;
    for (size_t t = 0; t < NT; off += tensors[t].size, t++) {
        double big = 0, bigr = 0;
        for (uint64_t i = off; i < off + tensors[t].size; i++) {
            big = fmax(big, fabs(want[i]));
            bigr = fmax(bigr, fabs(res[i]));
        }
        for (uint64_t i = off; i < off + tensors[t].size; i++) {
            cr_assert(fabs(rep.result[i] - want[i]) <= 1e-4 * big, "P=%d r=%d %s: entry %llu: %.9g, want %.9g", c->P,
                      c->rank, tensors[t].name, (unsigned long long)i, rep.result[i], want[i]);
            cr_assert(fabs(rep.residual_sum[i] - res[i]) <= 1e-4 * bigr + 1e-6, "P=%d r=%d %s: residual %llu: %.9g, "
                      "want %.9g", c->P, c->rank, tensors[t].name, (unsigned long long)i, rep.residual_sum[i], res[i]);
        }
        /* a compressed tensor's result has rank r at most: not the dense sum */
        if (tensors[t].rows && (uint64_t)c->rank * (tensors[t].rows + tensors[t].size / tensors[t].rows) <
                                   tensors[t].size)
            cr_assert(bigr > 1e-3 * big, "%s: the residual keeps what rank %d leaves", tensors[t].name, c->rank);
    }
    free(g);
    sp_report_free(&rep);
}

/* ---- volume and time on the 1 GbE crossbar, cm02, no device --------------- */

/* n = 2^20 as one tensor (the generic workload with one layer), 1024 x 1024
 * at rank 4: two ring allreduces of 4096 floats; at P = 8 each 2 x 7 steps
 * of a 512-float block (100 us and 8 ns a byte a route) */
Test(powersgd, time_and_volume_exact_by_hand)
{
    sp_plan p;
    t_plan(&p, "powersgd", 8, 1u << 20, 0.01);
    p.grad_layers = 1;
    t_wire_only(&p);
    sp_report rep = t_run_ok(&p);
    double a = 100e-6, b = 1.0 / 125e6, blk = 4.0 * 512;
    double want = 2 * (2 * 7 * (a + blk * b));
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, want, want * 1e-9, "simulated %.12g, by hand %.12g", got, want);
    cr_assert_float_eq(rep.predicted_s, want, want * 1e-9, "predicted %.12g, by hand %.12g", rep.predicted_s, want);
    cr_assert_eq(sp_report_iter_volume(&rep, 0), (uint64_t)(2 * 2 * 7 * blk));
    cr_assert_float_eq(rep.bound.words * 4, 2 * 2 * 7 * blk, 1e-9);
    sp_bound bd; /* by name, without the run's tensors: n as one, most nearly square, rank 4 */
    cr_assert_eq(sp_bound_volume("powersgd", 8, 1u << 20, 0, &bd), 0);
    cr_assert_float_eq(bd.words * 4, 2 * 2 * 7 * blk, 1e-9);
    sp_report_free(&rep);
}

/* the recorded trace at P = 4, rank 2: P factors 2(6 + 10 + 5) = 42 with the
 * dense 6 + 9 = 57 floats, Q factors 2(8 + 7 + 40) = 110; the ring's blocks
 * of ceil(57/4) = 15 and ceil(110/4) = 28 floats pace its 2 x 3 steps; exact
 * and size-only messages alike (a trace needs exact payloads: device none) */
Test(powersgd, shaped_time_exact_by_hand)
{
    const char *dir = t_tmpdir();
    free(write_trace(dir, 1, 4));
    sp_plan p;
    t_plan(&p, "powersgd", 4, TN, 0.01);
    char err[256];
    cr_assert_eq(sp_plan_set(&p, "grad-file", t_path(dir, "g.npy"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(sp_plan_set(&p, "device", "none", err, sizeof err), 0, "%s", err);
    p.opts.powersgd_rank = 2;
    sp_report rep = t_run_ok(&p);
    double a = 100e-6, b = 1.0 / 125e6;
    double want = 2 * 3 * (a + 4 * 15 * b) + 2 * 3 * (a + 4 * 28 * b);
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, want, want * 1e-9, "simulated %.12g, by hand %.12g", got, want);
    cr_assert_float_eq(rep.predicted_s, want, want * 1e-9);
    cr_assert_float_eq(rep.bound.words, 2.0 * (57 + 110) * 3 / 4, 1e-9);
    cr_assert_eq(rep.total_msgs, 2 * 2 * 3 * 4);
    cr_assert_eq(rep.total_bytes, 4 * 2 * 3 * (57 + 110));
    sp_report_free(&rep);
}

/* the messages do not depend on the data: exact, size-only and model payloads
 * of the generic workload's 16 layers (most nearly square) send the ring's
 * messages for m1 + m2 floats, the bound's (a device pricing the products) */
static void same_messages(int payload)
{
    sp_plan p;
    t_plan(&p, "powersgd", 5, 30000, 0.01);
    char err[256];
    cr_assert_eq(sp_plan_set(&p, "device", "h100", err, sizeof err), 0, "%s", err);
    p.iters = 2;
    p.payload = payload;
    sp_report r = t_run_ok(&p);
    double m = r.bound.words * 5 / (2.0 * 4); /* the ring's 2m(P-1)/P words */
    cr_assert_gt(m, 1000);
    cr_assert_lt(m, 30000, "fewer floats than the gradient");
    cr_assert_eq(r.total_msgs, 2 * 2 * (2 * 4 * 5), "two ring allreduces of 2(P-1) steps, two iterations");
    cr_assert_float_eq((double)r.total_bytes, 2 * 4.0 * 2 * 4 * m, 1e-6, "each float P-1 times each way");
    sp_report_free(&r);
}

Test(powersgd, exact_payload_messages) { same_messages(SP_PAYLOAD_EXACT); }
Test(powersgd, size_only_payload_messages) { same_messages(SP_PAYLOAD_SIZE); }
Test(powersgd, model_payload_messages) { same_messages(SP_PAYLOAD_MODEL); }

/* ---- the tensors' shapes without a recorded shape -------------------------- */

Test(powersgd, shapes_from_names_kinds_and_squares)
{
    sp_profile_layer ly[] = {
        {.name = "fc.weight", .kind = "linear_weight", .offset = 0, .size = 5120},
        {.name = "fc.bias", .kind = "linear_bias", .offset = 5120, .size = 10},
        {.name = "bn.weight", .kind = "bn_weight", .offset = 5130, .size = 64},
        {.name = "emb.weight", .kind = "embedding", .offset = 5194, .size = 30522 * 768},
        {.name = "rnn.weight_ih_l0", .kind = "lstm_weight_ih", .offset = 5194 + 30522 * 768, .size = 3200 * 1312},
        {.name = "rnn.bias_ih_l0", .kind = "lstm_bias", .offset = 5194 + 30522 * 768 + 3200 * 1312, .size = 3200},
        {.name = "prime", .kind = "other", .offset = 5194 + 30522 * 768 + 3200 * 1312 + 3200, .size = 4099},
    };
    sp_profile prof = {.nlayers = 7, .layers = ly};
    sp_algo_layer *t;
    int nl;
    cr_assert_eq(sp_layers_build(NULL, &prof, 0, &t, &nl), 0);
    cr_assert_eq(nl, 7);
    cr_assert_eq(t[0].rows, 10, "a weight takes its bias's size as rows");
    cr_assert_eq(t[1].rows, 0, "a bias is a vector");
    cr_assert_eq(t[2].rows, 0, "a norm's scale is a vector");
    cr_assert_eq(t[3].rows, 4608, "no bias: the most nearly square factorisation (4608 x 5087)");
    cr_assert_eq(t[4].rows, 3200, "weight_ih_l0 takes bias_ih_l0's size");
    cr_assert_eq(t[6].rows, 0, "a prime size is a vector");
    cr_assert_eq(t[4].offset, ly[4].offset);
    free(t);
    cr_assert_eq(sp_most_square_rows(1u << 20), 1024);
    cr_assert_eq(sp_most_square_rows(12), 3);
}

/* a profile fitted to the trace keeps its tensors' shapes: with the fit
 * cutting every tensor larger than n / 16 into pieces ("wide.weight[j]"),
 * the profile's table gives the trace's tensors back, each with its rows
 * (the model's PowerSGD then compresses as the exact run does), and
 * loses them once scaled to another n */
Test(powersgd, fitted_profile_keeps_the_shapes)
{
    const char *dir = t_tmpdir();
    free(write_trace(dir, 2, 3));
    char err[256];
    sp_grad_source *src = sp_trace_open(t_path(dir, "g.npy"), err, sizeof err);
    cr_assert(src, "%s", err);
    sp_profile prof;
    cr_assert_eq(sp_profile_fit(src, 0, 0.05, 16, &prof, err, sizeof err), 0, "%s", err);
    cr_assert_gt(prof.nlayers, (int)NT, "the fit cut the large tensors into pieces");
    sp_algo_layer *t;
    int nl;
    cr_assert_eq(sp_layers_build(NULL, &prof, 0, &t, &nl), 0);
    cr_assert_eq(nl, (int)NT);
    uint64_t off = 0;
    for (size_t i = 0; i < NT; i++) {
        cr_assert_eq(t[i].offset, off, "%s", tensors[i].name);
        cr_assert_eq(t[i].size, tensors[i].size, "%s", tensors[i].name);
        cr_assert_eq(t[i].rows, tensors[i].rows, "%s: %llu rows", tensors[i].name, (unsigned long long)t[i].rows);
        off += tensors[i].size;
    }
    free(t);
    /* through the profile's JSON and back */
    FILE *f = fopen(t_path(dir, "p.json"), "w");
    cr_assert(f && sp_profile_write(&prof, f) == 0);
    fclose(f);
    sp_profile back;
    cr_assert_eq(sp_profile_get(t_path(dir, "p.json"), 0, 0, NULL, &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sp_layers_build(NULL, &back, 0, &t, &nl), 0);
    cr_assert_eq(nl, (int)NT);
    cr_assert_eq(t[4].rows, 5, "wide.weight's 5 x 40 kept");
    free(t);
    /* another n: the shapes no longer hold */
    cr_assert_eq(sp_profile_scale_to(&back, 2 * TN, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < back.nlayers; i++)
        cr_assert_eq(back.layers[i].shaped, 0);
    sp_profile_free(&back);
    sp_profile_free(&prof);
    src->close(src);
}

/* ---- bad input --------------------------------------------------------------- */

Test(powersgd, bad_rank_refused)
{
    const char *a0[] = {"run", "--algo", "powersgd", "--powersgd-rank", "0", "--quiet", NULL};
    t_refused(a0, "--powersgd-rank");
    const char *a1[] = {"run", "--algo", "powersgd", "--powersgd-allreduce", "topka", "--quiet", NULL};
    t_refused(a1, "--powersgd-allreduce");
}

Test(powersgd, bad_shape_refused)
{
    const char *dir = t_tmpdir();
    free(write_trace(dir, 1, 2));
    cr_assert_eq(t_write_file(t_path(dir, "layers.json"),
                              "{\"layers\": [{\"name\": \"w\", \"size\": 300, \"shape\": [10, 31]}, "
                              "{\"name\": \"b\", \"size\": 33, \"shape\": [33]}]}"),
                 0);
    const char *a[] = {"run", "--algo", "powersgd", "--ranks", "2", "--grad-file", t_path(dir, "g.npy"), "--quiet",
                       "--out", t_path(dir, "o"), NULL};
    t_refused(a, "\"shape\"");
}
