/* test_zen.c - the ZEN-style hashed synchronisation (algorithms/zen.c): the
 * exact result equals the sum of the ranks' local top-k computed here the
 * plain way, for P = 2..7 in both forms and both encodings; the hash gives
 * every owner an even share and an even load, as it promises; the volume
 * stays under the facts table's bound; a model payload moves what exact data
 * moves; bad options are refused. */
#include "helpers.h"
#include "analysis/bounds.h"
#include "sim/driver/run.h"
#include "sim/workload/generator.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the reference: each rank's exact top-k, summed; residual kept ------- */

/* the last iteration's sum of the P local top-k, with error feedback */
static void reference(const sp_plan *p, uint64_t k, double *ref, double *scale)
{
    uint64_t n = p->n;
    int P = p->ranks;
    struct sp_generator *gen = t_generator(p);
    float *acc = calloc(n * (size_t)P, sizeof *acc);
    int32_t *order = malloc(n * sizeof *order);
    for (int it = 0; it < p->iters; it++) {
        memset(ref, 0, n * sizeof *ref);
        memset(scale, 0, n * sizeof *scale);
        for (int r = 0; r < P; r++) {
            float *a = acc + (size_t)r * n;
            sp_generator_fill(gen, r, it, a, 1);
            for (uint64_t i = 0; i < n; i++)
                order[i] = (int32_t)i;
            t_sort_by_magnitude(order, n, a);
            for (uint64_t j = 0; j < k; j++) {
                ref[order[j]] += a[order[j]];
                scale[order[j]] += fabs(a[order[j]]);
                a[order[j]] = 0;
            }
        }
    }
    free(acc);
    free(order);
    sp_generator_free(gen);
}

struct zcase {
    int P, form;
    double bitmap_at;
};

ParameterizedTestParameters(zen, exact_result_equals_the_reference)
{
    static struct zcase c[] = {
        {2, 0, 1.0 / 32}, {3, 0, 1.0 / 32}, {4, 0, 1.0 / 32}, {5, 0, 1.0 / 32}, {6, 0, 1.0 / 32}, {7, 0, 1.0 / 32},
        {2, 1, 1.0 / 32}, {3, 1, 1.0 / 32}, {4, 1, 1.0 / 32}, {5, 1, 1.0 / 32}, {6, 1, 1.0 / 32}, {7, 1, 1.0 / 32},
        {5, 0, 0},        {5, 0, 2},        {7, 1, 0},        {7, 1, 2}, /* always bitmaps, never bitmaps */
    };
    return cr_make_param_array(struct zcase, c, sizeof c / sizeof c[0]);
}

static int stat_id(const sp_report *rep, const char *name)
{
    for (int s = 0; s < rep->nstats; s++)
        if (!strcmp(rep->stat_names[s], name))
            return s;
    cr_assert_fail("no stat %s", name);
    return -1;
}

ParameterizedTest(struct zcase *c, zen, exact_result_equals_the_reference)
{
    sp_plan p;
    t_plan(&p, "zen", c->P, 1000 + (uint64_t)c->P /* not a multiple of P */, 0.03);
    p.iters = 3;
    p.seed = 7;
    p.opts.zen_form = c->form;
    p.opts.zen_bitmap_at = c->bitmap_at;
    sp_report rep = t_run_ok(&p);
    cr_assert_not_null(rep.result);
    double *ref = malloc(p.n * sizeof *ref), *scale = malloc(p.n * sizeof *scale);
    reference(&p, rep.k, ref, scale);
    int nonzero = 0;
    for (uint64_t i = 0; i < p.n; i++) {
        cr_assert(fabs(rep.result[i] - ref[i]) <= 1e-5 * scale[i] + 1e-7, "P=%d form %d: result[%llu] = %.9g, want %.9g",
                  c->P, c->form, (unsigned long long)i, rep.result[i], ref[i]);
        nonzero += rep.result[i] != 0;
    }
    cr_assert_gt(nonzero, 0);
    /* the encodings the rule asks for were the ones used */
    int pb = stat_id(&rep, "push_bitmaps"), qb = stat_id(&rep, "pull_bitmaps"), ow = stat_id(&rep, "owners");
    sp_iter_stats *last = &rep.iters[rep.niters - 1];
    int m = sp_zen_owners(c->P, c->form, 0);
    cr_assert_eq(last->stat_max[ow], m);
    if (c->bitmap_at == 0) {
        cr_assert_eq(last->stat_min[qb], m, "every owner's set travels as a bitmap");
    } else if (c->bitmap_at > 1) {
        cr_assert_eq(last->stat_max[qb], 0);
        cr_assert_eq(last->stat_max[pb], 0);
    }
    free(ref);
    free(scale);
    sp_report_free(&rep);
}

