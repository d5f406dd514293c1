/* nccl_nvls.c - NCCL's NVLS allreduce: the NVSwitch reduces and multicasts
 * (NVLink SHARP, NVSwitch gen 3 on; NCCL 2.17 on).  Inside a node, GPU j
 * owns shard j of the vector (G shards); every GPU pushes each shard's
 * chunk to the switch, which sends the sum to the shard's owner (NCCL: the
 * owner's multimem.ld_reduce); the owner pushes the reduced chunk back, and
 * the switch multicasts it down every GPU's port (multimem.st).
 *
 * One node: chunk r of every shard is pushed while the owners multicast
 * chunk r-1, so that a GPU's port carries G + 1 chunks a round each way
 * and the switch takes in G(G+1): a round of c floats lasts
 * 4c max((G+1) / port_bw, G(G+1) / nvls_bw) once the pipeline is full
 * (analysis/nccl_model.c prices the fill too).
 *
 * Several nodes (NCCL's NVLSTree runs a tree between the nodes; here the
 * ring, which moves the same 2(N-1)/N of the shard a rank on bandwidth):
 * the in-switch reduce-scatter, the ring allreduce of shard j among the
 * GPUs of rail j (one per node, over their NICs), then the multicast; the
 * three stages run one after another, where NCCL pipelines them, so this
 * is slower than NCCL's by about the two in-node stages.
 *
 * The chunk is --nccl-chunk (nccl-tree's pipeline chunk, 512 KiB unless
 * given).  Error feedback: none, a dense allreduce delivers every entry.
 * Needs a platform whose nodes' switch reduces (sp_node_switch).
 */
#include "algorithm.h"
#include "blocks.h"
#include "nccl_topo.h"

#include <stdlib.h>
#include <string.h>

#define TAG_NVLS 2000 /* + 2 x (shard x chunks + chunk) (+1: the multicast) */

typedef struct {
    float *buf; /* the result vector (NULL: size only) */
    uint64_t n, chunk;
    int G, j, K; /* GPUs, this GPU's shard, chunks of the largest shard */
    sp_req **wait; /* G + 1: the requests of one wait */
} nvls;

static uint64_t shard_off(const nvls *v, int i) { return sp_block_off(v->n, v->G, i); }

/* chunk r of shard i: its length (0 past the shard's end) and its place */
static uint64_t chunk_len(const nvls *v, int i, int r)
{
    uint64_t len = sp_block_len(v->n, v->G, i), a = (uint64_t)r * v->chunk;
    return a >= len ? 0 : (len - a < v->chunk ? len - a : v->chunk);
}

static float *chunk_at(const nvls *v, int i, int r)
{
    return v->buf ? v->buf + shard_off(v, i) + (uint64_t)r * v->chunk : NULL;
}

static int tag_of(const nvls *v, int i, int r, int multicast) { return TAG_NVLS + 2 * (i * v->K + r) + multicast; }

/* chunk r of every shard to the switch, the sum of this GPU's to it: G + 1
 * requests (NULL for an empty chunk: a shard shorter than the largest has
 * none past its end, and every GPU knows it, so none is pushed) */
static void post_reduce(sp_ctx *c, const nvls *v, int r, sp_req **q)
{
    for (int i = 0; i < v->G; i++)
        q[i] = chunk_len(v, i, r) ? sp_switch_push(c, tag_of(v, i, r, 0), chunk_at(v, i, r), chunk_len(v, i, r), v->G, i)
                                  : NULL;
    q[v->G] = chunk_len(v, v->j, r) ? sp_irecv(c, SP_SWITCH, tag_of(v, v->j, r, 0), chunk_at(v, v->j, r),
                                               chunk_len(v, v->j, r) * sizeof(float))
                                    : NULL;
}

static sp_req *post_multicast(sp_ctx *c, const nvls *v, int r)
{
    uint64_t len = chunk_len(v, v->j, r);
    return len ? sp_switch_push(c, tag_of(v, v->j, r, 1), chunk_at(v, v->j, r), len, 1, SP_SWITCH_ALL) : NULL;
}

/* a rank keeps the requests of its last W rounds of multicast (its
 * receives of every shard's chunk, its own push): chunk r's in slot r mod
 * W, so that they stay few however many chunks there are.  Chunk r is
 * multicast in round r + 1 (beside the pushes of r + 1, so it takes the
 * round), copied down in round r + 2, and waited for in round r + 3: a
 * wait one round earlier would hold the pipeline up (it did: 414 us
 * against 265 at n = 16M on one DGX H100 node) */
#define W 4

/* the receives of chunk r of every shard's multicast: G requests in its slot */
static void post_gathers(sp_ctx *c, const nvls *v, int r, sp_req **gather)
{
    sp_req **g = gather + (size_t)(r % W) * v->G;
    for (int i = 0; i < v->G; i++)
        g[i] = chunk_len(v, i, r) ? sp_irecv(c, SP_SWITCH, tag_of(v, i, r, 1), chunk_at(v, i, r),
                                             chunk_len(v, i, r) * sizeof(float))
                                  : NULL;
}

