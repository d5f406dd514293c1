/* test_compressed.c - the compressed allreduces (algorithms/onebit.c):
 * exact results and residuals against a plain serial computation of the
 * same scheme, volumes and times against their closed forms on a crossbar,
 * and message sizes that do not depend on the data. */
#include "helpers.h"
#include "algorithms/blocks.h"
#include "analysis/bounds.h"
#include "sim/driver/run.h"
#include "sim/workload/generator.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the 1-bit scheme, the plain way --------------------------------------- */

/* x[0..len) to scale sign(x) (sign(0) = +), its RMS as the scale; x keeps
 * what that loses; the compressed values go to out */
static void ref_compress(float *x, uint64_t len, float *out)
{
    double ss = 0;
    for (uint64_t i = 0; i < len; i++)
        ss += (double)x[i] * x[i];
    float scale = len ? (float)sqrt(ss / (double)len) : 0.0f;
    for (uint64_t i = 0; i < len; i++) {
        out[i] = x[i] < 0.0f ? -scale : scale;
        x[i] -= out[i];
    }
}

/* iters iterations of P workers and P servers: the last result, and the sum
 * over ranks of the workers' residuals */
static void ref_onebit(const sp_plan *p, float *result, double *residual_sum)
{
    int P = p->ranks;
    uint64_t n = p->n;
    sp_generator *gen = t_generator(p);
    float *acc = calloc((size_t)P * n, sizeof *acc), *srv_err = calloc(n, sizeof *srv_err);
    float *comp = malloc((size_t)P * n * sizeof *comp), *g = malloc(n * sizeof *g), *s = malloc(n * sizeof *s);
    cr_assert(acc && srv_err && comp && g && s);
    for (int it = 0; it < p->iters; it++) {
        for (int r = 0; r < P; r++) {
            sp_generator_fill(gen, r, it, g, 0);
            float *x = acc + (size_t)r * n;
            for (uint64_t i = 0; i < n; i++)
                x[i] += g[i];
            for (int j = 0; j < P; j++) {
                uint64_t off = sp_block_off(n, P, j);
                ref_compress(x + off, sp_block_len(n, P, j), comp + (size_t)r * n + off);
            }
        }
        for (int j = 0; j < P; j++) {
            uint64_t off = sp_block_off(n, P, j), len = sp_block_len(n, P, j);
            for (uint64_t i = 0; i < len; i++) {
                s[off + i] = srv_err[off + i];
                for (int r = 0; r < P; r++)
                    s[off + i] += comp[(size_t)r * n + off + i];
            }
            memcpy(srv_err + off, s + off, len * sizeof *s);
            ref_compress(srv_err + off, len, result + off);
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        residual_sum[i] = 0;
        for (int r = 0; r < P; r++)
            residual_sum[i] += acc[(size_t)r * n + i];
    }
    sp_generator_free(gen);
    free(acc);
    free(srv_err);
    free(comp);
    free(g);
    free(s);
}

struct onebit_case {
    int P, iters;
    uint64_t n;
};

ParameterizedTestParameters(onebit, exact_equals_reference)
{
    /* one rank; a P that does not divide n; chunks shorter than a byte of bits */
    static struct onebit_case c[] = {{1, 2, 1000}, {3, 3, 1001}, {8, 3, 4099}, {16, 2, 100}, {5, 4, 37}};
    return cr_make_param_array(struct onebit_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct onebit_case *c, onebit, exact_equals_reference)
{
    sp_plan p;
    t_plan(&p, "onebit", c->P, c->n, 0.01);
    p.iters = c->iters;
    sp_report rep = t_run_ok(&p);
    float *want = malloc(p.n * sizeof *want);
    double *res = malloc(p.n * sizeof *res);
    ref_onebit(&p, want, res);
    /* the same operations in the same order: equal but for the summation of
     * the norms (double, in both) */
    for (uint64_t i = 0; i < p.n; i++) {
        cr_assert(fabsf(rep.result[i] - want[i]) <= 1e-6f * fabsf(want[i]), "P=%d entry %llu: %.9g, want %.9g", c->P,
                  (unsigned long long)i, rep.result[i], want[i]);
        cr_assert(fabs(rep.residual_sum[i] - res[i]) <= 1e-5 * (fabs(res[i]) + 1e-3), "P=%d residual %llu: %.9g, want %.9g",
                  c->P, (unsigned long long)i, rep.residual_sum[i], res[i]);
    }
    free(want);
    free(res);
    sp_report_free(&rep);
}

/* ---- volume and time on the 1 GbE crossbar, cm02, no device ------------------ */

static sp_report size_run(int P, uint64_t n, int payload)
{
    sp_plan p;
    t_plan(&p, "onebit", P, n, 0.01);
    t_wire_only(&p);
    p.payload = payload;
    return t_run_ok(&p);
}

/* P = 8, n = 2^20: chunks of 2^17 entries, a message of 4 + 2^14 bytes; the
 * rotation's 2 buckets of 4 messages each way (the host's link shared by
 * 4 flows), then Bruck's 3 rounds of 1, 2 and 4 messages; 100 us and
 * 8 ns a byte a route (two 50 us links of 125 MB/s) */
Test(onebit, time_and_volume_exact_by_hand)
{
    sp_report rep = size_run(8, 1u << 20, SP_PAYLOAD_SIZE);
    double m = 4 + 16384, a = 100e-6, b = 1.0 / 125e6;
    double want = (2 + 3) * a + 2 * 7 * m * b;
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, want, want * 1e-9, "simulated %.12g, by hand %.12g", got, want);
    cr_assert_float_eq(rep.predicted_s, want, want * 1e-9);
    cr_assert_eq(sp_report_iter_volume(&rep, 0), (uint64_t)(2 * 7 * m));
    sp_bound bd;
    cr_assert_eq(sp_bound_volume("onebit", 8, 1u << 20, 0, &bd), 0);
    cr_assert_float_eq(bd.words * 4, 2 * 7 * m, 1e-9);
    cr_assert_float_eq(bd.lower_words, 2.0 * (1 << 20) * 7 / 8 / 32, 1e-9);
    sp_report_free(&rep);
}

/* P = 6 (buckets of 4 and 1, Bruck's rounds of 1, 2 and 2), n = 6 x 8 x 100 */
Test(onebit, time_exact_odd_buckets)
{
    sp_report rep = size_run(6, 4800, SP_PAYLOAD_SIZE);
    double m = 4 + 100, a = 100e-6, b = 1.0 / 125e6;
    double want = (2 + 3) * a + 2 * 5 * m * b;
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, want, want * 1e-9, "simulated %.12g, by hand %.12g", got, want);
    cr_assert_float_eq(rep.predicted_s, want, want * 1e-9);
    sp_report_free(&rep);
}