/* ---- the hash ----------------------------------------------------------- */

/* every owner holds floor(n/m) or ceil(n/m) indices; every index has one
 * owner; a contiguous hot range and a strided column spread evenly */
Test(zen, the_hash_balances_shares_and_loads)
{
    uint64_t ns[] = {1000, 1003, 65537};
    int ms[] = {1, 2, 3, 7, 8, 13, 64};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ms / sizeof ms[0]; b++) {
            uint64_t n = ns[a];
            int m = ms[b];
            uint64_t *cnt = calloc((size_t)m, sizeof *cnt), sum = 0;
            for (uint64_t i = 0; i < n; i++) {
                int o = sp_zen_owner_of(n, m, i);
                cr_assert(o >= 0 && o < m);
                cnt[o]++;
            }
            for (int o = 0; o < m; o++) {
                cr_assert_eq(cnt[o], sp_zen_share(n, m, o), "n=%llu m=%d owner %d", (unsigned long long)n, m, o);
                cr_assert(cnt[o] == n / (uint64_t)m || cnt[o] == n / (uint64_t)m + 1);
                sum += cnt[o];
            }
            cr_assert_eq(sum, n);
            free(cnt);
        }
    /* loads: a hot range [5000, 9000) and a column (stride 64) over 64 owners */
    uint64_t n = 1 << 20;
    int m = 64;
    uint64_t hot[64] = {0}, col[64] = {0};
    for (uint64_t i = 5000; i < 9000; i++)
        hot[sp_zen_owner_of(n, m, i)]++;
    for (uint64_t i = 3; i < n; i += 64)
        col[sp_zen_owner_of(n, m, i)]++;
    double mean = (double)(n / 64) / m;
    for (int o = 0; o < m; o++) {
        cr_assert(hot[o] >= 4000 / 64 - 1 && hot[o] <= 4000 / 64 + 2, "hot range: owner %d has %llu", o,
                  (unsigned long long)hot[o]);
        /* a uniform owner per row: binomial(16384, 1/64), sd 16; 5 sd */
        cr_assert(fabs((double)col[o] - mean) <= 5 * sqrt(mean), "column: owner %d has %llu of mean %.0f", o,
                  (unsigned long long)col[o], mean);
    }
}

/* in a run, the owners' reduced sets are even: the largest within 15% of
 * the mean, although the generator's large entries cluster in hot layers */
Test(zen, owners_loads_are_balanced_in_a_run)
{
    sp_plan p;
    t_plan(&p, "zen", 16, 200000, 0.01);
    p.iters = 2;
    sp_report rep = t_run_ok(&p);
    int s = stat_id(&rep, "reduced_nnz");
    double mx = 0, sum = 0;
    for (int r = 0; r < 16; r++) {
        double v = rep.stat_last[s * rep.nranks + r];
        sum += v;
        mx = v > mx ? v : mx;
    }
    cr_assert_gt(sum, 0);
    cr_assert(mx <= 1.15 * sum / 16, "largest owner %.0f, mean %.0f", mx, sum / 16);
    sp_report_free(&rep);
}

/* ---- volume against the bound ------------------------------------------- */

Test(zen, volume_within_the_bound)
{
    int Ps[] = {3, 8};
    for (int a = 0; a < 2; a++) {
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            sp_plan p;
            t_plan(&p, "zen", Ps[a], 30000, 0.02);
            p.iters = 2;
            sp_report rep;
            sp_error e;
            if (sp_run(&p, &rep, &e) != 0)
                _exit(3);
            sp_bound b;
            if (sp_facts_bound(sp_algo_facts_find("zen"), Ps[a], p.n, rep.k, &b) != 0)
                _exit(5);
            for (int it = 0; it < rep.niters; it++) {
                double words = (double)sp_report_iter_volume(&rep, it) / 4.0;
                /* counts (4 bytes an entry, Bruck) aside: P words each way at most */
                if (words > b.words + 4.0 * Ps[a])
                    _exit(4);
            }
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "P=%d: status %d", Ps[a], WEXITSTATUS(st));
    }
}

/* ---- model payloads ------------------------------------------------------ */

#define MITERS 3

/* an iteration's volume and time */
static void vol_time(const sp_report *r, int it, double *vol, double *time)
{
    *vol = (double)sp_report_iter_volume(r, it);
    *time = r->iters[it].t_end - r->iters[it].t_start;
}

static void measure(const sp_plan *p, double *vol, double *time) { t_child_pairs(p, MITERS, vol_time, vol, time); }

