/* registry.c - the table of algorithms, looked up by name: what each one is
 * (its class) and how it runs.  What is known of it in closed form (bounds,
 * predictions, what it consumes from the residual) is its row of the facts
 * table, analysis/bounds.c, which a test holds against this one. */
#include "algorithm.h"
#include "node_aware.h"

#include <stdio.h>
#include <string.h>

static double no_extra(int P, uint64_t n, uint64_t k)
{
    (void)P;
    (void)n;
    (void)k;
    return 0.0;
}

static double dense_extra(int P, uint64_t n, uint64_t k)
{
    (void)k;
    return (double)P * (double)n * 4.0; /* one temporary vector per rank */
}

static double topka_extra(int P, uint64_t n, uint64_t k)
{
    (void)n;
    /* every rank holds all P selections, twice during Bruck's rotation */
    return 2.0 * (double)P * (double)P * (double)k * 8.0;
}

static double onebit_extra(int P, uint64_t n, uint64_t k)
{
    (void)k;
    /* a rank's P messages out, the P of its chunk in, the allgather's P, its
     * server residual: n/8 + n/(8P) x P + n/8 bytes of bits, 4 a scale, 4n/P */
    return (double)P * (0.375 * (double)n + 12.0 * (double)P) + 4.0 * (double)n;
}

static double powersgd_extra(int P, uint64_t n, uint64_t k)
{
    (void)k;
    /* the two buffers out and their sums (the factors and the dense tensors
     * are fewer than n floats: a tensor is compressed only where its factors
     * are smaller than it), the warm start's Q (<= n), a column of doubles
     * (<= 2n), and the dense allreduce's own (NCCL's tree, the largest: 3n) */
    return (double)P * (4.0 * 2.0 * (double)n + 4.0 * (double)n + 8.0 * (double)n + 12.0 * (double)n);
}

static double zen_extra(int P, uint64_t n, uint64_t k)
{
    /* a rank's selection twice and its push out (8k bytes each); the owners'
     * sums (5 bytes an index of a share, n in all); a rank's received pushes
     * and its gathered pull, each at most min(Pk, n) pairs */
    double m = (double)P * (double)k < (double)n ? (double)P * (double)k : (double)n;
    return (double)P * (24.0 * (double)k + 16.0 * m) + 5.0 * (double)n;
}

static double spardl_extra(int P, uint64_t n, uint64_t k)
{
    /* a rank's partial sums (n floats), its blocks in and out, the merges
     * (at most k pairs each) and the gathered result (at most k pairs) */
    return (double)P * (4.0 * (double)n + 6.0 * 8.0 * (double)k);
}

static double nccl_tree_extra(int P, uint64_t n, uint64_t k)
{
    (void)k;
    /* a chunk from each child (at most three) on every lane: the lanes'
     * chunks together are at most n floats */
    return (double)P * 3.0 * (double)n * 4.0;
}

static const sp_algorithm algorithms[] = {
    {.name = "ring",
     .summary = "dense ring allreduce (reduce-scatter + allgather)",
     .run = sp_ring_allreduce,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra,
     .pair_bytes = 4},
    {.name = "recdoubling",
     .summary = "dense recursive-doubling allreduce",
     .run = sp_recdoubling_allreduce,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra,
     .pair_bytes = 4},
    {.name = "rabenseifner",
     .summary = "dense reduce-scatter (recursive halving) + allgather (recursive doubling)",
     .run = sp_rabenseifner_allreduce,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra,
     .pair_bytes = 4},
    {.name = "topka",
     .summary = "TopkA: allgather of local exact top-k, summed locally",
     .run = sp_topka,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = topka_extra,
     .pair_bytes = 4},
    {.name = "gtopk",
     .summary = "gTop-k: tree reduction keeping the top k at each merge, then broadcast",
     .run = sp_gtopk,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra,
     .pair_bytes = 4},
    {.name = "gaussiank",
     .summary = "Gaussian-k: threshold from a normal fit, allgatherv of the selections",
     .run = sp_gaussiank,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = topka_extra,
     .pair_bytes = 20},
    {.name = "topkdsa",
     .summary = "TopkDSA (SparCML): sparse reduce-scatter over equal regions, then sparse or dense allgatherv",
     .run = sp_topkdsa,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra,
     .pair_bytes = 32},
    {.name = "oktopk",
     .summary = "Ok-Topk (Li & Hoefler): balanced split-and-reduce, balancing, allgatherv, threshold reuse",
     .run = sp_oktopk,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = topka_extra,
     .pair_bytes = 40},
    {.name = "nccl-ring",
     .summary = "NCCL's ring: C concurrent channel rings over the nodes' GPUs, one rail per crossing",
     .run = sp_nccl_ring,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra,
     .pair_bytes = 6},
    {.name = "nccl-tree",
     .summary = "NCCL's tree: chains inside nodes, a double binary tree across them, pipelined in chunks",
     .run = sp_nccl_tree,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = nccl_tree_extra,
     .pair_bytes = 10},
    {.name = "onebit",
     .summary = "1-bit allreduce (1-bit Adam/LAMB): sign bits and a scale per chunk, all-to-all, server error "
                "feedback, allgather",
     .run = sp_onebit,
     .cls = SP_ALGO_COMPRESSED,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = onebit_extra,
     .pair_bytes = 45},
    {.name = "qgz",
     .summary = "quantized allreduce as ZeRO++'s qgZ: block-wise INT4, all-to-all in the node then along the rail, "
                "quantized allgather",
     .run = sp_qgz,
     .cls = SP_ALGO_COMPRESSED,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra,
     .pair_bytes = 12},
    {.name = "powersgd",
     .summary = "PowerSGD: each tensor a rank-r product P Q^T by one power iteration, allreduces of P and of Q, "
                "error feedback",
     .run = sp_powersgd,
     .cls = SP_ALGO_COMPRESSED,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = powersgd_extra,
     .pair_bytes = 4},
    {.name = "zen",
     .summary = "ZEN-style hashed synchronisation: hashed balanced owners, push of pairs or bitmaps, one-shot sum "
                "at the owner, pull",
     .run = sp_zen,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = zen_extra,
     .pair_bytes = 90},
    {.name = "spardl",
     .summary = "SparDL: block-wise sparse reduce-scatter keeping k/P a block, teams with Bruck allgathers, global "
                "residual collection",
     .run = sp_spardl,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = spardl_extra,
     .pair_bytes = 16},
};

