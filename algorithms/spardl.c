/* spardl.c - SparDL (Zhao et al., "SparDL: Distributed Deep Learning Training
 * with Efficient Sparse Communication", arXiv 2304.00737; the authors' code
 * ZJU-DAILY/SparDL, allreducer.py, read for the details below).
 *
 * The P ranks form d teams of W = P/d consecutive ranks (--spardl-teams d,
 * d divides P; d = 1 is one team of all P).  The index space is cut into W
 * contiguous blocks (blocks.h: the first n mod W one longer), the same in
 * every team; rank q of a team ends up holding block q.
 *
 *  1. Spar-Reduce-Scatter, inside the team, block-wise and non-recursive:
 *     W - 1 steps, each one block of k_b = floor(k / W) pairs to one peer.
 *     With R = ceil(log2 W), the rounds move (W - 2^(R-1)), 2^(R-2), ..., 2,
 *     1 blocks at distances W - (W - 2^(R-1)), then halving (any W, not only
 *     powers of two); in a round of s blocks at distance g rank q sends
 *     blocks q+g .. q+g+s-1 to q+g, one a step, and receives blocks q .. q+s-1
 *     from q-g (all mod W).  Before a block leaves, the sender takes the top
 *     k_b of its partial sum of that block (its own entries plus what it
 *     received for it): the selection stays k_b a message whatever the step,
 *     so the sparse accumulation does not grow.  Every block leaves a rank
 *     once; what it does not send stays in its partial sum.
 *  2. The holder of block q keeps the top h of its team's reduced block
 *     (h = --spardl-share x k_b; default 1/d, the authors' starting value -
 *     their code then adapts h between iterations by a step rule, which is
 *     left out here: h stays fixed, an option).
 *  3. Spar-All-Gather across teams (d > 1): the d holders of block q (one a
 *     team) all-gather their h pairs by Bruck's allgather, sum them, and keep
 *     the top k_b of the sum when more than k_b indices result.
 *  4. Each team all-gathers its W blocks by Bruck's allgather (with d > 1 the
 *     blocks' sizes first, by a Bruck allgather of counts; the authors send a
 *     size message beside each block instead).  Every rank then holds the
 *     same global result, at most k_b entries a block.
 *
 * Residual, the global residual collection (--spardl-residual):
 *   collect (default): every partial sum a rank dropped - the entries of a
 *     block it did not forward, its own and those received from others, and
 *     what of its holder's h was cut at step 3 - stays in its residual.
 *     Nothing is lost: results plus residuals equal the gradients.
 *   code: as the authors' code leaves it: a rank keeps its own accumulated
 *     entry wherever the index is not in the global result, and where it is,
 *     the partial sum it dropped there (0 where it forwarded it).  Also
 *     mass-preserving.
 * With d = 1 it enters no group of its own, so that the node-aware forms
 * (rail:spardl, leader:spardl) run it inside theirs; groups do not nest, so
 * those forms take d = 1 only (sim/driver/resolve.c says so).
 * Volume (d = 1): 2k_b(W-1) words in the reduce-scatter and 2h(W-1) in the
 * allgather, 4k(P-1)/P in all when W divides k (analysis/bounds.c).  Pairs
 * travel as one message of 8-byte (index, value) entries a block, where the
 * authors send an index, a value and a size message; the papers' cost model
 * counts one.  Model workloads: for d = 1 no size depends on the data (model
 * and exact runs send the same messages).  For d > 1 the union of the d
 * holders' h indices sets the team allgather's sizes; the model answers
 * questions about ranks' selections, not about sums over a team, so it is
 * taken as disjoint, min(d h, k_b) - an upper bound, a choice: exact runs
 * overlap (bench/README.md, "SparDL beside Ok-Topk and TopkDSA", measures the
 * allgather 16-40% over at d = 4, the iteration 3-5%).
 */
#include "algorithm.h"
#include "blocks.h"
#include "collectives.h"
#include "sparse_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG_RS 1100
#define TAG_SAG 1101
#define TAG_CNT 1102
#define TAG_AG 1103

/* The Spar-Reduce-Scatter's W - 1 steps: step s sends block q + gap[s] +
 * off[s] to q + gap[s] and receives block q + off[s] from q - gap[s]. */
