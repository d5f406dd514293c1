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

#include <stdlib.h>
#include <string.h>

#define TAG_FOLD 120
#define TAG_RS 121
#define TAG_AG 122

int sp_rabenseifner_allreduce(sp_ctx *c, sp_algo_io *io)
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
            long long w = sp_wait(c, sp_isend(c, r + 1, TAG_FOLD, buf, bytes));
            rc = w < 0 ? (int)w : SP_OK;
            newrank = -1;
        } else {
            long long w = sp_wait(c, sp_irecv(c, r - 1, TAG_FOLD, tmp, bytes));
            rc = w < 0 ? (int)w : SP_OK;
            if (buf)
                for (uint64_t i = 0; i < n; i++)
                    buf[i] += tmp[i];
            sp_compute(c, SP_K_DENSE_SUM, (double)n);
            newrank = r / 2;
        }
    }
    if (newrank >= 0 && p2 > 1) {
        /* reduce-scatter by recursive halving over p2 blocks: the window
         * [lo, hi) of blocks this rank is responsible for halves each round */
        sp_phase(c, "reduce-scatter");
        int lo = 0, hi = p2;
        for (int mask = p2 / 2; mask >= 1 && rc == SP_OK; mask >>= 1) {
            int pn = newrank ^ mask;
            int peer = pn < rem ? pn * 2 + 1 : pn + rem;
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
            int peer = pn < rem ? pn * 2 + 1 : pn + rem;
            int my_lo = newrank & ~(mask - 1), peer_lo = pn & ~(mask - 1);
            uint64_t mo = sp_block_off(n, p2, my_lo), ml = sp_block_off(n, p2, my_lo + mask) - mo;
            uint64_t po = sp_block_off(n, p2, peer_lo), pl = sp_block_off(n, p2, peer_lo + mask) - po;
            sp_req *q[2] = {sp_irecv(c, peer, TAG_AG, buf ? buf + po : NULL, pl * sizeof(float)),
                            sp_isend(c, peer, TAG_AG, buf ? buf + mo : NULL, ml * sizeof(float))};
            rc = sp_waitall(c, q, 2, NULL);
        }
    }
    if (rc == SP_OK && r < 2 * rem) {
        sp_phase(c, "fold-out");
        long long w = r % 2 ? sp_wait(c, sp_isend(c, r - 1, TAG_FOLD, buf, bytes))
                            : sp_wait(c, sp_irecv(c, r + 1, TAG_FOLD, buf, bytes));
        rc = w < 0 ? (int)w : SP_OK;
    }
    free(tmp);
    return rc;
}
