/* test_volume_time.c - volumes equal the closed-form counts exactly, and on
 * CM02 without contention the simulated ring time equals the alpha-beta
 * formula 2(P-1)(alpha + 4(n/P) beta). */
#include "helpers.h"
#include "sim/driver/run.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static sp_report run(const char *algo, int P, uint64_t n, double density, sp_payload_mode mode,
                     const char *platform)
{
    sp_plan p;
    t_plan(&p, algo, P, n, density);
    snprintf(p.platform, sizeof p.platform, "%s", platform);
    p.payload = mode;
    return t_run_ok(&p);
}

ParameterizedTestParameters(volume, ring_total)
{
    static int Ps[] = {2, 3, 5, 8, 13, 64};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

/* dense ring: 2(P-1) steps, each moving every block once: 2(P-1) x 4n bytes */
ParameterizedTest(int *P, volume, ring_total)
{
    uint64_t n = 4099;
    sp_report rep = run("ring", *P, n, 0.01, SP_PAYLOAD_EXACT, "1gbe");
    cr_assert_eq(rep.total_bytes, 2ull * (uint64_t)(*P - 1) * 4ull * n, "P=%d: %llu bytes", *P,
                 (unsigned long long)rep.total_bytes);
    cr_assert_eq(rep.total_msgs, 2ull * (uint64_t)(*P - 1) * (uint64_t)*P);
    sp_report_free(&rep);
}

ParameterizedTestParameters(volume, topka_per_rank)
{
    static int Ps[] = {2, 3, 5, 8, 13, 64};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

/* TopkA delivers k(P-1) pairs of 8 bytes to every rank */
ParameterizedTest(int *P, volume, topka_per_rank)
{
    sp_report rep = run("topka", *P, 5000, 0.01, SP_PAYLOAD_EXACT, "1gbe");
    cr_assert_eq(rep.k, 50);
    for (int r = 0; r < *P; r++) {
        cr_assert_eq(rep.rank_recv[r], 8ull * rep.k * (uint64_t)(*P - 1), "rank %d received %llu", r,
                     (unsigned long long)rep.rank_recv[r]);
        cr_assert_eq(rep.rank_sent[r], 8ull * rep.k * (uint64_t)(*P - 1), "rank %d sent %llu", r,
                     (unsigned long long)rep.rank_sent[r]);
    }
    sp_report_free(&rep);
}

/* the volume as the bounds count it equals 2n(P-1)/P words for the ring
 * when P divides n, and the dense lower bound for Rabenseifner at powers of two */
Test(volume, bounds_ratio_is_one)
{
    sp_report a = run("ring", 16, 16 * 1000, 0.01, SP_PAYLOAD_SIZE, "1gbe");
    uint64_t v = 0;
    for (int ph = 0; ph < a.nphases; ph++)
        v += a.iters[0].phase_volume[ph];
    cr_assert_eq(v, 2ull * 16000 * 15 / 16 * 4);
    sp_report_free(&a);
}

Test(volume, rabenseifner_power_of_two)
{
    sp_report a = run("rabenseifner", 16, 16 * 1000, 0.01, SP_PAYLOAD_SIZE, "1gbe");
    uint64_t v = 0;
    for (int ph = 0; ph < a.nphases; ph++)
        v += a.iters[0].phase_volume[ph];
    cr_assert_eq(v, 2ull * 16000 * 15 / 16 * 4);
    sp_report_free(&a);
}

ParameterizedTestParameters(timing, ring_alpha_beta)
{
    static int Ps[] = {2, 4, 16, 64};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

/* 1gbe: a route is two 50 us links, 125 MB/s: alpha = 100 us, beta = 8 ns/B */
ParameterizedTest(int *P, timing, ring_alpha_beta)
{
    uint64_t n = (uint64_t)*P * 65536;
    sp_report rep = run("ring", *P, n, 0.01, SP_PAYLOAD_SIZE, "1gbe");
    double alpha = 100e-6, beta = 1.0 / 125e6;
    cr_assert_float_eq(rep.alpha, alpha, 1e-12);
    double expect = 2.0 * (*P - 1) * (alpha + 4.0 * (double)(n / (uint64_t)*P) * beta);
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert(fabs(got - expect) <= 0.01 * expect, "P=%d: simulated %.9g s, formula %.9g s", *P, got, expect);
    sp_report_free(&rep);
}

/* the same on the dragonfly within one router's reach (P = 4: no contention) */
Test(timing, ring_alpha_beta_daint)
{
    int P = 4;
    uint64_t n = 4 * 262144;
    sp_report rep = run("ring", P, n, 0.01, SP_PAYLOAD_SIZE, "daint");
    double expect = 2.0 * (P - 1) * (rep.alpha + 4.0 * (double)(n / P) * rep.beta);
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert(fabs(got - expect) <= 0.01 * expect, "simulated %.9g s, formula %.9g s", got, expect);
    sp_report_free(&rep);
}

static int phase_id(const sp_report *rep, const char *name)
{
    for (int i = 0; i < rep->nphases; i++)
        if (strcmp(rep->phase_names[i], name) == 0)
            return i;
    return -1;
}

ParameterizedTestParameters(volume, gtopk_messages)
{
    static int Ps[] = {2, 3, 5, 8, 13};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

/* gTop-k: P-1 messages up the tree and P-1 down, each k pairs of 8 bytes */
ParameterizedTest(int *P, volume, gtopk_messages)
{
    sp_report rep = run("gtopk", *P, 5000, 0.01, SP_PAYLOAD_EXACT, "1gbe");
    cr_assert_eq(rep.total_msgs, 2ull * (uint64_t)(*P - 1));
    cr_assert_eq(rep.total_bytes, 2ull * (uint64_t)(*P - 1) * 8ull * rep.k);
    sp_report_free(&rep);
}

static sp_report run_uniform(const char *algo, int P, uint64_t n, double density, int oktopk)
{
    sp_plan p;
    t_plan(&p, algo, P, n, density);
    p.iters = 2;
    p.grad_spread = 1.0; /* no layer skew: selections spread over the index space */
    char err[200];
    cr_assert_eq(sp_plan_set(&p, "grad-shared", "0", err, sizeof err), 0, "%s", err);
    p.opts.gaussian_oktopk = oktopk;
    return t_run_ok(&p);
}

ParameterizedTestParameters(volume, topkdsa_band)
{
    static int Ps[] = {2, 3, 5, 8, 13};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

/* TopkDSA: between 4k(P-1)/P and (2k+n)(P-1)/P words per rank, counts aside */
ParameterizedTest(int *P, volume, topkdsa_band)
{
    sp_report rep = run_uniform("topkdsa", *P, 26000, 0.02, 0);
    int counts = phase_id(&rep, "counts");
    double k = (double)rep.k, n = (double)rep.n, Pd = *P;
    for (int it = 0; it < rep.niters; it++) {
        double bytes = 0;
        for (int ph = 0; ph < rep.nphases; ph++)
            if (ph != counts)
                bytes += (double)rep.iters[it].phase_volume[ph];
        double words = bytes / 4.0;
        cr_assert(words >= 4.0 * k * (Pd - 1) / Pd && words <= (2.0 * k + n) * (Pd - 1) / Pd,
                  "P=%d iteration %d: %.0f words outside [%.0f, %.0f]", *P, it, words, 4.0 * k * (Pd - 1) / Pd,
                  (2.0 * k + n) * (Pd - 1) / Pd);
    }
    sp_report_free(&rep);
}

ParameterizedTestParameters(volume, counts_exchange)
{
    static int Ps[] = {2, 3, 5, 7, 8, 13, 64, 100};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

/* TopkDSA's counts phase: the alltoall of counts (below 8 ranks, one 4-byte
 * count to every other rank; from 8 on Bruck's: in the round of bit d every
 * rank sends the counts of the rotated blocks j in [1, P) with that bit set),
 * then an allgather of one 8-byte non-zero count */
ParameterizedTest(int *P, volume, counts_exchange)
{
    sp_report rep = run_uniform("topkdsa", *P, 26000, 0.02, 0);
    int counts = phase_id(&rep, "counts");
    uint64_t bytes = 8ull * (uint64_t)(*P - 1);
    if (*P < 8)
        bytes += 4ull * (uint64_t)(*P - 1);
    else
        for (int d = 1; d < *P; d <<= 1)
            for (int j = 1; j < *P; j++)
                bytes += (j & d) ? 4 : 0;
    for (int it = 0; it < rep.niters; it++) {
        cr_assert_eq(rep.iters[it].phase_sent_max[counts], bytes, "P=%d: %llu bytes of counts", *P,
                     (unsigned long long)rep.iters[it].phase_sent_max[counts]);
        cr_assert_eq(rep.iters[it].phase_recv_max[counts], bytes);
    }
    sp_report_free(&rep);
}

/* the dense switch: with --dsa-dense-at small, the allgather carries floats */
Test(volume, topkdsa_switches_to_dense)
{
    sp_plan p;
    t_plan(&p, "topkdsa", 4, 4000, 0.05);
    p.opts.dsa_dense_at = 0.01;
    sp_report rep = t_run_ok(&p);
    int ag = phase_id(&rep, "allgather");
    /* every rank receives the other three regions of 1000 floats */
    cr_assert_eq(rep.iters[0].phase_recv_max[ag], 3 * 1000 * 4);
    sp_report_free(&rep);
}

struct band_case {
    int P, oktopk;
};

ParameterizedTestParameters(gaussiank, count_in_band_or_loop_at_limit)
{
    static struct band_case c[] = {{2, 0}, {5, 0}, {8, 0}, {2, 1}, {5, 1}, {8, 1}};
    return cr_make_param_array(struct band_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct band_case *c, gaussiank, count_in_band_or_loop_at_limit)
{
    sp_report rep = run_uniform("gaussiank", c->P, 20000, 0.01, c->oktopk);
    int sel = -1, rounds = -1;
    for (int i = 0; i < rep.nstats; i++) {
        if (strcmp(rep.stat_names[i], "selected") == 0)
            sel = i;
        if (strcmp(rep.stat_names[i], "adjust_rounds") == 0)
            rounds = i;
    }
    cr_assert(sel >= 0 && rounds >= 0);
    double k = (double)rep.k;
    double lo = c->oktopk ? 0.75 * k : 2.0 * k / 3.0, hi = c->oktopk ? 1.25 * k : 4.0 * k / 3.0;
    int limit = c->oktopk ? 21 : 3;
    for (int r = 0; r < c->P; r++) {
        double m = rep.stat_last[(size_t)sel * (size_t)c->P + (size_t)r];
        double nr = rep.stat_last[(size_t)rounds * (size_t)c->P + (size_t)r];
        cr_assert((m >= lo && m <= hi) || nr == limit, "rank %d selected %.0f (band [%.0f, %.0f]) after %.0f rounds", r,
                  m, lo, hi, nr);
    }
    sp_report_free(&rep);
}