static int srs_steps(int W, int *gap, int *off)
{
    int R = 0;
    while ((1 << R) < W)
        R++;
    if (R == 0)
        return 0;
    int sizes[32], m = 0, s = 0;
    sizes[m++] = W - (1 << (R - 1)); /* > 0: 2^(R-1) < W */
    for (int i = R - 2; i >= 0; i--)
        sizes[m++] = 1 << i;
    int g = W - sizes[0];
    for (int i = 0; i < m; i++, g /= 2)
        for (int b = 0; b < sizes[i]; b++, s++) {
            gap[s] = g;
            off[s] = b;
        }
    return s;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* the top cnt of |w| over [off, off + len) as pairs with global indices, in
 * index order; they leave w (forwarded, no longer this rank's to keep) */
static int take_top(float *w, uint64_t off, uint64_t len, uint64_t cnt, sp_pair *out)
{
    if (!cnt)
        return SP_OK;
    if (sp_topk_exact(w + off, len, cnt, out) != cnt)
        return SP_ERR_MEM;
    for (uint64_t j = 0; j < cnt; j++) {
        out[j].idx += (int32_t)off;
        w[out[j].idx] = 0;
    }
    return SP_OK;
}

static int exchange(sp_ctx *c, int dst, int src, int tag, const void *sbuf, size_t sb, void *rbuf, size_t rb)
{
    sp_req *q[2];
    size_t got[2];
    q[0] = sp_irecv(c, src, tag, rbuf, rb);
    q[1] = sp_isend(c, dst, tag, sbuf, sb);
    int missing = !q[0] || !q[1];
    int rc = sp_waitall(c, q, 2, got);
    if (missing)
        return SP_ERR_COMM;
    if (rc == SP_OK && got[0] != rb)
        rc = SP_ERR_TRUNC;
    return rc;
}

int sp_spardl(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    const sp_algo_opts *o = io->opts;
    int d = o->spardl_teams > 0 ? o->spardl_teams : 1;
    if (P % d)
        return SP_ERR_ARG;
    int W = P / d, t = r / W, q = r % W;
    uint64_t n = io->n, k = io->k < io->n ? io->k : io->n;
    int exact = sp_data_exact(io);
    uint64_t kb = k / (uint64_t)W > 0 ? k / (uint64_t)W : 1;
    double share = o->spardl_share > 0 ? o->spardl_share : 1.0 / d;
    uint64_t h = (uint64_t)floor(share * (double)kb + 1e-9);
    h = h < 1 ? 1 : h > kb ? kb : h;
    uint64_t qoff = sp_block_off(n, W, q), qlen = sp_block_len(n, W, q);
    uint64_t hq = min_u64(h, qlen), cap = min_u64(kb, qlen);

    int *gap = malloc((size_t)W * sizeof *gap), *off = malloc((size_t)W * sizeof *off);
    uint64_t *cnt = calloc((size_t)W, sizeof *cnt);
    size_t *bytes = calloc((size_t)W, sizeof *bytes);
    float *w = NULL;
    sp_pair *sbuf = NULL, *rbuf = NULL, *sag = NULL, *m1 = NULL, *m2 = NULL, *gathered = NULL;
    sp_set sel = {0};
    int rc = SP_OK;
    if (!gap || !off || !cnt || !bytes) {
        rc = SP_ERR_MEM;
        goto out;
    }
    if (exact) {
        w = malloc((n ? n : 1) * sizeof *w);
        sbuf = malloc((kb + 1) * sizeof *sbuf);
        rbuf = malloc((kb + 1) * sizeof *rbuf);
        sag = malloc(((size_t)d * hq + 1) * sizeof *sag);
        m1 = malloc(((size_t)d * hq + 1) * sizeof *m1);
        m2 = malloc(((size_t)d * hq + 1) * sizeof *m2);
        gathered = malloc(((uint64_t)W * kb + 1) * sizeof *gathered);
        if (!w || !sbuf || !rbuf || !sag || !m1 || !m2 || !gathered) {
            rc = SP_ERR_MEM;
            goto out;
        }
        memcpy(w, io->acc, n * sizeof *w); /* this rank's partial sums, block by block */
    } else if ((rc = sp_set_topk(c, io, k, &sel)) != SP_OK) {
        goto out; /* model: the rank's top-k threshold, for the union and error feedback */
    }

    /* 1. Spar-Reduce-Scatter inside the team */
    sp_phase(c, "reduce-scatter");
    if (d > 1 && (rc = sp_group_enter(c, t * W, 1, W)) != SP_OK)
        goto out;
    int steps = srs_steps(W, gap, off);
    for (int s = 0; s < steps; s++) {
        int blk = (q + gap[s] + off[s]) % W, rblk = (q + off[s]) % W;
        int dst = (q + gap[s]) % W, src = (q - gap[s] + W) % W;
        uint64_t blen = sp_block_len(n, W, blk);
        uint64_t scnt = min_u64(kb, blen), rcnt = min_u64(kb, sp_block_len(n, W, rblk));
        if (exact && (rc = take_top(w, sp_block_off(n, W, blk), blen, scnt, sbuf)) != SP_OK)
            break;
        sp_compute(c, SP_K_TOPK, (double)blen);
        rc = exchange(c, dst, src, TAG_RS, exact ? sbuf : NULL, scnt * sizeof(sp_pair), exact ? rbuf : NULL,
                      rcnt * sizeof(sp_pair));
        if (rc != SP_OK)
            break;
        for (uint64_t j = 0; exact && j < rcnt; j++)
            w[rbuf[j].idx] += rbuf[j].val;
        sp_compute(c, SP_K_SCATTER_ADD, (double)rcnt);
    }
    if (d > 1)
        sp_group_leave(c);
    if (rc != SP_OK)
        goto out;

    /* 2. the holder's top h of its team's block */
    sp_phase(c, "select");
    if (exact && (rc = take_top(w, qoff, qlen, hq, m1)) != SP_OK)
        goto out;
    sp_compute(c, SP_K_TOPK, (double)qlen);
    sp_pair *fin = m1;
    uint64_t mcnt = hq;

    /* 3. Spar-All-Gather across teams: the d holders of block q */
    if (d > 1) {
        sp_phase(c, "spar-allgather");
        if ((rc = sp_group_enter(c, q, W, d)) != SP_OK)
            goto out;
        rc = sp_allgather(c, exact ? m1 : NULL, hq * sizeof(sp_pair), exact ? sag : NULL, TAG_SAG);
        sp_group_leave(c);
        if (rc != SP_OK)
            goto out;
        if (exact) { /* the sum of the d index-sorted lists */
            sp_pair *cur = m2, *tmp = m1;
            memcpy(cur, sag, hq * sizeof *cur);
            mcnt = hq;
            for (int i = 1; i < d; i++) {
                mcnt = sp_merge_add(cur, mcnt, sag + (size_t)i * hq, hq, tmp);
                sp_pair *x = cur;
                cur = tmp;
                tmp = x;
            }
            if (mcnt > cap) {
                if (sp_topk_pairs(cur, mcnt, cap, tmp) != cap) {
                    rc = SP_ERR_MEM;
                    goto out;
                }
                /* what of this holder's h the cut dropped returns to its partial sum */
                const sp_pair *mine = sag + (size_t)t * hq;
                uint64_t a = 0;
                for (uint64_t j = 0; j < hq; j++) {
                    while (a < cap && tmp[a].idx < mine[j].idx)
                        a++;
                    if (a == cap || tmp[a].idx != mine[j].idx)
                        w[mine[j].idx] += mine[j].val;
                }
                sp_compute(c, SP_K_TOPK, (double)mcnt);
                mcnt = cap;
                cur = tmp;
            }
            fin = cur;
        } else { /* the model knows ranks, not team sums: the teams' selections taken as disjoint */
            mcnt = min_u64((uint64_t)d * hq, cap);
        }
        sp_compute(c, SP_K_MERGE, (double)d * (double)hq);
        sp_stat(c, "merged", (double)mcnt);
    }

    /* 4. the team's allgather of its W blocks */
    sp_phase(c, "allgather");
    if (d > 1 && (rc = sp_group_enter(c, t * W, 1, W)) != SP_OK)
        goto out;
    uint64_t total = 0;
    if (d == 1) {
        for (int j = 0; j < W; j++)
            total += cnt[j] = min_u64(h, sp_block_len(n, W, j));
    } else if ((rc = sp_allgather_count(c, mcnt, cnt, &total, TAG_CNT)) != SP_OK) {
        sp_group_leave(c);
        goto out;
    }
    for (int j = 0; j < W; j++)
        bytes[j] = cnt[j] * sizeof(sp_pair);
    rc = sp_allgatherv(c, exact ? fin : NULL, bytes, exact ? gathered : NULL, TAG_AG);
    if (d > 1)
        sp_group_leave(c);
    if (rc != SP_OK)
        goto out;

    sp_phase(c, "update");
    sp_compute(c, SP_K_SCATTER_ADD, (double)total);
    if (exact) {
        memset(io->result, 0, n * sizeof(float));
        for (uint64_t j = 0; j < total; j++)
            io->result[gathered[j].idx] = gathered[j].val;
        if (o->spardl_residual == 1) { /* the authors' code */
            for (uint64_t j = 0; j < total; j++)
                io->acc[gathered[j].idx] = w[gathered[j].idx];
        } else {
            memcpy(io->acc, w, n * sizeof *w);
        }
        sp_acc_rewritten(io->acc, n);
    } else {
        float thr_global;
        sp_global_topk(c, NULL, total, total, sel.thr, &thr_global);
        sp_set_consume_delivered(c, io, &sel, NULL, 0, thr_global);
    }
out:
    sp_set_free(&sel);
    free(gap);
    free(off);
    free(cnt);
    free(bytes);
    free(w);
    free(sbuf);
    free(rbuf);
    free(sag);
    free(m1);
    free(m2);
    free(gathered);
    return rc;
}
