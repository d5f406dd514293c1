/* nccl_tree.c - NCCL's tree allreduce over nodes of G GPUs: inside a node a
 * chain of its GPUs, across nodes a double binary tree (nccl_topo.h; Sanders,
 * Speck & Traeff, Parallel Computing 2009; NCCL 2.4).  The vector is split
 * over C channels and each channel's part in two halves, one per tree: lane
 * (c, t).  Every lane reduces up to its root and broadcasts back down,
 * pipelined in chunks of at most `nccl_chunk` bytes.
 *
 * Schedule, per rank, diagonal in slots: lane k's chunk j is handled in
 * slot j + lambda, lambda = the rank's height (the lane's greatest depth less
 * the rank's depth) going up and its depth going down, so that a rank takes
 * a chunk in the slot after its children (up) or its parent (down) handled
 * it.  A slot posts the receives of all its lanes, waits for all of them and
 * for all the sends of the slot before (one chunk in flight per lane and
 * direction), then adds (up) and sends on every lane: the hop the closed
 * form prices (analysis/nccl_model.c), a rank's ports sending one slot's
 * transfers at a time.  (Taking the lanes one by one instead, each
 * after its own receives and previous sends, let lane k's send wait on the
 * receives of the lanes before it and share its port with the previous
 * slot's sends of the lanes after it; at dgx-h100 from 12 nodes on the tree
 * then ran up to 2x its form.)  Every wait is for an earlier slot of a
 * neighbour, or for the receives a neighbour posts at the start of this
 * slot, so the schedule cannot deadlock however the two trees cross.  NCCL
 * runs each lane as its own channel (a thread block per channel and tree,
 * src/graph/connect.cc duplicates the channels for tree 1) with
 * NCCL_STEPS buffers per connection; a rank here has no wait for any one
 * of several requests, so its lanes keep in step slot by slot.
 */
#include "algorithm.h"
#include "blocks.h"
#include "nccl_topo.h"

#include <stdlib.h>

#define TAG_UP 1600 /* + lane */
#define TAG_DOWN 1800

typedef struct {
    sp_nccl_lane nb;
    uint64_t off, len, chunk; /* the lane's range of the vector, chunk in floats */
    int nchunks;
    int depth, height; /* hops from the lane's root, and the deepest rank's depth less that */
    sp_req *send[3];
    float *tmp[3];
} tree_lane;

static void chunk_range(const tree_lane *l, int j, uint64_t *off, uint64_t *len)
{
    uint64_t a = (uint64_t)j * l->chunk;
    if (j < 0) {
        *off = *len = 0;
        return;
    }
    *off = l->off + a;
    *len = a >= l->len ? 0 : (l->len - a < l->chunk ? l->len - a : l->chunk);
}

static int flush_sends(sp_ctx *c, tree_lane *l)
{
    int rc = sp_waitall(c, l->send, 3, NULL);
    for (int i = 0; i < 3; i++)
        l->send[i] = NULL;
    return rc;
}

/* slot sigma of a phase: lane k's chunk sigma - lambda, where there is one */
static int chunk_at(const tree_lane *l, int sigma, int down)
{
    int j = sigma - (down ? l->depth : l->height);
    return j >= 0 && j < l->nchunks ? j : -1;
}

/* slot sigma of the reduce (down = 0) or the broadcast (down = 1): post the
 * receives of every lane, wait for all of them and for every lane's sends of
 * the slot before (one wait: rq holds 3L receives, then 3L sends), then add
 * and send on, lane by lane */
