/* node_aware.c - node-aware forms of a sparse allreduce X (node_aware.h).
 *
 * Ranks are GPUs on nodes of G: rank r is local rank j = r mod G of node
 * r / G, and N = P / G nodes.  Links inside a node (NVLink) are fast, the
 * NIC between nodes is slow, so both forms move dense data only inside a
 * node and let X cross the nodes on N ranks instead of P.
 *
 * rail:X
 *   node-reduce-scatter  a ring among the node's G ranks (G - 1 steps):
 *                        local rank j ends with the node's sum on shard j,
 *                        entries floor(j n / G) .. floor((j+1) n / G) - 1
 *   X's phases           X among rail j (ranks j, j + G, ...: one per node)
 *                        on shard j's n_j entries, selecting k_j = floor(k / G)
 *                        (the driver refuses k / G = 0)
 *   node-allgather       a ring among the node's ranks: every rank gets the
 *                        result shards of the others
 * Volume inside a node, per rank: the reduce-scatter sends every shard but
 * its own once and the allgather every shard but its right neighbour's:
 * 2(G-1)/G n words when G divides n.  Between nodes: X's own at (N, n_j, k_j).
 *
 * leader:X
 *   node-reduce          a binomial tree to local rank 0 (the mirror of
 *                        sp_bcast's tree): ceil(log2 G) rounds, every rank
 *                        but the leader sends its (partial) vector once
 *   X's phases           X among the leaders (ranks 0, G, 2G, ...) on all n
 *                        entries with k selected
 *   node-bcast           sp_bcast of the result from the leader
 * Volume inside a node: the leader receives ceil(log2 G) vectors and sends as
 * many, 2n ceil(log2 G) words.  Between nodes: X's own at (N, n, k).
 *
 * Error feedback (algorithm.h's contract over the whole run): what a rank
 * hands to the shard's owner (rail) or to its leader leaves its acc, zeroed
 * as it is sent, and lives on in the owner's acc, which then follows X's
 * contract on its shard (rail) or on the whole vector (leader).  So the sum
 * over ranks of residual + result is the sum of the inputs exactly when X
 * keeps it among N ranks (gTop-k's published rule does not for N >= 3).
 * The residual thus gathers on the owners: under rail on local rank j for
 * shard j, under leader on local rank 0 for every entry.
 */
#include "node_aware.h"
#include "collectives.h"

#include <stdlib.h>
#include <string.h>

#define TAG_NODE_RS 700
#define TAG_NODE_AG 701
#define TAG_NODE_REDUCE 702
#define TAG_NODE_BCAST 703

uint64_t sp_shard_lo(uint64_t n, int G, int j) { return n * (uint64_t)j / (uint64_t)G; }

uint64_t sp_rail_k(uint64_t k, int G) { return k / (uint64_t)G; }

/* the node's ring reduce-scatter: in step s, local rank j sends its partial
 * sum of shard (j - s - 1) mod G to the right and adds the left's partial sum
 * of shard (j - s - 2) mod G; after G - 1 steps shard j holds the node's sum.
 * Every shard sent is zeroed (it now lives on its owner).  `tmp` holds the
 * largest shard; acc NULL: sizes only. */
static int node_reduce_scatter(sp_ctx *c, float *acc, uint64_t n, float *tmp)
{
    int G = sp_size(c), j = sp_rank(c);
    for (int s = 0; s < G - 1; s++) {
        int sb = (j - s - 1 + 2 * G) % G, rb = (j - s - 2 + 2 * G) % G;
        uint64_t slo = sp_shard_lo(n, G, sb), sn = sp_shard_lo(n, G, sb + 1) - slo;
        uint64_t rlo = sp_shard_lo(n, G, rb), rn = sp_shard_lo(n, G, rb + 1) - rlo;
        sp_req *q[2] = {sp_isend(c, (j + 1) % G, TAG_NODE_RS, acc ? acc + slo : NULL, sn * sizeof(float)),
                        sp_irecv(c, (j - 1 + G) % G, TAG_NODE_RS, acc ? tmp : NULL, rn * sizeof(float))};
        size_t got[2];
        int rc = sp_waitall(c, q, 2, got);
        if (rc)
            return rc;
        if (got[1] != rn * sizeof(float))
            return SP_ERR_TRUNC;
        if (acc) {
            memset(acc + slo, 0, sn * sizeof(float));
            for (uint64_t i = 0; i < rn; i++)
                acc[rlo + i] += tmp[i];
        }
        sp_compute(c, SP_K_DENSE_SUM, (double)rn);
    }
    return SP_OK;
}

/* the node's ring allgather of result shards: in step s, local rank j sends
 * shard (j - s) mod G to the right and receives shard (j - s - 1) mod G */
