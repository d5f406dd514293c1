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

#include <stdlib.h>
#include <string.h>

#define TAG_RD 110

static void add(float *dst, const float *src, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        dst[i] += src[i];
}

int sp_recdoubling_allreduce(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t n = io->n;
    size_t bytes = n * sizeof(float);
    float *buf = io->result, *tmp = NULL;
    if (buf) {
        memcpy(buf, io->acc, bytes);
        memset(io->acc, 0, bytes);
        tmp = malloc(bytes ? bytes : 1);
        if (!tmp)
            return SP_ERR_MEM;
    }
    int p2 = 1;
    while (p2 * 2 <= P)
        p2 *= 2;
    int rem = P - p2, newrank = r - rem, rc = SP_OK;
    if (r < 2 * rem) {
        sp_phase(c, "fold-in");
        if (r % 2 == 0) {
            long long w = sp_wait(c, sp_isend(c, r + 1, TAG_RD, buf, bytes));
            rc = w < 0 ? (int)w : SP_OK;
            newrank = -1;
        } else {
            long long w = sp_wait(c, sp_irecv(c, r - 1, TAG_RD, tmp, bytes));
            rc = w < 0 ? (int)w : SP_OK;
            if (buf)
                add(buf, tmp, n);
            sp_compute(c, SP_K_DENSE_SUM, (double)n);
            newrank = r / 2;
        }
    }
    sp_phase(c, "exchange");
    if (newrank >= 0) {
        for (int mask = 1; mask < p2 && rc == SP_OK; mask <<= 1) {
            int pn = newrank ^ mask;
            int peer = pn < rem ? pn * 2 + 1 : pn + rem;
            sp_req *q[2] = {sp_irecv(c, peer, TAG_RD, tmp, bytes), sp_isend(c, peer, TAG_RD, buf, bytes)};
            rc = sp_waitall(c, q, 2, NULL);
            if (buf && rc == SP_OK)
                add(buf, tmp, n);
            sp_compute(c, SP_K_DENSE_SUM, (double)n);
        }
    }
    if (rc == SP_OK && r < 2 * rem) {
        sp_phase(c, "fold-out");
        long long w = r % 2 ? sp_wait(c, sp_isend(c, r - 1, TAG_RD, buf, bytes))
                            : sp_wait(c, sp_irecv(c, r + 1, TAG_RD, buf, bytes));
        rc = w < 0 ? (int)w : SP_OK;
    }
    free(tmp);
    return rc;
}
