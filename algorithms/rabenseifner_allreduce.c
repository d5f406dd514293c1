/* rabenseifner_allreduce.c - dense allreduce as reduce-scatter by recursive
 * halving, then allgather by recursive doubling (Rabenseifner, 2004; Thakur,
 * Rabenseifner & Gropp, IJHPCA 2005).
 *
 * 2n(p2-1)/p2 words and 2 log2 p2 latencies per rank, with p2 the largest
 * power of two <= P.  The first 2*rem ranks (rem = P - p2) fold in before and
 * receive the result after, as in recursive doubling; that costs them one
 * extra full vector each way.
 */
#include "algorithm.h"
#include "blocks.h"
#include "collectives.h"

#include <stdlib.h>
#include <string.h>

#define TAG_FOLD 120
#define TAG_RS 121
#define TAG_AG 122

int sp_rabenseifner_allreduce(sp_ctx *c, sp_algo_io *io)
{
    uint64_t n = io->n;
    size_t bytes = n * sizeof(float);
    float *buf = io->result, *tmp;
    if (sp_dense_begin(c, io, &tmp) != SP_OK)
        return SP_ERR_MEM;
    sp_dense_add_arg arg = {c, n};
    sp_fold f;
    sp_phase(c, "fold-in");
    int rc = sp_fold_in(c, &f, buf, tmp, bytes, TAG_FOLD, sp_dense_add, &arg);
    int p2 = f.p2, newrank = f.newrank;
    if (rc == SP_OK && newrank >= 0 && p2 > 1) {
        /* reduce-scatter by recursive halving over p2 blocks: the window
         * [lo, hi) of blocks this rank is responsible for halves each round */
        sp_phase(c, "reduce-scatter");
        int lo = 0, hi = p2;
        for (int mask = p2 / 2; mask >= 1 && rc == SP_OK; mask >>= 1) {
            int peer = sp_fold_rank(&f, newrank ^ mask);
            int mid = lo + (hi - lo) / 2;
            int keep_lo = (newrank & mask) ? mid : lo, keep_hi = (newrank & mask) ? hi : mid;
            int send_lo = (newrank & mask) ? lo : mid, send_hi = (newrank & mask) ? mid : hi;
            uint64_t ko = sp_block_off(n, p2, keep_lo), kl = sp_block_off(n, p2, keep_hi) - ko;
            uint64_t so = sp_block_off(n, p2, send_lo), sl = sp_block_off(n, p2, send_hi) - so;
            sp_req *q[2] = {sp_irecv(c, peer, TAG_RS, tmp, kl * sizeof(float)),
                            sp_isend(c, peer, TAG_RS, buf ? buf + so : NULL, sl * sizeof(float))};
            rc = sp_waitall(c, q, 2, NULL);
            if (buf && rc == SP_OK)
                for (uint64_t i = 0; i < kl; i++)
                    buf[ko + i] += tmp[i];
            sp_compute(c, SP_K_DENSE_SUM, (double)kl);
            lo = keep_lo;
            hi = keep_hi;
        }
        /* allgather by recursive doubling: the window doubles each round */
        sp_phase(c, "allgather");
        for (int mask = 1; mask < p2 && rc == SP_OK; mask <<= 1) {
            int pn = newrank ^ mask;
            int peer = sp_fold_rank(&f, pn);
            int my_lo = newrank & ~(mask - 1), peer_lo = pn & ~(mask - 1);
            uint64_t mo = sp_block_off(n, p2, my_lo), ml = sp_block_off(n, p2, my_lo + mask) - mo;
            uint64_t po = sp_block_off(n, p2, peer_lo), pl = sp_block_off(n, p2, peer_lo + mask) - po;
            sp_req *q[2] = {sp_irecv(c, peer, TAG_AG, buf ? buf + po : NULL, pl * sizeof(float)),
                            sp_isend(c, peer, TAG_AG, buf ? buf + mo : NULL, ml * sizeof(float))};
            rc = sp_waitall(c, q, 2, NULL);
        }
    }
    sp_phase(c, "fold-out");
    if (rc == SP_OK)
        rc = sp_fold_out(c, &f, buf, bytes, TAG_FOLD);
    free(tmp);
    return rc;
}
