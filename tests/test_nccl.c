/* test_nccl.c - NCCL's dense allreduces (nccl-ring, nccl-tree) on ranks in
 * nodes: their shapes (rings on rails, double binary trees), exact results
 * against the dense reference sum, volumes and times against their closed
 * forms (analysis/nccl_model.c), and the tuner's choice between them. */
#include "helpers.h"
#include "algorithms/nccl_topo.h"
#include "analysis/bounds.h"
#include "sim/driver/resolve.h"
#include "sim/driver/run.h"
#include "topologies/platform.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shapes ---------------------------------------------------------------- */

Test(shapes, trees_are_trees_and_complementary)
{
    for (int N = 1; N <= 70; N++) {
        for (int t = 0; t < 2; t++) {
            int roots = 0, depth = 0;
            for (int v = 0; v < N; v++) {
                int kids[2], nk = sp_nccl_tree_children(N, t, v, kids), h = 0;
                roots += sp_nccl_tree_parent(N, t, v) < 0;
                for (int i = 0; i < nk; i++)
                    cr_assert_eq(sp_nccl_tree_parent(N, t, kids[i]), v, "N=%d tree %d: %d under %d", N, t, kids[i], v);
                for (int u = v; (u = sp_nccl_tree_parent(N, t, u)) >= 0 && h <= N;)
                    h++;
                cr_assert_leq(h, N, "N=%d tree %d: a cycle above %d", N, t, v);
                depth = h > depth ? h : depth;
            }
            cr_assert_eq(roots, 1, "N=%d tree %d", N, t);
            cr_assert_eq(depth, sp_nccl_tree_depth(N), "N=%d tree %d", N, t);
        }
        /* a leaf in one tree is interior in the other; with N odd one node
         * is interior in both */
        int both = 0;
        for (int v = 0; v < N && N > 1; v++) {
            int k[2], a = sp_nccl_tree_children(N, 0, v, k), b = sp_nccl_tree_children(N, 1, v, k);
            cr_assert(a || b, "N=%d: node %d is a leaf in both trees", N, v);
            both += a && b;
        }
        cr_assert_eq(both, N > 1 && N % 2 ? 1 : 0, "N=%d: %d nodes interior in both", N, both);
    }
}

Test(shapes, rings_visit_every_rank_and_cross_on_one_rail)
{
    int cases[][2] = {{16, 8}, {24, 8}, {12, 4}, {8, 1}, {6, 2}, {8, 8}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int P = cases[i][0], G = cases[i][1], N = P / G;
        for (int c = 0; c < 8; c++) {
            int off_rail = 0;
            for (int p = 0; p < P; p++) {
                int r = sp_nccl_ring_rank(P, G, c, p), next = sp_nccl_ring_rank(P, G, c, (p + 1) % P);
                cr_assert_eq(sp_nccl_ring_pos(P, G, c, r), p);
                if (r / G != next / G) {
                    cr_assert_eq(p % G, G - 1, "P=%d G=%d c=%d: the ring leaves a node before its last GPU", P, G, c);
                    off_rail += r % G != next % G;
                }
            }
            /* every crossing on one rail, but the wrap of an odd count of nodes */
            cr_assert_eq(off_rail, N > 1 && N % 2 && G > 1 ? 1 : 0, "P=%d G=%d c=%d", P, G, c);
        }
    }
}

/* ---- exact results ----------------------------------------------------------- */

/* the last iteration's result is the sum of the last iteration's gradients;
 * a dense algorithm leaves no residual, so result_sum is the sum of all of
 * them */
static void assert_dense_sum(const sp_plan *p, const sp_report *rep, const char *what)
{
    cr_assert_not_null(rep->result);
    double *mag, *sum = t_gradient_sum(p, &mag);
    for (uint64_t i = 0; i < p->n; i++)
        cr_assert(fabs(rep->result_sum[i] - sum[i]) <= 1e-5 * mag[i] + 1e-6, "%s: entry %llu: %.9g, want %.9g", what,
                  (unsigned long long)i, rep->result_sum[i], sum[i]);
    free(sum);
    free(mag);
}

struct nccl_case {
    char algo[12];
    int P, G, channels;
    uint64_t chunk;
};

