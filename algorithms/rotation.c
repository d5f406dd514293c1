/* rotation.c - bucketed destination-rotation exchange (see rotation.h).
 * Follows the split-and-reduce schedule of Li & Hoefler, PPoPP 2022 (Sec. 3.1),
 * which TopkDSA's reduce-scatter shares in the Ok-Topk authors' code. */
#include "rotation.h"

#include <stdlib.h>

int sp_rotation_exchange(sp_ctx *c, sp_pair *const *send, const uint64_t *send_cnt, const uint64_t *recv_cnt,
                         int bucket, int tag, int exact, sp_consume_fn consume, void *arg)
{
    int P = sp_size(c), r = sp_rank(c);
    int b = bucket > 0 ? bucket : (P < 4 ? P : 4);
    if (P == 1)
        return SP_OK;
    sp_req **q = malloc(2 * (size_t)b * sizeof *q);
    sp_pair **cur = calloc((size_t)b, sizeof *cur), **prev = calloc((size_t)b, sizeof *prev);
    int *cur_src = calloc((size_t)b, sizeof *cur_src), *prev_src = calloc((size_t)b, sizeof *prev_src);
    if (!q || !cur || !prev || !cur_src || !prev_src) {
        free(q);
        free(cur);
        free(prev);
        free(cur_src);
        free(prev_src);
        return SP_ERR_MEM;
    }
    int rc = SP_OK, nprev = 0;
    for (int t0 = 1; t0 < P && rc == SP_OK; t0 += b) {
        int nq = 0, ncur = 0;
        for (int t = t0; t < t0 + b && t < P; t++) {
            int dst = (r + t) % P, src = (r - t + P) % P;
            cur_src[ncur] = src;
            cur[ncur] = exact && recv_cnt[src] ? malloc(recv_cnt[src] * sizeof(sp_pair)) : NULL;
            if (exact && recv_cnt[src] && !cur[ncur]) {
                rc = SP_ERR_MEM;
                break;
            }
            q[nq++] = sp_irecv(c, src, tag, cur[ncur], recv_cnt[src] * sizeof(sp_pair));
            q[nq++] = sp_isend(c, dst, tag, exact ? send[dst] : NULL, send_cnt[dst] * sizeof(sp_pair));
            ncur++;
        }
        /* overlap: consume the previous bucket while this one is in flight */
        for (int i = 0; i < nprev; i++) {
            consume(prev[i], recv_cnt[prev_src[i]], prev_src[i], arg);
            free(prev[i]);
            prev[i] = NULL;
        }
        int w = sp_waitall(c, q, nq, NULL);
        if (rc == SP_OK)
            rc = w;
        sp_pair **tp = prev;
        prev = cur;
        cur = tp;
        int *ts = prev_src;
        prev_src = cur_src;
        cur_src = ts;
        nprev = ncur;
    }
    for (int i = 0; i < nprev; i++) {
        if (rc == SP_OK)
            consume(prev[i], recv_cnt[prev_src[i]], prev_src[i], arg);
        free(prev[i]);
    }
    free(q);
    free(cur);
    free(prev);
    free(cur_src);
    free(prev_src);
    return rc;
}
