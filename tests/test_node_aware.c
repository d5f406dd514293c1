/* test_node_aware.c - the node-aware forms rail:X and leader:X of every
 * sparse algorithm X (algorithms/node_aware.c): their registry rows follow
 * X's; the result plus the residuals left on the ranks is the sum of the
 * inputs; where X delivers everything (density 1) the result is the dense
 * sum, and TopkA's forms select on the node's sums as stated; the volumes
 * inside a node and between nodes equal their closed forms
 * (analysis/bounds.c); and the driver refuses what a form cannot run. */
#include "helpers.h"
#include "algorithms/node_aware.h"
#include "analysis/bounds.h"
#include "sim/driver/run.h"
#include "sim/workload/generator.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sparse[] = {"topka", "gtopk", "gaussiank", "topkdsa", "oktopk"};

/* parameters cross into Criterion's worker processes by value */
struct form_case {
    char algo[24];
    int P, G;
};

static sp_plan plan_of(const char *algo, int P, int G, uint64_t n, double density, int iters)
{
    sp_plan p;
    t_plan(&p, algo, P, n, density);
    p.gpus_per_node = G;
    p.iters = iters;
    p.seed = 11;
    p.opts.tau_prime = 1; /* Ok-Topk: exact thresholds every iteration */
    return p;
}

static int phase_id(const sp_report *rep, const char *name)
{
    for (int i = 0; i < rep->nphases; i++)
        if (strcmp(rep->phase_names[i], name) == 0)
            return i;
    return -1;
}

/* ---- the rows ------------------------------------------------------------ */

Test(node_aware, every_sparse_row_has_both_forms_and_no_other_has)
{
    int na;
    const sp_algorithm *a = sp_algorithm_list(&na);
    for (int i = 0; i < na; i++) {
        cr_assert_eq(a[i].form, SP_FORM_FLAT, "%s: the listing holds flat rows only", a[i].name);
        for (int f = SP_FORM_RAIL; f <= SP_FORM_LEADER; f++) {
            char name[64];
            snprintf(name, sizeof name, "%s:%s", sp_algo_form_name((sp_algo_form)f), a[i].name);
            const sp_algorithm *row = sp_algorithm_find(name);
            if (a[i].cls != SP_ALGO_SPARSE) {
                cr_assert_null(row, "%s: a form of a %s algorithm", name, sp_algo_class_name(a[i].cls));
                continue;
            }
            cr_assert_not_null(row, "%s: no row", name);
            cr_assert_str_eq(row->name, name);
            cr_assert_eq(row->form, f);
            cr_assert_eq(row->inner, &a[i]);
            cr_assert_eq(row->cls, a[i].cls);
            cr_assert_eq(row->size_only_ok, a[i].size_only_ok);
            cr_assert_eq(row->model_ok, a[i].model_ok, "%s: runs on a model as its X does", name);
            cr_assert(row->run && row->summary && row->summary[0] && row->exact_extra_bytes);
            cr_assert_eq(sp_algorithm_find(name), row, "%s: one row, found again", name);
        }
    }
    cr_assert_null(sp_algorithm_find("rail:rail:topka"));
    cr_assert_null(sp_algorithm_find("rail:nosuch"));
    cr_assert_null(sp_algorithm_find("mesh:topka"));
}

/* ---- what the forms deliver ------------------------------------------------ */

ParameterizedTestParameters(node_aware, results_plus_residuals_are_the_inputs)
{
    static struct form_case c[20];
    int m = 0;
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 5; i++)
            for (int s = 0; s < 2; s++) {
                snprintf(c[m].algo, sizeof c[m].algo, "%s:%s", f ? "leader" : "rail", sparse[i]);
                c[m].P = s ? 12 : 16;
                c[m].G = s ? 4 : 8;
                m++;
            }
    return cr_make_param_array(struct form_case, c, (size_t)m);
}

/* every entry a rank handed to an owner lives on in the owner's residual or
 * in the result: over the iterations, results + final residuals = inputs.
 * gTop-k's published rule keeps that among 2 ranks only (test_results.c), so
 * its forms are held to it where X runs among N = 2 nodes. */