ParameterizedTestParameters(nccl, exact_equals_reference)
{
    static struct nccl_case c[] = {
        {"nccl-ring", 16, 8, 0, 0}, {"nccl-ring", 12, 4, 0, 0}, {"nccl-ring", 8, 1, 0, 0},
        {"nccl-ring", 12, 4, 3, 0}, {"nccl-ring", 16, 8, 11, 0}, {"nccl-tree", 16, 8, 0, 0},
        {"nccl-tree", 12, 4, 0, 0}, {"nccl-tree", 8, 1, 0, 0},   {"nccl-tree", 12, 4, 3, 64},
        {"nccl-tree", 16, 8, 2, 96}, {"nccl-tree", 7, 1, 1, 128}, {"nccl-tree", 4, 4, 0, 0},
    };
    return cr_make_param_array(struct nccl_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct nccl_case *c, nccl, exact_equals_reference)
{
    sp_plan p;
    t_plan(&p, c->algo, c->P, 1000 + (uint64_t)c->P /* not a multiple of P */, 0.01);
    p.gpus_per_node = c->G;
    p.opts.nccl_channels = c->channels;
    p.opts.nccl_chunk = c->chunk;
    p.iters = 2;
    sp_report rep = t_run_ok(&p);
    char what[64];
    snprintf(what, sizeof what, "%s P=%d G=%d", c->algo, c->P, c->G);
    assert_dense_sum(&p, &rep, what);
    sp_report_free(&rep);
}

/* ---- volumes and times on a uniform crossbar --------------------------------- */

/* 1gbe: every route is two 50 us links of 125 MB/s, each host's link its own
 * (split duplex): alpha = 100 us, beta = 8 ns/B, and a rank's concurrent flows
 * share its link, so the one-port form with equal classes applies */
static const sp_link_classes gbe = {100e-6, 1.0 / 125e6, 100e-6, 1.0 / 125e6, 1, 0};

static sp_report run_size(const struct nccl_case *c, uint64_t n)
{
    sp_plan p;
    t_plan(&p, c->algo, c->P, n, 0.01);
    p.payload = SP_PAYLOAD_SIZE;
    p.gpus_per_node = c->G;
    p.opts.nccl_channels = c->channels;
    p.opts.nccl_chunk = c->chunk;
    return t_run_ok(&p);
}

static int phase_id(const sp_report *rep, const char *name)
{
    for (int i = 0; i < rep->nphases; i++)
        if (strcmp(rep->phase_names[i], name) == 0)
            return i;
    cr_assert_fail("no phase %s", name);
    return -1;
}

/* the volume as the accounting counts it, summed over the phases */
static uint64_t volume(const sp_report *rep)
{
    uint64_t v = 0;
    for (int ph = 0; ph < rep->nphases; ph++)
        v += rep->iters[0].phase_volume[ph];
    return v;
}

static double form(const struct nccl_case *c, uint64_t n, const sp_link_classes *l)
{
    sp_nodes nd = {.G = c->G, .channels = c->channels, .chunk_bytes = c->chunk};
    return sp_facts_predict_nodes(sp_algo_facts_find(c->algo), c->P, n, 0, &nd, l);
}

static double words(const struct nccl_case *c, uint64_t n)
{
    sp_nodes nd = {.G = c->G, .channels = c->channels, .chunk_bytes = c->chunk};
    sp_bound b;
    cr_assert_eq(sp_facts_bound_nodes(sp_algo_facts_find(c->algo), c->P, n, 0, &nd, &b), 0);
    return b.words;
}

ParameterizedTestParameters(nccl, ring_volume_and_time_exact)
{
    static struct nccl_case c[] = {
        {"nccl-ring", 16, 8, 0, 0}, {"nccl-ring", 12, 4, 0, 0}, {"nccl-ring", 8, 1, 0, 0},
        {"nccl-ring", 12, 4, 3, 0}, {"nccl-ring", 16, 8, 16, 0}, {"nccl-ring", 8, 8, 0, 0},
    };
    return cr_make_param_array(struct nccl_case, c, sizeof c / sizeof c[0]);
}

/* n a multiple of C x P: every flow of a step is one block of n/(CP) floats */
ParameterizedTest(struct nccl_case *c, nccl, ring_volume_and_time_exact)
{
    int C = c->channels ? c->channels : sp_nccl_default_channels(c->G), P = c->P;
    uint64_t n = (uint64_t)C * (uint64_t)P * 4096;
    sp_report rep = run_size(c, n);
    const char *phases[] = {"reduce-scatter", "allgather"};
    for (int i = 0; i < 2; i++) /* each phase moves n(P-1)/P floats per rank, sent and received */
        cr_assert_eq(rep.iters[0].phase_volume[phase_id(&rep, phases[i])], 4 * n / (uint64_t)P * (uint64_t)(P - 1),
                     "phase %s", phases[i]);
    cr_assert_float_eq(words(c, n) * 4.0, (double)volume(&rep), 1e-6);
    cr_assert_eq(rep.total_msgs, 2ull * (uint64_t)(P - 1) * (uint64_t)P * (uint64_t)C);
    /* off the node: each GPU is the crossing of ceil or floor of C/G channels */
    int N = P / c->G;
    for (int r = 0; c->G > 1 && r < P; r++) {
        uint64_t blocks = rep.rank_sent_off[r] / (4 * n / ((uint64_t)C * (uint64_t)P));
        uint64_t lo = N > 1 ? (uint64_t)(C / c->G) : 0, hi = N > 1 ? (uint64_t)((C + c->G - 1) / c->G) : 0;
        cr_assert(blocks >= lo * 2 * (uint64_t)(P - 1) && blocks <= hi * 2 * (uint64_t)(P - 1),
                  "rank %d sent %llu blocks off its node", r, (unsigned long long)blocks);
    }
    double got = rep.iters[0].t_end - rep.iters[0].t_start, want = form(c, n, &gbe);
    cr_assert(fabs(got - want) <= 1e-9 * want, "P=%d G=%d C=%d: simulated %.12g s, form %.12g s", P, c->G, C, got,
              want);
    /* and the one-class form, with the run's alpha and beta, is the flat ring's */
    cr_assert(fabs(rep.predicted_s - want) <= 1e-12 * want);
    cr_assert(fabs(want - 2.0 * (P - 1) * (100e-6 + 4.0 * (double)(n / (uint64_t)P) / 125e6)) <= 1e-12 * want);
    sp_report_free(&rep);
}

struct tree_time {
    struct nccl_case c;
    uint64_t n;
    double tol;           /* relative */
    char platform[16];    /* empty: 1gbe and the gbe classes; an array, as criterion copies the cases */
};

ParameterizedTestParameters(nccl, tree_volume_and_time)
{
    /* exact where every hop's transfers start together at every port, as
     * the form has them (G = 1 at even N; C = G with chunks pipelined;
     * dgx-h100 at 2 to 8 nodes but 6); elsewhere a rank keeps in step with
     * its own neighbours only, not hop by hop across the job, and a rank
     * whose ports carried less starts its next slot early.  Then a transfer
     * that starts ahead of the others on its port ends before the port's
     * cost (the form overestimates: up to 5.6% here, C = 1 at N = 13), or
     * the early rank's next chunk, not yet expected, holds one of its
     * receiver's gets while a transfer on the critical path waits for one
     * (it underestimates: 0.9% at dgx-h100:16 here, a fixed amount of the
     * fill that does not grow with the chunks).  The tolerances are the
     * measured gaps, rounded up (analysis/nccl_model.c) */
    static struct tree_time c[] = {
        {{"nccl-tree", 16, 1, 0, 0}, 1 << 20, 1e-9, ""},
        {{"nccl-tree", 16, 1, 0, 65536}, 1 << 20, 1e-9, ""},
        {{"nccl-tree", 12, 1, 0, 65536}, 1 << 20, 1e-9, ""},
        {{"nccl-tree", 16, 8, 0, 0}, 65536, 1e-9, ""},
        {{"nccl-tree", 64, 8, 0, 65536}, 1 << 20, 1e-9, ""},
        {{"nccl-tree", 32, 8, 0, 65536}, 1 << 20, 1e-9, ""},
        {{"nccl-tree", 16, 4, 0, 0}, 4 << 20, 1e-9, ""},
        {{"nccl-tree", 12, 4, 0, 0}, 1 << 20, 0.05, ""},
        {{"nccl-tree", 16, 2, 0, 0}, 12288, 0.04, ""},
        {{"nccl-tree", 16, 4, 1, 0}, 65536, 0.055, ""},
        {{"nccl-tree", 13, 1, 0, 0}, 12288, 0.056, ""},
        {{"nccl-tree", 40, 8, 0, 65536}, 1 << 20, 0.015, ""},
        /* rail-optimised DGX H100 nodes: NVLink and NIC ports apart, every
         * tree edge on one rail (no route through the spine); the lanes
         * taken one by one ran the :16 case at 1.28x its form */
        {{"nccl-tree", 64, 8, 0, 65536}, 1 << 20, 1e-9, "dgx-h100:8"},
        {{"nccl-tree", 128, 8, 0, 65536}, 4 << 20, 0.009, "dgx-h100:16"},
    };
    return cr_make_param_array(struct tree_time, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct tree_time *t, nccl, tree_volume_and_time)
{
    const struct nccl_case *c = &t->c;
    sp_link_classes l = gbe;
    sp_report rep;
    if (t->platform[0]) {
        sp_plan p;
        t_plan(&p, c->algo, c->P, t->n, 0.01);
        snprintf(p.platform, sizeof p.platform, "%s", t->platform);
        t_wire_only(&p); /* the platform's own device (h100) would price the reductions */
        p.gpus_per_node = c->G;
        p.opts.nccl_channels = c->channels;
        p.opts.nccl_chunk = c->chunk;
        rep = t_run_ok(&p);
        cr_assert_eq(sp_platform_link_classes(t->platform, &l.intra_alpha, &l.intra_beta, &l.inter_alpha, &l.inter_beta),
                     0);
        l.one_port = 0; /* a GPU's NVLink port and its NIC apart */
    } else
        rep = run_size(c, t->n);
    /* the broadcast mirrors the reduce: each phase is half the form's volume */
    const char *phases[] = {"reduce", "broadcast"};
    for (int i = 0; i < 2; i++) {
        uint64_t v = rep.iters[0].phase_volume[phase_id(&rep, phases[i])];
        cr_assert_float_eq((double)v, 2.0 * words(c, t->n), 1e-6, "phase %s: %llu bytes", phases[i],
                           (unsigned long long)v);
    }
    cr_assert_float_eq((double)volume(&rep), 4.0 * words(c, t->n), 1e-6);
    double got = rep.iters[0].t_end - rep.iters[0].t_start, want = form(c, t->n, &l);
    cr_assert(fabs(got - want) <= t->tol * want, "%s P=%d G=%d C=%d n=%llu: simulated %.12g s, form %.12g s (%.6f)",
              t->platform[0] ? t->platform : "1gbe", c->P, c->G, c->channels, (unsigned long long)t->n, got, want,
              got / want);
    sp_report_free(&rep);
}

/* a double binary tree over N >= 3 single-GPU nodes: every rank receives from
 * two children in its interior tree and sends to one parent in each: n words
 * each way per phase */
Test(nccl, tree_volume_flat)
{
    struct nccl_case c = {"nccl-tree", 16, 1, 0, 0};
    cr_assert_float_eq(words(&c, 4096), 2.0 * 4096, 1e-9);
}

/* ---- the tuner ----------------------------------------------------------------- */

/* NVLink: 1 us, 150 GB/s per direction; NIC: 5 us, 12.5 GB/s (100 Gb/s) */
static const sp_link_classes dgx = {1e-6, 1.0 / 150e9, 5e-6, 1.0 / 12.5e9, 0, 0};

Test(tuner, ring_form_by_hand)
{
    /* P = 16 on 2 nodes of 8, 8 channels, n = 16 x 8 x 1024 floats: b = 1024
     * floats = 4 KiB per flow; a GPU has 1 flow off the node and 7 on NVLink:
     * step = max(5 us + 4096 B / 12.5 GB/s, 1 us + 7 x 4096 B / 150 GB/s)
     *      = max(5.32768 us, 1.191147 us); 30 steps */
    struct nccl_case c = {"nccl-ring", 16, 8, 0, 0};
    double want = 30 * (5e-6 + 4096 / 12.5e9);
    cr_assert_float_eq(form(&c, 16 * 8 * 1024, &dgx), want, 1e-15);
}

Test(tuner, tree_for_small_at_scale_ring_for_large)
{
    /* 4 KiB at P = 1024 (128 nodes): the ring's 2046 steps of at least 5 us
     * (over 10 ms) against the tree's 2(7 + 7) = 28 hops of a few us */
    const char *small = sp_nccl_choose(1024, 8, 1024, &dgx);
    struct nccl_case ring = {"nccl-ring", 1024, 8, 0, 0}, tree = {"nccl-tree", 1024, 8, 0, 0};
    cr_assert_gt(form(&ring, 1024, &dgx), 2046 * 5e-6);
    cr_assert_lt(form(&tree, 1024, &dgx), 28 * 10e-6);
    cr_assert_str_eq(small, "nccl-tree");
    /* 4 GiB at P = 64 (8 nodes): per GPU both send n/8 off the node each
     * way per phase (the ring: one crossing; the tree: two lanes of n/16, two
     * children nodes in one, none in the other), but the tree pays a NIC
     * latency per chunk (512 KiB: 512 per lane) and fills its pipeline over
     * D = 7 + 3 hops; the ring's 126 steps of one 8 MiB block win */
    cr_assert_str_eq(sp_nccl_choose(64, 8, 1ull << 30, &dgx), "nccl-ring");
    struct nccl_case r64 = {"nccl-ring", 64, 8, 0, 0}, t64 = {"nccl-tree", 64, 8, 0, 0};
    double rt = form(&r64, 1ull << 30, &dgx), tt = form(&t64, 1ull << 30, &dgx);
    cr_assert_float_eq(rt, 126 * (5e-6 + 4.0 * (double)(1 << 21) / 12.5e9), 1e-12);
    /* the tree's 2 x 501 middle hops alone, where the NIC carries two chunks */
    cr_assert_gt(tt, 2 * 501 * (5e-6 + 2 * 524288 / 12.5e9));
    cr_assert_lt(tt, 2 * 521 * (5e-6 + 2 * 524288 / 12.5e9));
    /* on two nodes the tree sends half the ring's bytes off the node (one
     * crossing per lane), and wins even at 4 GiB */
    cr_assert_str_eq(sp_nccl_choose(16, 8, 1ull << 30, &dgx), "nccl-tree");
    /* one GPU: both degenerate to flat forms on one class */
    cr_assert_str_eq(sp_nccl_choose(1024, 1, 1024, &gbe), "nccl-tree");
    cr_assert_str_eq(sp_nccl_choose(4, 1, 1 << 24, &gbe), "nccl-ring");
}

/* --algo nccl names the tuner's choice on the platform's own link classes
 * (dgx-h100: NVLink 50 ns and 450 GB/s, NICs 1.13 us and 50 GB/s): the tree
 * for small messages at 8 nodes, the ring for large ones; in a list, next
 * to the names given.  On a platform without nodes it stays "nccl", which
 * the resolution refuses with one line. */
Test(nccl, the_name_nccl_runs_the_tuners_choice)
{
    sp_plan p;
    sp_plan_defaults(&p);
    snprintf(p.platform, sizeof p.platform, "dgx-h100:8");
    snprintf(p.algo, sizeof p.algo, "ring,nccl");
    p.ranks = 64;
    char names[4][64];
    p.n = 2;
    cr_assert_eq(sp_plan_algorithms(&p, names, 4), 2);
    cr_assert_str_eq(names[0], "ring");
    cr_assert_str_eq(names[1], "nccl-tree");
    p.n = 64u << 20;
    sp_plan_algorithms(&p, names, 4);
    cr_assert_str_eq(names[1], "nccl-ring");
    snprintf(p.platform, sizeof p.platform, "1gbe");
    sp_plan_algorithms(&p, names, 4);
    cr_assert_str_eq(names[1], "nccl");
    sp_error e;
    cr_assert_null(sp_resolve_algorithm("nccl", &e));
    cr_assert(strstr(e.msg, "run it on a platform of nodes"), "%s", e.msg);
}

/* ---- NVLS: the NVSwitch reduces and multicasts (nccl-nvls) --------------------- */

struct nvls_case {
    char platform[16];
    int P;
    uint64_t chunk; /* bytes; 0: the default */
    uint64_t n;     /* 0: 1000 + P */
};

ParameterizedTestParameters(nvls, exact_equals_reference)
{
    /* one node and several, one chunk a shard and many (a chunk of 64 bytes
     * is 16 floats: shards of 126 and 127 floats in 8 chunks, the last short) */
    static struct nvls_case c[] = {
        {"dgx-h100:1", 8, 0, 0},   {"dgx-h100:1", 8, 64, 0}, {"dgx-h100:2", 16, 0, 0},
        {"dgx-b200:3", 24, 96, 0}, {"roce:2", 16, 128, 0},   {"dgx-h200:4", 32, 0, 0},
        /* fewer entries than GPUs; one entry over a whole number of chunks a
         * shard (3 of 16 floats): shards without a last chunk push none */
        {"dgx-h100:1", 8, 0, 7},   {"dgx-h100:1", 8, 64, 385}, {"dgx-h100:2", 16, 64, 385},
    };
    return cr_make_param_array(struct nvls_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct nvls_case *c, nvls, exact_equals_reference)
{
    sp_plan p;
    t_plan(&p, "nccl-nvls", c->P, c->n ? c->n : 1000 + (uint64_t)c->P /* not a multiple of P */, 0.01);
    snprintf(p.platform, sizeof p.platform, "%s", c->platform);
    p.opts.nccl_chunk = c->chunk;
    p.iters = 2;
    sp_report rep = t_run_ok(&p);
    char what[64];
    snprintf(what, sizeof what, "%s P=%d", c->platform, c->P);
    assert_dense_sum(&p, &rep, what);
    sp_report_free(&rep);
}

/* a size-only run on cm02 without a device: its time and its volume */
static sp_report nvls_run(const char *platform, int P, uint64_t n, uint64_t chunk)
{
    sp_plan p;
    t_plan(&p, "nccl-nvls", P, n, 0.01);
    snprintf(p.platform, sizeof p.platform, "%s", platform);
    t_wire_only(&p);
    p.opts.nccl_chunk = chunk;
    return t_run_ok(&p);
}

/* dgx-h100:1, n = 1M floats: shards of 128Ki floats = 512 KiB, one chunk
 * each, so the four stages run one after another (nccl_model.c):
 *   reduce: 8 pushes a port (450 GB/s), 64 at the intake (E = 476e9 x 72/14)
 *   sum:    one chunk down the owner's port
 *   push:   one chunk a port, 8 at the intake
 *   spread: 8 copies down each port
 * each after 25 ns of one port.  Exact, by hand and as the form says. */
Test(nvls, one_node_time_exact)
{
    sp_report rep = nvls_run("dgx-h100:1", 8, 1u << 20, 0);
    double c = 524288, B = 450e9, E = 476e9 * 72 / 14, a = 25e-9;
    double want = a + c * fmax(8 / B, 64 / E) + a + c / B + a + c * fmax(1 / B, 8 / E) + a + 8 * c / B;
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, want, want * 1e-9, "simulated %.12g, by hand %.12g", got, want);
    cr_assert_float_eq(rep.predicted_s, want, want * 1e-9);
    /* every GPU pushes n floats and its shard; receives its sum and the n multicast */
    cr_assert_eq(sp_report_iter_volume(&rep, 0), 4 * ((1u << 20) + (1u << 17)));
    sp_report_free(&rep);
}

/* two nodes, one chunk a shard: the reduce, the rail's ring, the multicast,
 * one after another, are the form; volume 2n + the ring's on the shard */
Test(nvls, two_nodes_time_and_volume_exact)
{
    uint64_t n = 1u << 20;
    sp_report rep = nvls_run("dgx-h100:2", 16, n, 0);
    double got = rep.iters[0].t_end - rep.iters[0].t_start;
    cr_assert_float_eq(got, rep.predicted_s, rep.predicted_s * 1e-9, "simulated %.12g, form %.12g", got,
                       rep.predicted_s);
    cr_assert_eq(sp_report_iter_volume(&rep, 0), 4 * (2 * n + 2 * (n / 8 / 2)));
    sp_report_free(&rep);
}

/* many chunks: the rounds overlap, and the form's steady round (G + 1
 * pushes a port, G(G+1) at the intake) holds to within 4% at 16 chunks a
 * shard (measured: 3.2% over; the rounds do not overlap as neatly as the
 * form's) */
Test(nvls, many_chunks_near_form)
{
    sp_report a = nvls_run("dgx-h100:1", 8, 16u << 20, 0);
    double ta = a.iters[0].t_end - a.iters[0].t_start;
    cr_assert(ta >= a.predicted_s && ta <= 1.04 * a.predicted_s, "16 chunks: %g s, form %g s", ta, a.predicted_s);
    sp_report_free(&a);
}

/* and within 0.5% at 256 chunks a shard (1 GiB), where the bus bandwidth
 * comes to the published 476 GB/s that the intake is fitted to, within 1% */
Test(nvls, large_reaches_the_fitted_bus_bandwidth)
{
    sp_report b = nvls_run("dgx-h100:1", 8, 256u << 20, 0);
    double tb = b.iters[0].t_end - b.iters[0].t_start;
    cr_assert(tb >= b.predicted_s && tb <= 1.005 * b.predicted_s, "256 chunks: %g s, form %g s", tb, b.predicted_s);
    double busbw = 4.0 * (256u << 20) / tb * 2 * 7 / 8;
    cr_assert(busbw > 0.99 * 476e9 && busbw < 476e9, "bus bandwidth %g", busbw);
    sp_report_free(&b);
}

/* where the switch does not reduce, or there is no switch: one line, usage */
Test(nvls, refused_without_a_reducing_switch)
{
    const char *where[] = {"alps:2", "1gbe", "daint"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        sp_plan p;
        t_plan(&p, "nccl-nvls", 8, 1024, 0.01);
        snprintf(p.platform, sizeof p.platform, "%s", where[i]);
        sp_report rep;
        sp_error e;
        cr_assert_neq(sp_run(&p, &rep, &e), 0, "%s", where[i]);
        cr_assert_eq(e.status, SP_STATUS_USAGE, "%s", where[i]);
        cr_assert(strstr(e.msg, "needs nodes whose NVSwitch reduces") && !strchr(e.msg, '\n'), "%s: %s", where[i],
                  e.msg);
    }
}

/* the tuner takes NVLS inside one node of H100s for large messages (the
 * intake's 476 GB/s of bus bandwidth beats the ring's 450 on the ports) and
 * for small ones (four hops of a port against the ring's 14 steps), not for
 * a 4 MiB vector (one chunk a shard: its four stages do not overlap), nor
 * across nodes (its stages run one after another), and never on alps.  On B200 the ring on NVLink 5 at
 * line rate (900) beats the intake fitted to NCCL's measured 830: the forms
 * price the wire, not the ring's reductions, which the h100 and b200
 * profiles charge in the run (docs/platforms.md) */
Test(nvls, the_tuner_takes_it_where_it_is_fastest)
{
    sp_plan p;
    sp_plan_defaults(&p);
    snprintf(p.algo, sizeof p.algo, "nccl");
    char names[1][64];
    struct {
        const char *platform;
        int P;
        uint64_t n;
        const char *want;
    } cases[] = {
        {"dgx-h100:1", 8, 256u << 20, "nccl-nvls"}, {"dgx-b200:1", 8, 256u << 20, "nccl-ring"},
        {"dgx-h100:1", 8, 1024, "nccl-nvls"},       {"dgx-h100:1", 8, 1u << 20, "nccl-ring"},
        {"dgx-h100:8", 64, 256u << 20, "nccl-ring"},
        {"alps:1", 4, 256u << 20, "nccl-ring"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(p.platform, sizeof p.platform, "%s", cases[i].platform);
        p.ranks = cases[i].P;
        p.n = cases[i].n;
        cr_assert_eq(sp_plan_algorithms(&p, names, 1), 1);
        cr_assert_str_eq(names[0], cases[i].want, "%s n=%llu", cases[i].platform, (unsigned long long)cases[i].n);
    }
}

/* other jobs' traffic runs between the platform's hosts, not a node's
 * NVSwitch (which only its own node's GPUs reach) */
Test(nvls, background_load_beside_the_switches)
{
    sp_plan p;
    t_plan(&p, "nccl-nvls", 16, 1 << 16, 0.01);
    snprintf(p.platform, sizeof p.platform, "dgx-h100:2");
    char err[200];
    cr_assert_eq(sp_plan_set(&p, "bg-load", "0.3", err, sizeof err), 0, "%s", err);
    sp_report rep = t_run_ok(&p);
    cr_assert_not_null(rep.disturb);
    cr_assert_eq(rep.disturb->bg_hosts, 16, "the 16 GPUs' hosts, not the 2 switches");
    sp_report_free(&rep);
}
