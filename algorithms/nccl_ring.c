/* nccl_ring.c - NCCL's ring allreduce over nodes of G GPUs: C channels run
 * at once, each a ring over all P ranks (nccl_topo.h: through a node's GPUs
 * over NVLink, across to the next node once, on one rail) carrying its 1/C
 * of the vector in 2(P-1) steps, reduce-scatter then allgather (Patarasuk &
 * Yuan, JPDC 2009, per channel).
 *
 * Each step posts every channel's send and receive together and waits for
 * all of them, so the channels overlap as NCCL's do.  A step moves one whole
 * block of the channel: NCCL's slicing of a block into pipelined pieces is
 * not modelled (on an alpha-beta network it only trades latency terms).
 * With G = 1 and C = 1 this is the flat ring, message for message.
 */
#include "algorithm.h"
#include "blocks.h"
#include "nccl_topo.h"

#include <stdlib.h>

#define TAG_RS 1200 /* + channel */
#define TAG_AG 1400

typedef struct {
    uint64_t off, len; /* the channel's range of the vector */
    int pos, left, right;
} ring_channel;

static int ring_steps(sp_ctx *c, const ring_channel *ch, int C, float *buf, float **tmp, int allgather)
{
    int P = sp_size(c), rc = SP_OK;
    sp_req **q = malloc((size_t)C * 2 * sizeof *q);
    if (!q)
        return SP_ERR_MEM;
    for (int s = 0; s < P - 1 && rc == SP_OK; s++) {
        for (int k = 0; k < C; k++) {
            const ring_channel *h = &ch[k];
            int sb = (h->pos - s + allgather + P) % P, rb = (h->pos - s - 1 + allgather + P) % P;
            uint64_t sl = sp_block_len(h->len, P, sb), rl = sp_block_len(h->len, P, rb);
            float *sp = buf ? buf + h->off + sp_block_off(h->len, P, sb) : NULL;
            float *rp = !buf ? NULL : allgather ? buf + h->off + sp_block_off(h->len, P, rb) : tmp[k];
            int tag = (allgather ? TAG_AG : TAG_RS) + k;
            q[2 * k] = sp_irecv(c, h->left, tag, rp, rl * sizeof(float));
            q[2 * k + 1] = sp_isend(c, h->right, tag, sp, sl * sizeof(float));
        }
        rc = sp_waitall(c, q, 2 * C, NULL);
        for (int k = 0; k < C && rc == SP_OK && !allgather; k++) {
            const ring_channel *h = &ch[k];
            int rb = (h->pos - s - 1 + P) % P;
            uint64_t rl = sp_block_len(h->len, P, rb);
            if (buf) {
                float *dst = buf + h->off + sp_block_off(h->len, P, rb);
                for (uint64_t i = 0; i < rl; i++)
                    dst[i] += tmp[k][i];
            }
            sp_compute(c, SP_K_FUSED_SUM, (double)rl); /* NCCL reduces in its running kernel: no launch */
        }
    }
    free(q);
    return rc;
}

int sp_nccl_ring(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c), G = sp_node_size(c);
    if (G < 1 || P % G)
        G = 1; /* a group that is not whole nodes: the flat ring */
    int C = io->opts->nccl_channels > 0 ? io->opts->nccl_channels : sp_nccl_default_channels(G);
    sp_dense_deliver_all(c, io);
    if (P == 1)
        return SP_OK;
    ring_channel *ch = calloc((size_t)C, sizeof *ch);
    float **tmp = calloc((size_t)C, sizeof *tmp);
    int rc = ch && tmp ? SP_OK : SP_ERR_MEM;
    for (int k = 0; k < C && rc == SP_OK; k++) {
        ch[k].off = sp_block_off(io->n, C, k);
        ch[k].len = sp_block_len(io->n, C, k);
        ch[k].pos = sp_nccl_ring_pos(P, G, k, r);
        ch[k].right = sp_nccl_ring_rank(P, G, k, (ch[k].pos + 1) % P);
        ch[k].left = sp_nccl_ring_rank(P, G, k, (ch[k].pos - 1 + P) % P);
        if (io->result && !(tmp[k] = malloc((sp_block_len(ch[k].len, P, 0) + 1) * sizeof(float))))
            rc = SP_ERR_MEM;
    }
    if (rc == SP_OK) {
        sp_phase(c, "reduce-scatter");
        rc = ring_steps(c, ch, C, io->result, tmp, 0);
    }
    if (rc == SP_OK) {
        sp_phase(c, "allgather");
        rc = ring_steps(c, ch, C, io->result, tmp, 1);
    }
    for (int k = 0; tmp && k < C; k++)
        free(tmp[k]);
    free(tmp);
    free(ch);
    return rc;
}