ParameterizedTestParameters(zen, a_model_moves_what_exact_data_moves)
{
    static struct zcase c[] = {{8, 0, 1.0 / 32}, {16, 0, 1.0 / 32}, {16, 1, 1.0 / 32}};
    return cr_make_param_array(struct zcase, c, sizeof c / sizeof c[0]);
}

/* volume and time per iteration within 15% (the tolerance of the issue's
 * check at P = 8..128; bench/model_vs_exact.py runs it at paper sizes) */
ParameterizedTest(struct zcase *c, zen, a_model_moves_what_exact_data_moves)
{
    sp_plan p;
    t_plan(&p, "zen", c->P, 400000, 0.01);
    p.iters = MITERS;
    p.opts.zen_form = c->form;
    snprintf(p.device, sizeof p.device, "none");
    double ve[MITERS], te[MITERS], vm[MITERS], tm[MITERS];
    measure(&p, ve, te);
    p.payload = SP_PAYLOAD_MODEL;
    measure(&p, vm, tm);
    for (int it = 0; it < MITERS; it++) {
        cr_assert(fabs(vm[it] / ve[it] - 1) <= 0.15, "P=%d iteration %d: model %.0f bytes, exact %.0f", c->P, it, vm[it],
                  ve[it]);
        cr_assert(fabs(tm[it] / te[it] - 1) <= 0.15, "P=%d iteration %d: model %.6f s, exact %.6f", c->P, it, tm[it],
                  te[it]);
    }
}

/* ---- node-aware forms ------------------------------------------------------ */

/* a run's last result, from a child (SimGrid starts once per process) */
static float *result_of(const sp_plan *p)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        sp_report rep;
        sp_error e;
        int ok = sp_run(p, &rep, &e) == 0 && rep.result;
        ssize_t w = write(fd[1], &ok, sizeof ok);
        for (uint64_t at = 0; ok && w > 0 && at < p->n; at += 1024) {
            size_t len = (p->n - at < 1024 ? p->n - at : 1024) * sizeof(float);
            w = write(fd[1], rep.result + at, len) == (ssize_t)len;
        }
        _exit(w > 0 ? 0 : 1);
    }
    close(fd[1]);
    int ok = 0;
    cr_assert_eq(read(fd[0], &ok, sizeof ok), (ssize_t)sizeof ok);
    cr_assert(ok, "%s: the run failed", p->algo);
    float *r = malloc(p->n * sizeof *r);
    size_t want = p->n * sizeof *r, got = 0;
    while (got < want) {
        ssize_t k = read(fd[0], (char *)r + got, want - got);
        cr_assert_gt(k, 0);
        got += (size_t)k;
    }
    close(fd[0]);
    waitpid(pid, NULL, 0);
    return r;
}

/* rail:zen and leader:zen deliver what rail:topkdsa and leader:topkdsa do
 * (both forms sum a node's gradients, then X delivers every selected
 * entry among the nodes; TopkDSA's forms are checked in test_node_aware) */
Test(zen, node_aware_forms_deliver_what_topkdsa_forms_do)
{
    const char *forms[][2] = {{"rail:zen", "rail:topkdsa"}, {"leader:zen", "leader:topkdsa"}};
    for (int f = 0; f < 2; f++) {
        sp_plan p;
        t_plan(&p, forms[f][0], 12, 6000, 0.02);
        p.gpus_per_node = 4;
        p.iters = 2;
        p.seed = 11;
        float *a = result_of(&p);
        snprintf(p.algo, sizeof p.algo, "%s", forms[f][1]);
        float *b = result_of(&p);
        int nonzero = 0;
        for (uint64_t i = 0; i < p.n; i++) {
            cr_assert(fabsf(a[i] - b[i]) <= 1e-5f * (fabsf(b[i]) + 1e-3f), "%s: result[%llu] %.9g, %s %.9g", forms[f][0],
                      (unsigned long long)i, a[i], forms[f][1], b[i]);
            nonzero += a[i] != 0;
        }
        cr_assert_gt(nonzero, 0);
        free(a);
        free(b);
    }
}

/* ---- bad input ----------------------------------------------------------- */

Test(zen, bad_options_are_refused)
{
    const char *dir = t_tmpdir();
    const char *a1[] = {"run", "--algo", "zen", "--zen-form", "star", "--out", dir, NULL};
    t_refused(a1, "zen-form");
    const char *a2[] = {"run", "--algo", "zen", "--zen-bitmap-at", "-1", "--out", dir, NULL};
    t_refused(a2, "zen-bitmap-at");
    const char *a3[] = {"run", "--algo", "zen", "--zen-owners", "x", "--out", dir, NULL};
    t_refused(a3, "zen-owners");
}