ParameterizedTest(struct form_case *c, node_aware, results_plus_residuals_are_the_inputs)
{
    sp_plan p = plan_of(c->algo, c->P, c->G, 2000 + (uint64_t)c->P /* shards of unequal size */, 0.04, 3);
    sp_report rep = t_run_ok(&p);
    cr_assert_eq(rep.gpus_per_node, c->G);
    cr_assert_geq(phase_id(&rep, strncmp(c->algo, "rail", 4) ? "node-reduce" : "node-reduce-scatter"), 0);
    cr_assert_geq(phase_id(&rep, strncmp(c->algo, "rail", 4) ? "node-bcast" : "node-allgather"), 0);
    double *mag, *want = t_gradient_sum(&p, &mag), delivered = 0;
    int gtopk_lossy = strstr(c->algo, "gtopk") && c->P / c->G > 2;
    int off = 0;
    for (uint64_t i = 0; i < p.n; i++) {
        double got = rep.result_sum[i] + rep.residual_sum[i];
        off += fabs(got - want[i]) > 1e-4 * mag[i] + 1e-6;
        if (!gtopk_lossy)
            cr_assert(fabs(got - want[i]) <= 1e-4 * mag[i] + 1e-6,
                      "%s P=%d: entry %llu: results + residuals = %.9g, inputs %.9g", c->algo, c->P,
                      (unsigned long long)i, got, want[i]);
        delivered += fabs(rep.result_sum[i]);
    }
    cr_assert_gt(delivered, 0, "%s: nothing delivered", c->algo);
    if (gtopk_lossy)
        cr_assert_lt(off, (int)(3 * 0.04 * (double)p.n), "%s: more entries lost than selected", c->algo);
    free(want);
    free(mag);
    sp_report_free(&rep);
}

ParameterizedTestParameters(node_aware, density_one_gives_the_dense_sum)
{
    /* Gaussian-k's threshold holds entries back even at density 1 */
    static const char *const whole[] = {"topka", "gtopk", "topkdsa", "oktopk"};
    static struct form_case c[16];
    int m = 0;
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 4; i++)
            for (int s = 0; s < 2; s++) {
                snprintf(c[m].algo, sizeof c[m].algo, "%s:%s", f ? "leader" : "rail", whole[i]);
                c[m].P = s ? 12 : 16;
                c[m].G = s ? 4 : 8;
                m++;
            }
    return cr_make_param_array(struct form_case, c, (size_t)m);
}

/* with k = n every selection is everything: the result is the plain sum of
 * the gradients over all ranks, and no residual is left */
ParameterizedTest(struct form_case *c, node_aware, density_one_gives_the_dense_sum)
{
    sp_plan p = plan_of(c->algo, c->P, c->G, 600 + (uint64_t)c->P, 1.0, 1);
    sp_report rep = t_run_ok(&p);
    double *mag, *want = t_gradient_sum(&p, &mag);
    for (uint64_t i = 0; i < p.n; i++) {
        cr_assert(fabs(rep.result[i] - want[i]) <= 1e-5 * mag[i] + 1e-7, "%s P=%d: result[%llu] = %.9g, sum %.9g",
                  c->algo, c->P, (unsigned long long)i, rep.result[i], want[i]);
        cr_assert(fabs(rep.residual_sum[i]) <= 1e-5 * mag[i] + 1e-7, "%s: residual left at %llu", c->algo,
                  (unsigned long long)i);
    }
    free(want);
    free(mag);
    sp_report_free(&rep);
}

/* |x| descending, index ascending: the order of the exact top-k */
static const float *g_vals;
static int by_mag(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    float x = fabsf(g_vals[i]), y = fabsf(g_vals[j]);
    if (x != y)
        return x > y ? -1 : 1;
    return i < j ? -1 : (i > j);
}

/* the result the forms of TopkA state, the plain way: each node's sum; on
 * each shard (rail) or on the whole vector (leader) the top k' of every
 * node's sum, summed over the nodes */