/* the messages do not depend on the data: exact and size-only payloads
 * send P(P-1) rotation messages and P ceil(log2 P) of Bruck's, and every
 * rank's chunk travels P-1 times each way.  n = 4099 over 8: three chunks
 * of 513 entries (4 + 65 bytes), five of 512 (4 + 64) */
static void same_messages(int payload)
{
    sp_report r = size_run(8, 4099, payload);
    cr_assert_eq(r.total_msgs, 8 * 7 + 8 * 3);
    cr_assert_eq(r.total_bytes, 2 * 7 * (3 * 69 + 5 * 68));
    sp_report_free(&r);
}

Test(onebit, exact_payload_messages) { same_messages(SP_PAYLOAD_EXACT); }
Test(onebit, size_only_payload_messages) { same_messages(SP_PAYLOAD_SIZE); }

/* ---- qgz: quantized reduce-scatter (ZeRO++'s qgZ) and allgather ------------------- */

/* x[0..len) quantized and back, the plain way: per block of `block`, scale
 * max |x| / (2^(b-1) - 1), codes rounded and clamped */
static void ref_quant(const float *x, uint64_t len, int bits, int block, float *out)
{
    int qmax = (1 << (bits - 1)) - 1;
    for (uint64_t lo = 0; lo < len; lo += (uint64_t)block) {
        uint64_t hi = lo + (uint64_t)block < len ? lo + (uint64_t)block : len;
        float amax = 0;
        for (uint64_t i = lo; i < hi; i++)
            amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
        float scale = amax / (float)qmax;
        for (uint64_t i = lo; i < hi; i++) {
            long v = scale > 0 ? lroundf(x[i] / scale) : 0;
            v = v > qmax ? qmax : v < -qmax ? -qmax : v;
            out[i] = (float)v * scale;
        }
    }
}

/* the last iteration's result: shard s = (node m, GPU l) summed first over
 * the GPUs of each node in local order, then over the nodes in order, each
 * contribution quantized on its way (flat, G = 1: no node stage), the sum
 * quantized once more */