static int node_allgather(sp_ctx *c, float *result, uint64_t n)
{
    int G = sp_size(c), j = sp_rank(c);
    for (int s = 0; s < G - 1; s++) {
        int sb = (j - s + G) % G, rb = (j - s - 1 + 2 * G) % G;
        uint64_t slo = sp_shard_lo(n, G, sb), sn = sp_shard_lo(n, G, sb + 1) - slo;
        uint64_t rlo = sp_shard_lo(n, G, rb), rn = sp_shard_lo(n, G, rb + 1) - rlo;
        sp_req *q[2] = {sp_isend(c, (j + 1) % G, TAG_NODE_AG, result ? result + slo : NULL, sn * sizeof(float)),
                        sp_irecv(c, (j - 1 + G) % G, TAG_NODE_AG, result ? result + rlo : NULL, rn * sizeof(float))};
        size_t got[2];
        int rc = sp_waitall(c, q, 2, got);
        if (rc)
            return rc;
        if (got[1] != rn * sizeof(float))
            return SP_ERR_TRUNC;
    }
    return SP_OK;
}

/* the node's binomial-tree reduce to local rank 0, sp_bcast's tree run
 * backwards: for mask = 2^(ceil(log2 G) - 1) down to 1, ranks in
 * [mask, 2 mask) send their partial sum to rank - mask (and are done, their
 * acc zeroed), ranks below mask add what rank + mask sends */
static int node_reduce(sp_ctx *c, float *acc, uint64_t n, float *tmp)
{
    int G = sp_size(c), r = sp_rank(c);
    size_t bytes = n * sizeof(float);
    int top = 1;
    while (top < G)
        top <<= 1;
    for (int mask = top >> 1; mask >= 1; mask >>= 1) {
        if (r < mask && r + mask < G) {
            long long got = sp_wait(c, sp_irecv(c, r + mask, TAG_NODE_REDUCE, acc ? tmp : NULL, bytes));
            if (got < 0)
                return (int)got;
            if ((size_t)got != bytes)
                return SP_ERR_TRUNC;
            if (acc)
                for (uint64_t i = 0; i < n; i++)
                    acc[i] += tmp[i];
            sp_compute(c, SP_K_DENSE_SUM, (double)n);
        } else if (r >= mask && r < 2 * mask) {
            long long rc = sp_wait(c, sp_isend(c, r - mask, TAG_NODE_REDUCE, acc, bytes));
            if (rc < 0)
                return (int)rc;
            if (acc)
                memset(acc, 0, bytes);
            return SP_OK;
        }
    }
    return SP_OK;
}

/* enters the node's group (or the rail's, or the leaders'), runs one step */
static int in_group(sp_ctx *c, int first, int stride, int count)
{
    return sp_group_enter(c, first, stride, count) == SP_OK ? SP_OK : SP_ERR_ARG;
}

int sp_rail_form(sp_ctx *c, sp_algo_io *io, sp_algo_run_fn inner)
{
    int G = sp_node_size(c), P = sp_size(c), r = sp_rank(c);
    int node = r / G, j = r % G, N = P / G;
    uint64_t n = io->n, lo = sp_shard_lo(n, G, j), hi = sp_shard_lo(n, G, j + 1);
    int exact = io->acc != NULL;
    float *tmp = exact ? malloc((n / (uint64_t)G + 1) * sizeof *tmp) : NULL;
    if (exact && !tmp)
        return SP_ERR_MEM;
    int rc = in_group(c, node * G, 1, G);
    if (rc == SP_OK) {
        sp_phase(c, "node-reduce-scatter");
        rc = node_reduce_scatter(c, io->acc, n, tmp);
        sp_group_leave(c);
    }
    if (rc == SP_OK && (rc = in_group(c, j, G, N)) == SP_OK) {
        sp_algo_io sub = {.n = hi - lo,
                          .k = sp_rail_k(io->k, G),
                          .acc = exact ? io->acc + lo : NULL,
                          .result = exact ? io->result + lo : NULL,
                          .opts = io->opts};
        rc = inner(c, &sub);
        sp_group_leave(c);
    }
    if (rc == SP_OK && (rc = in_group(c, node * G, 1, G)) == SP_OK) {
        sp_phase(c, "node-allgather");
        rc = node_allgather(c, io->result, n);
        sp_group_leave(c);
    }
    free(tmp);
    return rc;
}

int sp_leader_form(sp_ctx *c, sp_algo_io *io, sp_algo_run_fn inner)
{
    int G = sp_node_size(c), P = sp_size(c), r = sp_rank(c);
    int node = r / G, j = r % G, N = P / G;
    uint64_t n = io->n;
    int exact = io->acc != NULL;
    float *tmp = exact ? malloc((n ? n : 1) * sizeof *tmp) : NULL;
    if (exact && !tmp)
        return SP_ERR_MEM;
    int rc = in_group(c, node * G, 1, G);
    if (rc == SP_OK) {
        sp_phase(c, "node-reduce");
        rc = node_reduce(c, io->acc, n, tmp);
        sp_group_leave(c);
    }
    free(tmp);
    if (rc == SP_OK && j == 0 && (rc = in_group(c, 0, G, N)) == SP_OK) {
        rc = inner(c, io);
        sp_group_leave(c);
    }
    if (rc == SP_OK && (rc = in_group(c, node * G, 1, G)) == SP_OK) {
        sp_phase(c, "node-bcast");
        rc = sp_bcast(c, io->result, n * sizeof(float), 0, TAG_NODE_BCAST);
        sp_group_leave(c);
    }
    return rc;
}
