/* registry.c - the table of algorithms, looked up by name: what each one is
 * (its class) and how it runs.  What is known of it in closed form (bounds,
 * predictions, what it consumes from the residual) is its row of the facts
 * table, analysis/bounds.c, which a test holds against this one. */
#include "algorithm.h"

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
     .exact_extra_bytes = no_extra},
    {.name = "recdoubling",
     .summary = "dense recursive-doubling allreduce",
     .run = sp_recdoubling_allreduce,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra},
    {.name = "rabenseifner",
     .summary = "dense reduce-scatter (recursive halving) + allgather (recursive doubling)",
     .run = sp_rabenseifner_allreduce,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra},
    {.name = "topka",
     .summary = "TopkA: allgather of local exact top-k, summed locally",
     .run = sp_topka,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = topka_extra},
    {.name = "gtopk",
     .summary = "gTop-k: tree reduction keeping the top k at each merge, then broadcast",
     .run = sp_gtopk,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra},
    {.name = "gaussiank",
     .summary = "Gaussian-k: threshold from a normal fit, allgatherv of the selections",
     .run = sp_gaussiank,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = topka_extra},
    {.name = "topkdsa",
     .summary = "TopkDSA (SparCML): sparse reduce-scatter over equal regions, then sparse or dense allgatherv",
     .run = sp_topkdsa,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = dense_extra},
    {.name = "oktopk",
     .summary = "Ok-Topk (Li & Hoefler): balanced split-and-reduce, balancing, allgatherv, threshold reuse",
     .run = sp_oktopk,
     .cls = SP_ALGO_SPARSE,
     .size_only_ok = 0,
     .model_ok = 1,
     .exact_extra_bytes = topka_extra},
    {.name = "nccl-ring",
     .summary = "NCCL's ring: C concurrent channel rings over the nodes' GPUs, one rail per crossing",
     .run = sp_nccl_ring,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = no_extra},
    {.name = "nccl-tree",
     .summary = "NCCL's tree: chains inside nodes, a double binary tree across them, pipelined in chunks",
     .run = sp_nccl_tree,
     .cls = SP_ALGO_DENSE,
     .size_only_ok = 1,
     .model_ok = 1,
     .exact_extra_bytes = nccl_tree_extra},
};

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

const sp_algorithm *sp_algorithm_find(const char *name)
{
    for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
        if (strcmp(algorithms[i].name, name) == 0)
            return &algorithms[i];
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        if (strcmp(hidden[i].name, name) == 0)
            return &hidden[i];
    return NULL;
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