static void topka_reference(const sp_plan *p, int rail, uint64_t k, double *ref)
{
    int G = p->gpus_per_node, N = p->ranks / G;
    uint64_t n = p->n;
    sp_generator *gen = t_generator(p);
    float *g = malloc(n * sizeof *g), *sum = malloc(n * sizeof *sum);
    uint32_t *order = malloc(n * sizeof *order);
    memset(ref, 0, n * sizeof *ref);
    for (int node = 0; node < N; node++) {
        memset(sum, 0, n * sizeof *sum);
        for (int j = 0; j < G; j++) {
            sp_generator_fill(gen, node * G + j, 0, g, 0);
            for (uint64_t i = 0; i < n; i++)
                sum[i] += g[i];
        }
        for (int s = 0; s < (rail ? G : 1); s++) {
            uint64_t lo = rail ? sp_shard_lo(n, G, s) : 0, hi = rail ? sp_shard_lo(n, G, s + 1) : n;
            uint64_t kk = rail ? sp_rail_k(k, G) : k;
            for (uint64_t i = lo; i < hi; i++)
                order[i - lo] = (uint32_t)i;
            g_vals = sum;
            qsort(order, hi - lo, sizeof *order, by_mag);
            for (uint64_t t = 0; t < kk; t++)
                ref[order[t]] += sum[order[t]];
        }
    }
    free(g);
    free(sum);
    free(order);
    sp_generator_free(gen);
}

