/* recdoubling_allreduce.c - dense recursive-doubling allreduce.
 *
 * log2 P rounds; in round i rank r exchanges its whole vector with r XOR 2^i
 * and adds.  n * log2 P words per rank, latency log2 P * alpha: the choice for
 * small vectors (Thakur, Rabenseifner & Gropp, IJHPCA 2005).  For P not a
 * power of two, with p2 the largest power of two below P and rem = P - p2,
 * the first 2*rem ranks pair up before (even sends its vector to odd) and
 * after (odd returns the result), as in that paper.
 */
#include "algorithm.h"
#include "blocks.h"
#include "collectives.h"

#include <stdlib.h>
#include <string.h>

#define TAG_RD 110

int sp_recdoubling_allreduce(sp_ctx *c, sp_algo_io *io)
{
    uint64_t n = io->n;
    size_t bytes = n * sizeof(float);
    float *buf = io->result, *tmp;
    if (sp_dense_begin(c, io, &tmp) != SP_OK)
        return SP_ERR_MEM;
    sp_dense_add_arg arg = {c, n};
    sp_fold f;
    sp_phase(c, "fold-in");
    int rc = sp_fold_in(c, &f, buf, tmp, bytes, TAG_RD, sp_dense_add, &arg);
    sp_phase(c, "exchange");
    for (int mask = 1; rc == SP_OK && f.newrank >= 0 && mask < f.p2; mask <<= 1) {
        int peer = sp_fold_rank(&f, f.newrank ^ mask);
        sp_req *q[2] = {sp_irecv(c, peer, TAG_RD, tmp, bytes), sp_isend(c, peer, TAG_RD, buf, bytes)};
        rc = sp_waitall(c, q, 2, NULL);
        if (rc == SP_OK)
            sp_dense_add(buf, tmp, &arg);
    }
    sp_phase(c, "fold-out");
    if (rc == SP_OK)
        rc = sp_fold_out(c, &f, buf, bytes, TAG_RD);
    free(tmp);
    return rc;
}