static int tree_slot(sp_ctx *c, tree_lane *ls, int L, int sigma, float *buf, int down, sp_req **rq)
{
    for (int k = 0; k < L; k++) {
        tree_lane *l = &ls[k];
        int j = chunk_at(l, sigma, down);
        uint64_t off, len;
        chunk_range(l, j, &off, &len);
        for (int i = 0; i < 3; i++) {
            rq[3 * k + i] = NULL;
            rq[3 * (L + k) + i] = l->send[i];
            l->send[i] = NULL;
        }
        if (j < 0)
            continue;
        if (down && l->nb.parent >= 0)
            rq[3 * k] = sp_irecv(c, l->nb.parent, TAG_DOWN + k, buf ? buf + off : NULL, len * sizeof(float));
        for (int i = 0; !down && i < l->nb.nkids; i++)
            rq[3 * k + i] = sp_irecv(c, l->nb.kids[i], TAG_UP + k, l->tmp[i], len * sizeof(float));
    }
    int rc = sp_waitall(c, rq, 6 * L, NULL);
    for (int k = 0; k < L && rc == SP_OK; k++) {
        tree_lane *l = &ls[k];
        int j = chunk_at(l, sigma, down);
        uint64_t off, len;
        chunk_range(l, j, &off, &len);
        if (j < 0)
            continue;
        for (int i = 0; !down && i < l->nb.nkids; i++) {
            for (uint64_t e = 0; buf && e < len; e++)
                buf[off + e] += l->tmp[i][e];
            sp_compute(c, SP_K_FUSED_SUM, (double)len); /* NCCL reduces in its running kernel: no launch */
        }
        const float *src = buf ? buf + off : NULL;
        if (!down && l->nb.parent >= 0)
            l->send[0] = sp_isend(c, l->nb.parent, TAG_UP + k, src, len * sizeof(float));
        for (int i = 0; down && i < l->nb.nkids; i++)
            l->send[i] = sp_isend(c, l->nb.kids[i], TAG_DOWN + k, src, len * sizeof(float));
    }
    return rc;
}

static int tree_phase(sp_ctx *c, tree_lane *ls, int L, float *buf, int down)
{
    int slots = 0, rc = SP_OK;
    for (int k = 0; k < L; k++) {
        int last = ls[k].nchunks + (down ? ls[k].depth : ls[k].height);
        slots = last > slots ? last : slots;
    }
    sp_req **rq = malloc((size_t)L * 6 * sizeof *rq);
    if (!rq)
        return SP_ERR_MEM;
    for (int sigma = 0; sigma < slots && rc == SP_OK; sigma++)
        rc = tree_slot(c, ls, L, sigma, buf, down, rq);
    for (int k = 0; k < L; k++) {
        int f = flush_sends(c, &ls[k]);
        rc = rc == SP_OK ? f : rc;
    }
    free(rq);
    return rc;
}

static int lanes_init(sp_ctx *c, sp_algo_io *io, tree_lane *ls, int C, int G)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t chunk = io->opts->nccl_chunk ? io->opts->nccl_chunk / sizeof(float) : SP_NCCL_DEFAULT_CHUNK / 4;
    chunk = chunk ? chunk : 1;
    for (int k = 0; k < 2 * C; k++) {
        tree_lane *l = &ls[k];
        uint64_t coff = sp_block_off(io->n, C, k / 2), clen = sp_block_len(io->n, C, k / 2);
        l->off = coff + sp_block_off(clen, 2, k % 2);
        l->len = sp_block_len(clen, 2, k % 2);
        l->chunk = chunk;
        l->nchunks = (int)((l->len + chunk - 1) / chunk);
        l->nb = sp_nccl_lane_of(P, G, k / 2, k % 2, r);
        l->depth = sp_nccl_lane_depth(P, G, k / 2, k % 2, r);
        l->height = G - 1 + sp_nccl_tree_depth(P / G) - l->depth;
        for (int i = 0; io->result && i < l->nb.nkids; i++)
            if (!(l->tmp[i] = malloc((chunk < l->len ? chunk : l->len) * sizeof(float) + 1)))
                return SP_ERR_MEM;
    }
    return SP_OK;
}

int sp_nccl_tree(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), G = sp_node_size(c);
    if (G < 1 || P % G)
        G = 1; /* a group that is not whole nodes: the flat double tree */
    int C = io->opts->nccl_channels > 0 ? io->opts->nccl_channels : sp_nccl_default_channels(G);
    sp_dense_deliver_all(c, io);
    if (P == 1)
        return SP_OK;
    tree_lane *ls = calloc((size_t)(2 * C), sizeof *ls);
    int rc = ls ? lanes_init(c, io, ls, C, G) : SP_ERR_MEM;
    if (rc == SP_OK) {
        sp_phase(c, "reduce");
        rc = tree_phase(c, ls, 2 * C, io->result, 0);
    }
    if (rc == SP_OK) {
        sp_phase(c, "broadcast");
        rc = tree_phase(c, ls, 2 * C, io->result, 1);
    }
    for (int k = 0; ls && k < 2 * C; k++)
        for (int i = 0; i < 3; i++)
            free(ls[k].tmp[i]);
    free(ls);
    return rc;
}