ParameterizedTestParameters(node_aware, topka_selects_on_the_node_sums)
{
    static struct form_case c[] = {{"rail:topka", 16, 8}, {"rail:topka", 12, 4}, {"leader:topka", 16, 8},
                                   {"leader:topka", 12, 4}};
    return cr_make_param_array(struct form_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct form_case *c, node_aware, topka_selects_on_the_node_sums)
{
    sp_plan p = plan_of(c->algo, c->P, c->G, 1000 + (uint64_t)c->P, 0.05, 1);
    sp_report rep = t_run_ok(&p);
    double *mag, *want = t_gradient_sum(&p, &mag), *ref = malloc(p.n * sizeof *ref);
    topka_reference(&p, c->algo[0] == 'r', rep.k, ref);
    int nonzero = 0;
    for (uint64_t i = 0; i < p.n; i++) {
        cr_assert(fabs(rep.result[i] - ref[i]) <= 1e-5 * mag[i] + 1e-7, "%s P=%d: result[%llu] = %.9g, reference %.9g",
                  c->algo, c->P, (unsigned long long)i, rep.result[i], ref[i]);
        nonzero += ref[i] != 0;
    }
    cr_assert_gt(nonzero, 0);
    free(ref);
    free(want);
    free(mag);
    sp_report_free(&rep);
}

/* ---- volumes per link class ------------------------------------------------ */

static sp_report run_volume(const char *algo, int P, int G, uint64_t n, double density, int iters)
{
    sp_plan p = plan_of(algo, P, G, n, density, iters);
    snprintf(p.device, sizeof p.device, "none");
    p.grad_spread = 1.0; /* no layer skew: selections spread over the index space */
    p.opts.tau_prime = 16; /* Ok-Topk: thresholds reused after the first iteration (test_oktopk.c) */
    p.opts.balance = 1;
    char err[200];
    cr_assert_eq(sp_plan_set(&p, "grad-shared", "0", err, sizeof err), 0, "%s", err);
    return t_run_ok(&p);
}

/* inside a node, per rank and exactly: rail sends every shard but its own
 * (reduce-scatter) and every shard but its right neighbour's (allgather),
 * and receives every shard but its left neighbour's and every shard but its
 * own; leader: every rank but the leader sends one vector up and receives
 * one down.  As the bounds count it: the node phases' volume is the
 * closed form of analysis/bounds.c. */
static void check_intra(const sp_report *rep, const char *algo, int P, int G, uint64_t n, const sp_node_bound *b)
{
    int rail = algo[0] == 'r';
    for (int r = 0; r < P; r++) {
        int j = r % G;
#define SHARD(s) (sp_shard_lo(n, G, ((s) + G) % G + 1) - sp_shard_lo(n, G, ((s) + G) % G))
        uint64_t sent = rail ? 4 * (2 * n - SHARD(j) - SHARD(j + 1)) : 4 * n * (uint64_t)(j != 0);
        uint64_t recv = rail ? 4 * (2 * n - SHARD(j - 1) - SHARD(j)) : 0;
#undef SHARD
        if (!rail) { /* leader: children up the tree, once; down the tree, the same */
            int kids = 0;
            for (int mask = 1; mask < G; mask <<= 1)
                kids += j < mask && j + mask < G;
            sent += 4 * n * (uint64_t)kids;
            recv = 4 * n * (uint64_t)(kids + (j != 0));
        }
        cr_assert_eq(rep->rank_sent[r] - rep->rank_sent_off[r], sent * (uint64_t)rep->niters,
                     "%s rank %d: %llu bytes sent inside its node", algo, r,
                     (unsigned long long)(rep->rank_sent[r] - rep->rank_sent_off[r]));
        cr_assert_eq(rep->rank_recv[r] - rep->rank_recv_off[r], recv * (uint64_t)rep->niters,
                     "%s rank %d: %llu bytes received inside its node", algo, r,
                     (unsigned long long)(rep->rank_recv[r] - rep->rank_recv_off[r]));
    }
    for (int it = 0; it < rep->niters; it++) {
        uint64_t v = 0;
        for (int ph = 0; ph < rep->nphases; ph++)
            if (!strncmp(rep->phase_names[ph], "node-", 5))
                v += rep->iters[it].phase_volume[ph];
        cr_assert_eq((double)v, 4.0 * b->intra_words, "%s: %llu bytes in the node phases, bound %.0f words", algo,
                     (unsigned long long)v, b->intra_words);
    }
}

/* between nodes, as the bounds count it: the phases of X (all but the node
 * phases and, for the data-dependent ones, the counts) */
static double inter_bytes(const sp_report *rep, int it, int skip_counts)
{
    double v = 0;
    for (int ph = 0; ph < rep->nphases; ph++)
        if (strncmp(rep->phase_names[ph], "node-", 5) && !(skip_counts && !strcmp(rep->phase_names[ph], "counts")))
            v += (double)rep->iters[it].phase_volume[ph];
    return v;
}

ParameterizedTestParameters(node_aware, exact_volumes_of_topka_and_gtopk)
{
    static struct form_case c[] = {{"rail:topka", 16, 8},   {"rail:topka", 12, 4},   {"leader:topka", 16, 8},
                                   {"leader:topka", 12, 4}, {"rail:gtopk", 16, 8},   {"rail:gtopk", 12, 4},
                                   {"leader:gtopk", 16, 8}, {"leader:gtopk", 12, 4}, {"leader:gtopk", 24, 3}};
    return cr_make_param_array(struct form_case, c, sizeof c / sizeof c[0]);
}

/* TopkA and gTop-k move data-independent sizes: every figure is exact.
 * Between nodes TopkA sends and receives 8 k'(N-1) bytes on every rank of X
 * (2k'(N-1) words); gTop-k's root receives ceil(log2 N) messages of 8k'
 * bytes and sends as many (4k' ceil(log2 N) words); in all 2(N-1) messages
 * of 8k' per group of X. */
ParameterizedTest(struct form_case *c, node_aware, exact_volumes_of_topka_and_gtopk)
{
    uint64_t n = 9600; /* divisible by every G here */
    sp_report rep = run_volume(c->algo, c->P, c->G, n, 0.01, 2);
    sp_node_bound b;
    cr_assert_eq(sp_node_bound_volume(c->algo, c->P, c->G, n, rep.k, &b), 0);
    check_intra(&rep, c->algo, c->P, c->G, n, &b);
    int rail = c->algo[0] == 'r', topka = strstr(c->algo, "topka") != NULL;
    int N = c->P / c->G;
    uint64_t kk = rail ? sp_rail_k(rep.k, c->G) : rep.k;
    cr_assert_eq(b.k_inner, kk);
    uint64_t off_total = 0;
    for (int r = 0; r < c->P; r++) {
        int in_x = rail || r % c->G == 0;
        off_total += rep.rank_sent_off[r];
        if (topka) {
            cr_assert_eq(rep.rank_sent_off[r], in_x ? 8 * kk * (uint64_t)(N - 1) * (uint64_t)rep.niters : 0,
                         "%s rank %d: %llu off-node",
                         c->algo, r, (unsigned long long)rep.rank_sent_off[r]);
            cr_assert_eq(rep.rank_recv_off[r], rep.rank_sent_off[r]);
        } else if (r == 0) {
            cr_assert_eq((double)(rep.rank_sent_off[r] + rep.rank_recv_off[r]), rep.niters * 4.0 * b.inter_words,
                         "%s: the root moved %llu bytes off its node, bound %.0f words", c->algo,
                         (unsigned long long)(rep.rank_sent_off[r] + rep.rank_recv_off[r]), b.inter_words);
        }
    }
    int groups = rail ? c->G : 1;
    if (!topka)
        cr_assert_eq(off_total, (uint64_t)groups * 2 * (uint64_t)(N - 1) * 8 * kk * (uint64_t)rep.niters);
    for (int it = 0; it < rep.niters; it++)
        cr_assert_eq(inter_bytes(&rep, it, 0), 4.0 * b.inter_words, "%s: %.0f bytes between nodes, bound %.0f words",
                     c->algo, inter_bytes(&rep, it, 0), b.inter_words);
    /* the run reports the whole: every phase's volume, intra + inter */
    cr_assert(rep.bound.known);
    cr_assert_eq(rep.bound.words, b.intra_words + b.inter_words);
    cr_assert_eq((double)sp_report_iter_volume(&rep, 0), 4.0 * rep.bound.words);
    sp_report_free(&rep);
}

ParameterizedTestParameters(node_aware, data_dependent_volumes)
{
    static struct form_case c[] = {{"rail:topkdsa", 16, 8},  {"leader:topkdsa", 12, 4}, {"rail:oktopk", 16, 8},
                                   {"leader:oktopk", 12, 4}, {"rail:gaussiank", 12, 4}, {"leader:gaussiank", 16, 8}};
    return cr_make_param_array(struct form_case, c, sizeof c / sizeof c[0]);
}

/* the node phases exactly; between nodes X's own bound on its group:
 * TopkDSA within [4k'(N-1)/N, (2k'+n')(N-1)/N], Ok-Topk within 6k''(N-1)/N
 * + 10% (k'' its largest selected count, as tests/test_oktopk.c holds it),
 * Gaussian-k within 2k''(N-1) (the counts aside) */
ParameterizedTest(struct form_case *c, node_aware, data_dependent_volumes)
{
    uint64_t n = 19200;
    sp_report rep = run_volume(c->algo, c->P, c->G, n, 0.02, 3);
    sp_node_bound b;
    cr_assert_eq(sp_node_bound_volume(c->algo, c->P, c->G, n, rep.k, &b), 0);
    check_intra(&rep, c->algo, c->P, c->G, n, &b);
    double N = c->P / c->G;
    int loc = -1, tot = -1;
    for (int i = 0; i < rep.nstats; i++) {
        if (!strcmp(rep.stat_names[i], strstr(c->algo, "oktopk") ? "local_selected" : "selected"))
            loc = i;
        if (!strcmp(rep.stat_names[i], "global_total"))
            tot = i;
    }
    for (int it = strstr(c->algo, "oktopk") ? 1 : 0; it < rep.niters; it++) {
        double words = inter_bytes(&rep, it, 1) / 4.0;
        if (strstr(c->algo, "topkdsa")) {
            cr_assert(words >= b.inter_floor_words && words <= b.inter_words, "%s: %.0f words outside [%.0f, %.0f]",
                      c->algo, words, b.inter_floor_words, b.inter_words);
            continue;
        }
        cr_assert_geq(loc, 0);
        double kp = rep.iters[it].stat_max[loc];
        if (tot >= 0 && rep.iters[it].stat_max[tot] > kp)
            kp = rep.iters[it].stat_max[tot];
        double bound = strstr(c->algo, "oktopk") ? 1.1 * 6.0 * kp * (N - 1) / N : 2.0 * kp * (N - 1);
        cr_assert(words <= bound, "%s iteration %d: %.0f words > %.0f (k'' = %.0f)", c->algo, it, words, bound, kp);
        cr_assert_gt(words, 0);
    }
    sp_report_free(&rep);
}

/* the formulas themselves, at a glance */
Test(node_aware, closed_forms)
{
    sp_node_bound b;
    cr_assert_eq(sp_node_bound_volume("rail:oktopk", 64, 8, 8000, 800, &b), 0);
    cr_assert_eq(b.N, 8);
    cr_assert_float_eq(b.intra_words, 2.0 * 8000 * 7 / 8, 1e-9);
    cr_assert_float_eq(b.inter_words, 6.0 * 100 * 7 / 8, 1e-9); /* k/G = 100 on N = 8 */
    cr_assert_eq(sp_node_bound_volume("leader:topka", 64, 8, 8000, 800, &b), 0);
    cr_assert_float_eq(b.intra_words, 2.0 * 8000 * 3, 1e-9);
    cr_assert_float_eq(b.inter_words, 2.0 * 800 * 7, 1e-9);
    cr_assert_neq(sp_node_bound_volume("oktopk", 64, 8, 8000, 800, &b), 0);
    cr_assert_neq(sp_node_bound_volume("rail:oktopk", 60, 8, 8000, 800, &b), 0);
}

/* ---- on a model workload --------------------------------------------------- */

ParameterizedTestParameters(node_aware, a_model_moves_what_exact_data_moves)
{
    static struct form_case c[] = {{"rail:topka", 16, 8},  {"leader:topka", 16, 8}, {"rail:gtopk", 12, 4},
                                   {"rail:oktopk", 16, 8}, {"leader:oktopk", 12, 4}, {"rail:topkdsa", 16, 8}};
    return cr_make_param_array(struct form_case, c, sizeof c / sizeof c[0]);
}

#define MODEL_ITERS 3

/* an iteration's volume, in all and between nodes */
static void all_inter(const sp_report *r, int it, double *all, double *inter)
{
    *all = (double)sp_report_iter_volume(r, it);
    *inter = inter_bytes(r, it, 0);
}

static void volumes_of(const sp_plan *p, double *all, double *inter)
{
    t_child_pairs(p, MODEL_ITERS, all_inter, all, inter);
}

/* the forms on a model (X's ranks are the nodes; under rail each rail has a
 * model of its shard): TopkA and gTop-k move exactly the bytes of an exact
 * run, inside and between nodes; the data-dependent ones within 10%, the
 * model's own tolerance against exact runs (test_model.py), which holds here
 * although the model stands in for a node's sum of G gradients by one rank's
 * gradient (7-10% more between nodes in the cold first iteration) */
ParameterizedTest(struct form_case *c, node_aware, a_model_moves_what_exact_data_moves)
{
    sp_plan p = plan_of(c->algo, c->P, c->G, 960000, 0.01, MODEL_ITERS);
    snprintf(p.device, sizeof p.device, "none");
    double ve[MODEL_ITERS], ie[MODEL_ITERS], vm[MODEL_ITERS], im[MODEL_ITERS];
    volumes_of(&p, ve, ie);
    p.payload = SP_PAYLOAD_MODEL;
    volumes_of(&p, vm, im);
    int fixed = strstr(c->algo, "topka") || strstr(c->algo, "gtopk");
    double tol = fixed ? 0 : 0.10;
    for (int it = 0; it < MODEL_ITERS; it++) {
        cr_assert(fabs(vm[it] / ve[it] - 1) <= tol, "%s iteration %d: model %.0f bytes, exact %.0f", c->algo, it,
                  vm[it], ve[it]);
        cr_assert(fabs(im[it] / ie[it] - 1) <= tol, "%s iteration %d: between nodes model %.0f, exact %.0f", c->algo,
                  it, im[it], ie[it]);
    }
}

/* ---- refusals -------------------------------------------------------------- */

Test(node_aware, refusals)
{
    const char *dir = t_tmpdir();
    const char *out = t_path(dir, "out");
    const char *a1[] = {"run", "--algo", "rail:oktopk", "--ranks", "16", "--n", "16K", "--out", out, NULL};
    t_refused(a1, "--algo rail:oktopk needs ranks on nodes: a platform with nodes or --gpus-per-node G");
    const char *a2[] = {"run", "--algo", "leader:ring", "--ranks", "16", "--gpus-per-node", "8", "--out", out, NULL};
    t_refused(a2, "node-aware forms are of sparse algorithms, and ring is dense");
    const char *a3[] = {"run",  "--algo", "rail:topka", "--ranks", "16",  "--gpus-per-node",
                        "8",    "--n",    "1000",       "--density", "0.005", "--out", out, NULL};
    t_refused(a3, "selects k / G = 5 / 8 = 0 entries");
    const char *a4[] = {"run", "--algo", "leader:gaussiank", "--ranks", "16", "--gpus-per-node", "8", "--payload",
                        "size", "--out", out, NULL};
    t_refused(a4, "leader:gaussiank needs exact payloads or a model workload");
    const char *a5[] = {"run", "--algo", "rail:nosuch", "--ranks", "16", "--gpus-per-node", "8", "--out", out, NULL};
    t_refused(a5, "unknown algorithm 'rail:nosuch'");
    char *left = t_read_file(t_path(out, "summary.json"), NULL);
    cr_assert_null(left, "a refused run wrote its summary");
}
