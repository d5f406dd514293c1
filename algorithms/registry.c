/* registry.c - the table of algorithms, looked up by name. */
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

static const sp_algorithm algorithms[] = {
    {"ring", "dense ring allreduce (reduce-scatter + allgather)", sp_ring_allreduce, 0, 1, 1, no_extra},
    {"recdoubling", "dense recursive-doubling allreduce", sp_recdoubling_allreduce, 0, 1, 1, dense_extra},
    {"rabenseifner", "dense reduce-scatter (recursive halving) + allgather (recursive doubling)",
     sp_rabenseifner_allreduce, 0, 1, 1, dense_extra},
    {"topka", "TopkA: allgather of local exact top-k, summed locally", sp_topka, 1, 1, 1, topka_extra},
    {"gtopk", "gTop-k: tree reduction keeping the top k at each merge, then broadcast", sp_gtopk, 1, 1, 1, no_extra},
    {"gaussiank", "Gaussian-k: threshold from a normal fit, allgatherv of the selections", sp_gaussiank, 1, 0, 1,
     topka_extra},
    {"topkdsa", "TopkDSA (SparCML): sparse reduce-scatter over equal regions, then sparse or dense allgatherv",
     sp_topkdsa, 1, 0, 1, dense_extra},
    {"oktopk", "Ok-Topk (Li & Hoefler): balanced split-and-reduce, balancing, allgatherv, threshold reuse", sp_oktopk,
     1, 0, 1, topka_extra},
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
    {"selftest-unmatched", "diagnostic: rank 0 waits for a message nobody sends", selftest_unmatched, 0, 1, 1,
     no_extra},
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
