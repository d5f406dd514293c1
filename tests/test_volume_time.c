/* test_volume_time.c - volumes equal the closed-form counts exactly, and on
 * CM02 without contention the simulated ring time equals the alpha-beta
 * formula 2(P-1)(alpha + 4(n/P) beta). */
#include "helpers.h"
#include "../sim/run.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static sp_report run(const char *algo, int P, uint64_t n, double density, sp_payload_mode mode,
                     const char *platform)
{
    sp_plan p;
    sp_plan_defaults(&p);
    snprintf(p.algo, sizeof p.algo, "%s", algo);
    snprintf(p.platform, sizeof p.platform, "%s", platform);
    snprintf(p.network, sizeof p.network, "cm02");
    p.ranks = P;
    p.n = n;
    p.density = density;
    p.out[0] = '\0';
    p.payload = mode;
    sp_report rep;
    char err[512] = "";
    int rc = sp_run(&p, &rep, err, sizeof err);
    cr_assert_eq(rc, 0, "run failed: %s", err);
    return rep;
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
