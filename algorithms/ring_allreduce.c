/* ring_allreduce.c - dense ring allreduce (reduce-scatter, then allgather).
 *
 * 2(P-1) steps; in each, rank r sends one block to r+1 and receives one from
 * r-1.  Per rank it moves 2n(P-1)/P words, the bandwidth-optimal figure;
 * time 2(P-1)(alpha + (n/P) * 4 bytes * beta) on an uncontended alpha-beta
 * network (Patarasuk & Yuan, JPDC 2009; as quoted in the gTop-k paper's cost
 * model, Shi et al., ICDCS 2019).
 */
#include "algorithm.h"
#include "blocks.h"

#include <stdlib.h>

#define TAG_RS 100
#define TAG_AG 101

int sp_ring_allreduce(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t n = io->n;
    float *buf = io->result;
    sp_dense_deliver_all(c, io);
    if (P == 1)
        return SP_OK;
    int right = (r + 1) % P, left = (r - 1 + P) % P;
    float *tmp = NULL;
    if (buf) {
        tmp = malloc((sp_block_len(n, P, 0) + 1) * sizeof(float));
        if (!tmp)
            return SP_ERR_MEM;
    }
    int rc = SP_OK;
    sp_phase(c, "reduce-scatter");
    for (int s = 0; s < P - 1 && rc == SP_OK; s++) {
        int sb = (r - s + P) % P, rb = (r - s - 1 + P) % P;
        uint64_t sl = sp_block_len(n, P, sb), rl = sp_block_len(n, P, rb);
        sp_req *q[2];
        q[0] = sp_irecv(c, left, TAG_RS, tmp, rl * sizeof(float));
        q[1] = sp_isend(c, right, TAG_RS, buf ? buf + sp_block_off(n, P, sb) : NULL, sl * sizeof(float));
        rc = sp_waitall(c, q, 2, NULL);
        if (buf && rc == SP_OK) {
            float *dst = buf + sp_block_off(n, P, rb);
            for (uint64_t i = 0; i < rl; i++)
                dst[i] += tmp[i];
        }
        sp_compute(c, SP_K_DENSE_SUM, (double)rl);
    }
    sp_phase(c, "allgather");
    for (int s = 0; s < P - 1 && rc == SP_OK; s++) {
        int sb = (r + 1 - s + P) % P, rb = (r - s + P) % P;
        uint64_t sl = sp_block_len(n, P, sb), rl = sp_block_len(n, P, rb);
        sp_req *q[2];
        q[0] = sp_irecv(c, left, TAG_AG, buf ? buf + sp_block_off(n, P, rb) : NULL, rl * sizeof(float));
        q[1] = sp_isend(c, right, TAG_AG, buf ? buf + sp_block_off(n, P, sb) : NULL, sl * sizeof(float));
        rc = sp_waitall(c, q, 2, NULL);
    }
    free(tmp);
    return rc;
}