static void ref_qgz(const sp_plan *p, int G, int bits, int block, float *result)
{
    int P = p->ranks, N = P / G;
    uint64_t n = p->n;
    sp_generator *gen = t_generator(p);
    float *g = malloc((size_t)P * n * sizeof *g), *tmp = malloc(n * sizeof *tmp), *part = malloc(n * sizeof *part);
    cr_assert(g && tmp && part);
    for (int r = 0; r < P; r++)
        sp_generator_fill(gen, r, p->iters - 1, g + (size_t)r * n, 0); /* no residual: the last gradient alone */
    for (int s = 0; s < P; s++) {
        uint64_t off = sp_block_off(n, P, s), len = sp_block_len(n, P, s);
        float *sum = result + off;
        for (int m = 0; m < N; m++) {
            for (int l = 0; l < G; l++) { /* node m's partial sum of shard s (flat: the rank's own) */
                if (G == 1)
                    memcpy(tmp, g + (size_t)m * n + off, len * sizeof *tmp);
                else
                    ref_quant(g + (size_t)(m * G + l) * n + off, len, bits, block, tmp);
                for (uint64_t i = 0; i < len; i++)
                    part[i] = l ? part[i] + tmp[i] : tmp[i];
            }
            ref_quant(part, len, bits, block, tmp);
            for (uint64_t i = 0; i < len; i++)
                sum[i] = m ? sum[i] + tmp[i] : tmp[i];
        }
        memcpy(tmp, sum, len * sizeof *tmp);
        ref_quant(tmp, len, bits, block, sum);
    }
    sp_generator_free(gen);
    free(g);
    free(tmp);
    free(part);
}

struct qgz_case {
    char platform[16];
    int P, G, bits, block, iters;
    uint64_t n;
};

ParameterizedTestParameters(qgz, exact_equals_reference)
{
    static struct qgz_case c[] = {
        {"1gbe", 5, 1, 4, 256, 2, 1001},       {"1gbe", 8, 1, 8, 64, 1, 4099},
        {"dgx-h100:2", 16, 8, 4, 256, 2, 5000}, {"1gbe", 12, 4, 4, 7, 1, 1003},
        {"dgx-h100:3", 24, 8, 2, 33, 1, 777},   {"1gbe", 1, 1, 4, 16, 1, 100},
    };
    return cr_make_param_array(struct qgz_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct qgz_case *c, qgz, exact_equals_reference)
{
    sp_plan p;
    t_plan(&p, "qgz", c->P, c->n, 0.01);
    snprintf(p.platform, sizeof p.platform, "%s", c->platform);
    p.gpus_per_node = c->G;
    p.iters = c->iters;
    p.opts.quant_bits = c->bits;
    p.opts.quant_block = c->block;
    sp_report rep = t_run_ok(&p);
    float *want = malloc(p.n * sizeof *want);
    ref_qgz(&p, c->G, c->bits, c->block, want);
    for (uint64_t i = 0; i < p.n; i++)
        cr_assert_eq(rep.result[i], want[i], "%s P=%d G=%d b=%d: entry %llu: %.9g, want %.9g", c->platform, c->P, c->G,
                     c->bits, (unsigned long long)i, rep.result[i], want[i]);
    for (uint64_t i = 0; i < p.n; i++)
        cr_assert_eq(rep.residual_sum[i], 0.0, "no residual: every entry is delivered");
    free(want);
    sp_report_free(&rep);
}

/* two DGX H100 nodes, n = 16 x 1024: shards of 1024 entries at 4 bits and
 * a scale a 256, m = 4 x 4 + 512 = 528 bytes.  In the node: buckets of 4
 * and 3 messages of 2 shards each way over the ports (25 ns each, 450
 * GB/s), then Bruck's 3 rounds; along the rail: one message over the NICs
 * (two of 500 ns, a leaf of 130 ns; 50 GB/s), then one round of Bruck's */
Test(qgz, two_nodes_time_exact_by_hand)
{
    sp_plan p;
    t_plan(&p, "qgz", 16, 16 * 1024, 0.01);
    snprintf(p.platform, sizeof p.platform, "dgx-h100:2");
    t_wire_only(&p);
    sp_report rep = t_run_ok(&p);
    double m = 528, ai = 50e-9, bi = 1 / 450e9, ax = 1130e-9, bx = 1 / 50e9;
    double want = (2 + 3) * ai + 2 * 7 * 2 * m * bi + (1 + 1) * ax + 2 * 1 * m * bx;
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, want, want * 1e-9, "simulated %.12g, by hand %.12g", got, want);
    cr_assert_float_eq(rep.predicted_s, want, want * 1e-9);
    cr_assert_eq(sp_report_iter_volume(&rep, 0), (uint64_t)(2 * 15 * m));
    sp_report_free(&rep);
}