/* Where the nodes' switch reduces (NVLink SHARP): runnable by name on such
 * platforms, listed apart, not part of "all" (which runs on any platform). */
static const sp_algorithm switch_rows[] = {
    {.name = "nccl-nvls",
     .summary = "NCCL's NVLS: the NVSwitch reduces and multicasts in each node; a ring per rail across nodes",
     .run = sp_nccl_nvls,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra,
     .pair_bytes = 10,
     .needs_switch = 1},
};

const sp_algorithm *sp_algorithm_switch_list(int *count)
{
    *count = (int)(sizeof switch_rows / sizeof switch_rows[0]);
    return switch_rows;
}

/* Diagnostics, runnable by name but not part of "all" or the listings. */
static int selftest_unmatched(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    sp_phase(c, "unmatched");
    if (sp_rank(c) == 0 && sp_size(c) > 1) {
        int v;
        /* nobody sends tag 9999: every backend must end this run with a message, not hang */
        return sp_wait(c, sp_irecv(c, sp_size(c) - 1, 9999, &v, sizeof v)) < 0 ? SP_ERR_COMM : SP_OK;
    }
    return SP_OK;
}

static const sp_algorithm hidden[] = {
    {.name = "selftest-unmatched",
     .summary = "diagnostic: rank 0 waits for a message nobody sends",
     .run = selftest_unmatched,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra},
};

/* ---- node-aware forms (node_aware.c) ---------------------------------------
 * rail:X and leader:X of every sparse row X above.  Their rows are made from
 * X's on first use: the class, size_only_ok and model_ok are X's (on a
 * model, X's ranks are the nodes and each rail has a model of its shard:
 * sim/driver/resolve.c, rail_models).  The
 * run functions need one wrapper per X (the signature carries no X); a test
 * (tests/test_node_aware.c) holds this list against the sparse rows.
 * Exact-mode extras: every rank holds one more vector (at most n floats, the
 * node reduction's receive buffer), and X's own extras at (P, n, k) bound
 * those of X's groups (fewer ranks, no more entries) from above. */
static double node_extra(const char *inner, int P, uint64_t n, uint64_t k)
{
    const sp_algorithm *x = sp_algorithm_find(inner);
    return (double)P * (double)n * 4.0 + (x && x->exact_extra_bytes ? x->exact_extra_bytes(P, n, k) : 0.0);
}

#define NODE_FORMS(x)                                                                                           \
    static int rail_##x(sp_ctx *c, sp_algo_io *io) { return sp_rail_form(c, io, sp_##x); }                     \
    static int leader_##x(sp_ctx *c, sp_algo_io *io) { return sp_leader_form(c, io, sp_##x); }                 \
    static double extra_##x(int P, uint64_t n, uint64_t k) { return node_extra(#x, P, n, k); }

