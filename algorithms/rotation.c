/* rotation.c - bucketed destination-rotation exchange (see rotation.h).
 * Follows the split-and-reduce schedule of Li & Hoefler, PPoPP 2022 (Sec. 3.1),
 * which TopkDSA's reduce-scatter shares in the Ok-Topk authors' code. */
#include "rotation.h"
#include "sim/shim/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sp_post_pairs(sp_ctx *c, int dst, int tag, const sp_pair *p, uint64_t cnt, int separate, sp_req **q,
                  void **scratch)
{
    *scratch = NULL;
    if (!separate) {
        q[0] = sp_isend(c, dst, tag, p, cnt * sizeof(sp_pair));
        return 1;
    }
    int32_t *idx = NULL;
    float *val = NULL;
    if (p && cnt) {
        unsigned char *buf = malloc(cnt * 8);
        if (buf) {
            idx = (int32_t *)buf;
            val = (float *)(buf + cnt * 4);
            for (uint64_t i = 0; i < cnt; i++) {
                idx[i] = p[i].idx;
                val[i] = p[i].val;
            }
            *scratch = buf;
        }
    }
    q[0] = sp_isend(c, dst, tag, idx, cnt * 4);
    q[1] = sp_isend(c, dst, tag + 1, val, cnt * 4);
    return 2;
}

int sp_post_recv_pairs(sp_ctx *c, int src, int tag, sp_pair *p, uint64_t cnt, int separate, sp_req **q,
                       void **scratch)
{
    *scratch = NULL;
    if (!separate) {
        q[0] = sp_irecv(c, src, tag, p, cnt * sizeof(sp_pair));
        return 1;
    }
    unsigned char *buf = p && cnt ? malloc(cnt * 8) : NULL;
    *scratch = buf;
    q[0] = sp_irecv(c, src, tag, buf, cnt * 4);
    q[1] = sp_irecv(c, src, tag + 1, buf ? buf + cnt * 4 : NULL, cnt * 4);
    return 2;
}

void sp_unpack_pairs(sp_pair *p, uint64_t cnt, void *scratch)
{
    if (!scratch || !p)
        return;
    const int32_t *idx = scratch;
    const float *val = (const float *)((const unsigned char *)scratch + cnt * 4);
    for (uint64_t i = 0; i < cnt; i++) {
        p[i].idx = idx[i];
        p[i].val = val[i];
    }
}

int sp_rotation_exchange(sp_ctx *c, sp_pair *const *send, const uint32_t *send_cnt, const uint32_t *recv_cnt,
                         int bucket, int tag, int exact, int separate, sp_consume_fn consume, void *arg)
{
    int P = sp_size(c), r = sp_rank(c);
    int b = bucket > 0 ? bucket : (P < 4 ? P : 4);
    if (P == 1)
        return SP_OK;
    sp_req **q = malloc(4 * (size_t)b * sizeof *q);
    void **scr = calloc(2 * (size_t)b, sizeof *scr);
    sp_pair **cur = calloc((size_t)b, sizeof *cur), **prev = calloc((size_t)b, sizeof *prev);
    int *cur_src = calloc((size_t)b, sizeof *cur_src), *prev_src = calloc((size_t)b, sizeof *prev_src);
    int rc = q && scr && cur && prev && cur_src && prev_src ? SP_OK : SP_ERR_MEM;
    int nprev = 0;
    for (int t0 = 1; t0 < P && rc == SP_OK; t0 += b) {
        int nq = 0, ncur = 0;
        for (int t = t0; t < t0 + b && t < P; t++) {
            int dst = (r + t) % P, src = (r - t + P) % P;
            cur_src[ncur] = src;
            cur[ncur] = exact && recv_cnt[src] ? malloc(recv_cnt[src] * sizeof(sp_pair)) : NULL;
            nq += sp_post_recv_pairs(c, src, tag, cur[ncur], recv_cnt[src], separate, q + nq, &scr[2 * ncur]);
            nq += sp_post_pairs(c, dst, tag, exact ? send[dst] : NULL, send_cnt[dst], separate, q + nq,
                                &scr[2 * ncur + 1]);
            ncur++;
        }
        /* overlap: consume the previous bucket while this one is in flight */
        for (int i = 0; i < nprev; i++) {
            consume(prev[i], recv_cnt[prev_src[i]], prev_src[i], arg);
            free(prev[i]);
            prev[i] = NULL;
        }
        rc = sp_waitall(c, q, nq, NULL);
        for (int i = 0; i < ncur; i++) {
            sp_unpack_pairs(cur[i], recv_cnt[cur_src[i]], scr[2 * i]);
            free(scr[2 * i]);
            free(scr[2 * i + 1]);
            scr[2 * i] = scr[2 * i + 1] = NULL;
        }
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
    free(scr);
    free(cur);
    free(prev);
    free(cur_src);
    free(prev_src);
    return rc;
}

int sp_region_init(sp_region *r, sp_ctx *c, int64_t off, int64_t len, int exact, float thr)
{
    memset(r, 0, sizeof *r);
    r->off = off;
    r->len = len;
    r->c = c;
    r->thr = thr;
    r->nnz = -1;
    if (!exact)
        return SP_OK;
    r->values = calloc((size_t)(len > 0 ? len : 1), sizeof(float));
    r->touched = calloc((size_t)(len > 0 ? len : 1), 1);
    return r->values && r->touched ? SP_OK : SP_ERR_MEM;
}

void sp_region_free(sp_region *r)
{
    free(r->values);
    free(r->touched);
    r->values = NULL;
    r->touched = NULL;
}

void sp_region_add(const sp_pair *p, uint64_t cnt, int src, void *arg)
{
    (void)src;
    sp_region *r = arg;
    if (r->values && p)
        for (uint64_t i = 0; i < cnt; i++) {
            int64_t at = (int64_t)p[i].idx - r->off;
            r->values[at] += p[i].val;
            r->touched[at] = 1;
        }
    r->recv_total += cnt;
    if (cnt > r->recv_max)
        r->recv_max = cnt;
    sp_compute(r->c, SP_K_SCATTER_ADD, (double)cnt);
}

uint64_t sp_region_nnz(sp_region *r)
{
    if (!r->values) {
        if (r->nnz < 0) {
            uint64_t most = r->recv_total < (uint64_t)r->len ? r->recv_total : (uint64_t)r->len;
            r->nnz = (int64_t)sp_model_union(r->c, r->thr, r->off, r->off + r->len, r->recv_max, most);
        }
        return (uint64_t)r->nnz;
    }
    uint64_t n = 0;
    for (int64_t i = 0; i < r->len; i++)
        n += r->touched[i];
    return n;
}

uint64_t sp_region_pack(sp_region *r, float above, sp_pair *out)
{
    if (!r->values) {
        uint64_t nnz = sp_region_nnz(r);
        if (above < 0)
            return nnz;
        return sp_model_reduced_above(r->c, r->thr, r->off, r->off + r->len, above, nnz);
    }
    uint64_t w = 0;
    for (int64_t i = 0; i < r->len; i++)
        if (r->touched[i] && fabsf(r->values[i]) > above) {
            if (out) {
                out[w].idx = (int32_t)(r->off + i);
                out[w].val = r->values[i];
            }
            w++;
        }
    return w;
}