/* waits for round r's multicast receives and this GPU's multicast push */
static int wait_gathers(sp_ctx *c, const nvls *v, int r, sp_req **gather, sp_req **mc)
{
    sp_req **w = v->wait, **g = gather + (size_t)(r % W) * v->G;
    int m = 0;
    for (int i = 0; i < v->G; i++) {
        w[m++] = g[i];
        g[i] = NULL;
    }
    w[m++] = mc[r % W];
    mc[r % W] = NULL;
    return sp_waitall(c, w, m, NULL);
}

/* the reduction of every chunk, pipelined as a GPU's NVLS kernel runs it:
 * a round's pushes go up while the last round's sum comes down, and only
 * once they are in does the next round begin (max-min sharing gives every
 * flow on a port the same rate, so two rounds pushed at once would end
 * together, not one after the other).  With `multicast`, each reduced chunk
 * of this GPU's shard is multicast as soon as it is in, beside the next
 * round's pushes. */
static int reduce_rounds(sp_ctx *c, const nvls *v, int multicast, sp_req **mc, sp_req **gather)
{
    int G = v->G, rc = SP_OK, prev_posted = 0;
    sp_req **q = malloc(2 * (size_t)(G + 1) * sizeof *q);
    if (!q)
        return SP_ERR_MEM;
    for (int r = 0; r <= v->K; r++) {
        sp_req **now = q + (r % 2) * (G + 1), **prev = q + ((r + 1) % 2) * (G + 1);
        if (multicast && r >= W - 1 && r - (W - 1) < v->K) { /* the multicast of W - 1 rounds ago: in by now */
            int w = wait_gathers(c, v, r - (W - 1), gather, mc);
            if (rc == SP_OK)
                rc = w;
        }
        int posted = r < v->K && rc == SP_OK;
        if (posted) {
            if (multicast)
                post_gathers(c, v, r, gather);
            post_reduce(c, v, r, now);
        }
        if (prev_posted) { /* the last round's sum */
            int w = sp_waitall(c, prev + G, 1, NULL);
            if (rc == SP_OK)
                rc = w;
            if (multicast && rc == SP_OK)
                mc[(r - 1) % W] = post_multicast(c, v, r - 1);
        }
        if (posted) { /* this round's pushes; its sum is waited for next round (now, on a failure) */
            int w = sp_waitall(c, now, rc == SP_OK ? G : G + 1, NULL);
            if (rc == SP_OK)
                rc = w;
        }
        prev_posted = posted && rc == SP_OK;
        if (rc != SP_OK)
            break;
    }
    free(q);
    return rc;
}

int sp_nccl_nvls(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), G = sp_node_size(c), r = sp_rank(c);
    sp_dense_deliver_all(c, io);
    if (P == 1)
        return SP_OK;
    if (!sp_node_switch(c) || G < 2 || P % G)
        return SP_ERR_ARG; /* the driver refuses such runs first (sim/driver/resolve.c) */
    uint64_t chunk = (io->opts->nccl_chunk ? io->opts->nccl_chunk : SP_NCCL_DEFAULT_CHUNK) / sizeof(float);
    nvls v = {.buf = io->result, .n = io->n, .chunk = chunk ? chunk : 1, .G = G, .j = r % G};
    uint64_t largest = sp_block_len(io->n, G, 0);
    v.K = (int)((largest + v.chunk - 1) / v.chunk);
    if (v.K < 1)
        v.K = 1;
    int N = P / G, rc = SP_OK;
    sp_req **mc = calloc(W, sizeof *mc), **gather = calloc((size_t)G * W, sizeof *gather);
    v.wait = malloc((size_t)(G + 1) * sizeof *v.wait);
    if (!mc || !gather || !v.wait) {
        free(mc);
        free(gather);
        free(v.wait);
        return SP_ERR_MEM;
    }
    if (N == 1) {
        sp_phase(c, "nvls");
        rc = reduce_rounds(c, &v, 1, mc, gather);
    } else {
        sp_phase(c, "nvls-reduce");
        rc = reduce_rounds(c, &v, 0, NULL, NULL);
        uint64_t len = sp_block_len(io->n, G, v.j);
        float *mine = io->result ? malloc((len ? len : 1) * sizeof *mine) : NULL;
        if (rc == SP_OK && io->result && !mine)
            rc = SP_ERR_MEM;
        if (rc == SP_OK && (rc = sp_group_enter(c, v.j, G, N)) == SP_OK) {
            if (mine)
                memcpy(mine, chunk_at(&v, v.j, 0), len * sizeof *mine);
            sp_algo_io sub = {.n = len, .acc = mine, .result = chunk_at(&v, v.j, 0), .opts = io->opts};
            rc = sp_ring_allreduce(c, &sub); /* its phases: reduce-scatter, allgather */
            sp_group_leave(c);
        }
        free(mine);
        if (rc == SP_OK) /* a round's multicast while the last one's copies come down */
            sp_phase(c, "nvls-multicast");
        for (int k = 0; k <= v.K && rc == SP_OK; k++) {
            if (k < v.K) {
                post_gathers(c, &v, k, gather);
                mc[k % W] = post_multicast(c, &v, k);
            }
            if (k > 0)
                rc = wait_gathers(c, &v, k - 1, gather, mc);
        }
    }
    int rc1 = sp_waitall(c, gather, G * W, NULL), rc2 = sp_waitall(c, mc, W, NULL); /* the last rounds' */
    if (rc == SP_OK)
        rc = rc1;
    free(mc);
    free(gather);
    free(v.wait);
    return rc != SP_OK ? rc : rc2;
}