NODE_FORMS(topka)
NODE_FORMS(gtopk)
NODE_FORMS(gaussiank)
NODE_FORMS(topkdsa)
NODE_FORMS(oktopk)
NODE_FORMS(zen)
NODE_FORMS(spardl)

typedef struct {
    const char *inner;
    int (*run[3])(sp_ctx *c, sp_algo_io *io); /* by sp_algo_form: [SP_FORM_RAIL], [SP_FORM_LEADER] */
    double (*extra)(int P, uint64_t n, uint64_t k);
} node_form_runs;

#define NODE_ROW(x) {#x, {NULL, rail_##x, leader_##x}, extra_##x}
static const node_form_runs node_runs[] = {NODE_ROW(topka), NODE_ROW(gtopk), NODE_ROW(gaussiank), NODE_ROW(topkdsa),
                                           NODE_ROW(oktopk), NODE_ROW(zen), NODE_ROW(spardl)};
#define NODE_FORMS_N (sizeof node_runs / sizeof node_runs[0])

static sp_algorithm node_rows[NODE_FORMS_N][3];
static char node_names[NODE_FORMS_N][3][48];
static char node_summaries[NODE_FORMS_N][3][224];

static const char *const form_names[] = {[SP_FORM_FLAT] = "", [SP_FORM_RAIL] = "rail", [SP_FORM_LEADER] = "leader"};

const char *sp_algo_form_name(sp_algo_form form)
{
    return form >= SP_FORM_FLAT && form <= SP_FORM_LEADER ? form_names[form] : "";
}

sp_algo_form sp_algorithm_form_of(const char *name, const char **inner)
{
    for (int f = SP_FORM_RAIL; f <= SP_FORM_LEADER; f++) {
        size_t len = strlen(form_names[f]);
        if (strncmp(name, form_names[f], len) == 0 && name[len] == ':') {
            if (inner)
                *inner = name + len + 1;
            return (sp_algo_form)f;
        }
    }
    if (inner)
        *inner = name;
    return SP_FORM_FLAT;
}

static const sp_algorithm *node_form_find(const char *name)
{
    const char *iname;
    sp_algo_form form = sp_algorithm_form_of(name, &iname);
    if (form == SP_FORM_FLAT)
        return NULL;
    const sp_algorithm *x = NULL;
    for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
        if (strcmp(algorithms[i].name, iname) == 0)
            x = &algorithms[i];
    if (!x || x->cls != SP_ALGO_SPARSE)
        return NULL;
    for (size_t i = 0; i < NODE_FORMS_N; i++) {
        if (strcmp(node_runs[i].inner, x->name) != 0)
            continue;
        sp_algorithm *row = &node_rows[i][form];
        if (!row->name) {
            snprintf(node_names[i][form], sizeof node_names[i][form], "%s:%s", form_names[form], x->name);
            if (form == SP_FORM_RAIL)
                snprintf(node_summaries[i][form], sizeof node_summaries[i][form],
                         "%s per rail on its shard, between a ring reduce-scatter and allgather in each node",
                         x->name);
            else
                snprintf(node_summaries[i][form], sizeof node_summaries[i][form],
                         "%s among the node leaders, between a tree reduce and broadcast in each node", x->name);
            *row = (sp_algorithm){.name = node_names[i][form],
                                  .summary = node_summaries[i][form],
                                  .run = node_runs[i].run[form],
                                  .cls = x->cls,
                                  .size_only_ok = x->size_only_ok,
                                  .model_ok = x->model_ok,
                                  .exact_extra_bytes = node_runs[i].extra,
                                  .pair_bytes = x->pair_bytes, /* its P ranks' at most: it runs among fewer */
                                  .form = form,
                                  .inner = x};
        }
        return row;
    }
    return NULL;
}

const sp_algorithm *sp_algorithm_find(const char *name)
{
    for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
        if (strcmp(algorithms[i].name, name) == 0)
            return &algorithms[i];
    for (size_t i = 0; i < sizeof switch_rows / sizeof switch_rows[0]; i++)
        if (strcmp(switch_rows[i].name, name) == 0)
            return &switch_rows[i];
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        if (strcmp(hidden[i].name, name) == 0)
            return &hidden[i];
    return node_form_find(name);
}

const sp_algorithm *sp_algorithm_list(int *count)
{
    *count = (int)(sizeof algorithms / sizeof algorithms[0]);
    return algorithms;
}

const char *sp_algo_class_name(sp_algo_class cls)
{
    static const char *const names[] = {[SP_ALGO_DENSE] = "dense", [SP_ALGO_SPARSE] = "sparse",
                                        [SP_ALGO_COMPRESSED] = "compressed"};
    return cls >= SP_ALGO_DENSE && cls <= SP_ALGO_COMPRESSED ? names[cls] : "unknown";
}
