/* test_oktopk.c - Ok-Topk's properties between exact recomputations: what it
 * delivers passes the global threshold, the reused local threshold keeps the
 * count in its band, and the volume stays within 6k'(P-1)/P words (+10%),
 * Li & Hoefler, PPoPP 2022, Eq. 3.  (Recompute iterations are checked
 * against a reference in test_results.c.) */
#include "helpers.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stat_id(const sp_report *rep, const char *name)
{
    for (int i = 0; i < rep->nstats; i++)
        if (strcmp(rep->stat_names[i], name) == 0)
            return i;
    return -1;
}

static sp_report run_oktopk(int P, int iters, int tau_prime, int balance, double spread)
{
    sp_plan p;
    t_plan(&p, "oktopk", P, 40000, 0.02);
    p.iters = iters;
    p.opts.tau_prime = tau_prime;
    p.opts.balance = balance;
    p.grad_spread = spread;
    return t_run_ok(&p);
}

ParameterizedTestParameters(oktopk, delivered_entries_pass_the_global_threshold)
{
    static int Ps[] = {1, 2, 3, 7, 8, 16};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

ParameterizedTest(int *P, oktopk, delivered_entries_pass_the_global_threshold)
{
    sp_report rep = run_oktopk(*P, 4, 8, -1, 10.0); /* iterations 1..3 reuse thresholds */
    int thr = stat_id(&rep, "thr_global"), rec = stat_id(&rep, "recompute");
    int loc = stat_id(&rep, "local_selected"), raised = stat_id(&rep, "raised");
    cr_assert(thr >= 0 && rec >= 0 && loc >= 0 && raised >= 0);
    cr_assert_eq(rep.iters[3].stat_max[rec], 0, "the last iteration should reuse thresholds");
    double t = rep.iters[3].stat_max[thr];
    cr_assert_eq(t, rep.iters[3].stat_min[thr], "ranks disagree on the global threshold");
    int delivered = 0;
    for (uint64_t i = 0; i < rep.n; i++)
        if (rep.result[i] != 0.0f) {
            cr_assert(fabsf(rep.result[i]) > t, "entry %llu = %g does not pass %g", (unsigned long long)i,
                      rep.result[i], t);
            delivered++;
        }
    cr_assert_gt(delivered, 0);
    /* the reuse loop raises thr_local while more than 4k/3 pass, at most 5 times */
    for (int r = 0; r < *P; r++) {
        double m = rep.stat_last[(size_t)loc * (size_t)*P + (size_t)r];
        double steps = rep.stat_last[(size_t)raised * (size_t)*P + (size_t)r];
        cr_assert(m <= 4.0 * (double)rep.k / 3.0 || steps == 5, "rank %d selected %.0f > 4k/3 after %.0f raises", r,
                  m, steps);
    }
    sp_report_free(&rep);
}

struct vol_case {
    int P, balance;
};

ParameterizedTestParameters(oktopk, volume_within_6k)
{
    static struct vol_case c[] = {{2, 1}, {3, 1}, {7, 1}, {8, 1}, {16, 1}, {8, 0}};
    return cr_make_param_array(struct vol_case, c, sizeof c / sizeof c[0]);
}

/* on iterations that reuse thresholds, with regions set: volume (counts
 * aside) <= 6k'(P-1)/P words + 10%, k' the largest selected count.
 * Eq. 3 assumes regions balanced for the selection, which repartitioning
 * provides while the distribution of large entries stays put; the test uses
 * gradients without layer skew (spread 1).  With strong skew that drifts
 * between repartitions (the default synthetic gradients: residuals of
 * low-scale layers grow until they cross the threshold in one large region)
 * the split-and-reduce volume exceeds it: bench/README.md reports the
 * realized ratio. */
ParameterizedTest(struct vol_case *c, oktopk, volume_within_6k)
{
    int P = c->P;
    sp_report rep = run_oktopk(P, 5, 16, c->balance, 1.0);
    int loc = stat_id(&rep, "local_selected"), tot = stat_id(&rep, "global_total"), rec = stat_id(&rep, "recompute");
    int counts = -1;
    for (int ph = 0; ph < rep.nphases; ph++)
        if (strcmp(rep.phase_names[ph], "counts") == 0)
            counts = ph;
    for (int it = 1; it < rep.niters; it++) {
        cr_assert_eq(rep.iters[it].stat_max[rec], 0);
        double kp = rep.iters[it].stat_max[loc] > rep.iters[it].stat_max[tot] ? rep.iters[it].stat_max[loc]
                                                                             : rep.iters[it].stat_max[tot];
        double bytes = 0;
        for (int ph = 0; ph < rep.nphases; ph++)
            if (ph != counts)
                bytes += (double)rep.iters[it].phase_volume[ph];
        double bound = 6.0 * kp * (P - 1) / P;
        cr_assert(bytes / 4.0 <= 1.1 * bound, "P=%d iteration %d: %.0f words > 6k'(P-1)/P = %.0f (k' = %.0f) + 10%%",
                  P, it, bytes / 4.0, bound, kp);
    }
    sp_report_free(&rep);
}

/* balancing leaves every rank floor(T/P) or ceil(T/P) entries */
Test(oktopk, balancing_evens_the_blocks)
{
    int P = 7;
    sp_report rep = run_oktopk(P, 3, 8, 1, 10.0);
    int bal = stat_id(&rep, "balanced"), tot = stat_id(&rep, "global_total");
    cr_assert(bal >= 0);
    double T = rep.iters[2].stat_max[tot];
    cr_assert_geq(rep.iters[2].stat_min[bal], floor(T / P));
    cr_assert_leq(rep.iters[2].stat_max[bal], ceil(T / P));
    sp_report_free(&rep);
}

/* separate index and value messages carry the same result as pairs: two
 * runs of the binary (one SimGrid engine per process) */
Test(oktopk, packing_and_quantiles_do_not_change_the_result)
{
    const char *dir = t_tmpdir();
    char out[2][512], res[2][512], sum[2][512];
    for (int i = 0; i < 2; i++) {
        snprintf(out[i], sizeof out[i], "%s/o%d", dir, i);
        snprintf(res[i], sizeof res[i], "%s/r%d.npy", dir, i);
        snprintf(sum[i], sizeof sum[i], "%s/o%d/summary.json", dir, i);
        /* the second run also places region boundaries at exact quantiles:
         * regions move messages around, never change the result */
        const char *args[] = {"run", "--algo", "oktopk", "--ranks", "5", "--n", "20000", "--density", "0.02", "--iters",
                              "3", "--tau-prime", "2", "--packing", i ? "separate" : "pairs", "--quantiles",
                              i ? "exact" : "authors", "--dump-result", res[i], "--out", out[i], "--quiet", NULL};
        t_proc pr = t_run(args);
        cr_assert(pr.exited && pr.status == 0, "%s", pr.err);
        t_proc_free(&pr);
    }
    size_t la, lb;
    char *a = t_read_file(res[0], &la), *b = t_read_file(res[1], &lb);
    cr_assert(a && b && la == lb && memcmp(a, b, la) == 0, "the results differ");
    free(a);
    free(b);
    /* about the same bytes travel (regions differ), in more messages */
    char *sa = t_read_file(sum[0], NULL), *sb = t_read_file(sum[1], NULL);
    cJSON *ja = cJSON_Parse(sa), *jb = cJSON_Parse(sb);
    cr_assert(ja && jb);
    double ba = cJSON_GetObjectItem(ja, "bytes")->valuedouble, bb = cJSON_GetObjectItem(jb, "bytes")->valuedouble;
    double ma = cJSON_GetObjectItem(ja, "messages")->valuedouble, mb = cJSON_GetObjectItem(jb, "messages")->valuedouble;
    cr_assert(fabs(ba - bb) < 0.2 * ba, "bytes: pairs %.0f, separate %.0f", ba, bb);
    cr_assert_gt(mb, ma);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    free(sa);
    free(sb);
}
