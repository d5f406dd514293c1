/* test_results.c - every algorithm's global result equals a reference sum
 * computed here the simplest way, for P in {1, 2, 5, 8, 13}, over several
 * iterations with error feedback.  Each test is its own process (Criterion
 * forks), so each gets a fresh SimGrid engine. */
#include "helpers.h"
#include "../sim/run.h"
#include "../sim/workload.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parameters cross into Criterion's worker processes by value: no pointers */
struct combo {
    char algo[16];
    int P;
    int iters;
};

/* reference top-k: sort all indices by |value| descending, index ascending */
static const float *g_sort_vals;
static int by_mag(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    float x = fabsf(g_sort_vals[i]), y = fabsf(g_sort_vals[j]);
    if (x != y)
        return x > y ? -1 : 1;
    return i < j ? -1 : (i > j);
}

static void reference(const struct combo *c, const sp_plan *p, uint64_t k, double *ref, double *scale)
{
    uint64_t n = p->n;
    sp_synth_params sp;
    sp_synth_defaults(&sp);
    int dense = strcmp(c->algo, "topka") != 0;
    float *acc = calloc(n * (size_t)c->P, sizeof *acc); /* per-rank residual + gradient */
    int32_t *order = malloc(n * sizeof *order);
    for (int it = 0; it < c->iters; it++) {
        memset(ref, 0, n * sizeof *ref);
        memset(scale, 0, n * sizeof *scale);
        for (int r = 0; r < c->P; r++) {
            float *a = acc + (size_t)r * n;
            sp_synth_add(&sp, p->seed, r, it, n, a);
            if (dense) {
                for (uint64_t i = 0; i < n; i++) {
                    ref[i] += a[i];
                    scale[i] += fabs(a[i]);
                    a[i] = 0;
                }
            } else {
                for (uint64_t i = 0; i < n; i++)
                    order[i] = (int32_t)i;
                g_sort_vals = a;
                qsort(order, n, sizeof *order, by_mag);
                for (uint64_t j = 0; j < k; j++) {
                    ref[order[j]] += a[order[j]];
                    scale[order[j]] += fabs(a[order[j]]);
                    a[order[j]] = 0;
                }
            }
        }
    }
    free(acc);
    free(order);
}

ParameterizedTestParameters(results, equal_reference)
{
    static struct combo params[] = {
        {"ring", 1, 2},         {"ring", 2, 2},         {"ring", 5, 2},         {"ring", 8, 2},
        {"ring", 13, 2},        {"recdoubling", 1, 2},  {"recdoubling", 2, 2},  {"recdoubling", 5, 2},
        {"recdoubling", 8, 2},  {"recdoubling", 13, 2}, {"rabenseifner", 1, 2}, {"rabenseifner", 2, 2},
        {"rabenseifner", 5, 2}, {"rabenseifner", 8, 2}, {"rabenseifner", 13, 2}, {"topka", 1, 3},
        {"topka", 2, 3},        {"topka", 5, 3},        {"topka", 8, 3},        {"topka", 13, 3},
    };
    return cr_make_param_array(struct combo, params, sizeof params / sizeof params[0]);
}

ParameterizedTest(struct combo *c, results, equal_reference)
{
    sp_plan p;
    sp_plan_defaults(&p);
    snprintf(p.algo, sizeof p.algo, "%s", c->algo);
    p.ranks = c->P;
    p.n = 1000 + (uint64_t)c->P; /* not a multiple of P */
    p.density = 0.03;
    p.iters = c->iters;
    p.seed = 7;
    p.out[0] = '\0';
    p.payload = SP_PAYLOAD_EXACT;
    snprintf(p.network, sizeof p.network, "cm02");
    sp_report rep;
    char err[512] = "";
    int rc = sp_run(&p, &rep, err, sizeof err);
    cr_assert_eq(rc, 0, "run failed: %s", err);
    cr_assert_not_null(rep.result);
    double *ref = malloc(p.n * sizeof *ref), *scale = malloc(p.n * sizeof *scale);
    reference(c, &p, rep.k, ref, scale);
    int nonzero = 0;
    for (uint64_t i = 0; i < p.n; i++) {
        double tol = 1e-5 * scale[i] + 1e-7;
        cr_assert(fabs(rep.result[i] - ref[i]) <= tol, "%s P=%d: result[%llu] = %.9g, reference %.9g", c->algo,
                  c->P, (unsigned long long)i, rep.result[i], ref[i]);
        nonzero += rep.result[i] != 0;
    }
    cr_assert_gt(nonzero, 0, "the result is all zeros");
    free(ref);
    free(scale);
    sp_report_free(&rep);
}
