/* spardl.c - SparDL (Zhao et al., "SparDL: Distributed Deep Learning Training
 * with Efficient Sparse Communication", arXiv 2304.00737; the authors' code
 * ZJU-DAILY/SparDL, allreducer.py, read for the details below).  The
 * paper's full text was not at hand: the steps follow its abstract and the
 * authors' code, and where both are silent the choices are said below.
 *
 * The P ranks form d teams of W = P/d consecutive ranks (--spardl-teams d,
 * d divides P; d = 1 is one team of all P).  The index space is cut into W
 * contiguous blocks (blocks.h: the first n mod W one longer; the authors
 * pad the flattened layers to W equal groups - a choice here), the same in
 * every team; rank q of a team ends up holding block q.  k_b = floor(k/W),
 * at least 1 (the authors: the density times their group's length).
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
 *     mass-preserving.  (Their code also hands each holder 1/d of what step
 *     3 cuts, which this rule then overwrites: left out.)
 * With d = 1 it enters no group of its own, so that the node-aware forms
 * (rail:spardl, leader:spardl) run it inside theirs; groups do not nest, so
 * those forms take d = 1 only (sim/driver/resolve.c says so).
 * Volume (d = 1): 2k_b(W-1) words in the reduce-scatter and 2h(W-1) in the
 * allgather, 4k(P-1)/P in all when W divides k (analysis/bounds.c).  Pairs
 * travel as one message of 8-byte (index, value) entries a block, where the
 * authors send an index, a value and a size message; the papers' cost model
 * counts one.  Model workloads: for d = 1 no size depends on the data (model
 * and exact runs send the same messages).  For d > 1 the union of the d
 * holders' h indices sets the team allgather's sizes; the model answers it
 * with the union of d teams' top h, a team's value of an entry being the sum
 * of its W ranks' (sim/workload/model.c, op_team_union).  Taking the teams'
 * selections as disjoint, min(d h, k_b), put the allgather 16-40% over exact
 * at d = 4 (bench/README.md, "SparDL beside Ok-Topk and TopkDSA").
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

/* one rank's state through the four steps */
typedef struct {
    sp_ctx *c;
    sp_algo_io *io;
    int d, W, t, q, exact;
    uint64_t n, kb, h, hq, cap, qoff, qlen;
    float *w; /* exact: this rank's partial sums, block by block */
    sp_pair *sbuf, *rbuf, *sag, *m1, *m2, *gathered;
    sp_pair *fin;  /* exact: the block's final entries (mcnt) */
    uint64_t mcnt;
} spardl_rank;

/* 1. the Spar-Reduce-Scatter inside the team (d = 1: no group of its own) */
static int reduce_scatter(spardl_rank *s)
{
    sp_ctx *c = s->c;
    int W = s->W, q = s->q, rc = SP_OK;
    int *gap = malloc((size_t)W * sizeof *gap), *off = malloc((size_t)W * sizeof *off);
    if (!gap || !off) {
        free(gap);
        free(off);
        return SP_ERR_MEM;
    }
    sp_phase(c, "reduce-scatter");
    if (s->d > 1 && (rc = sp_group_enter(c, s->t * W, 1, W)) != SP_OK)
        goto out;
    int steps = srs_steps(W, gap, off);
    for (int i = 0; i < steps && rc == SP_OK; i++) {
        int blk = (q + gap[i] + off[i]) % W, rblk = (q + off[i]) % W;
        uint64_t blen = sp_block_len(s->n, W, blk);
        uint64_t scnt = min_u64(s->kb, blen), rcnt = min_u64(s->kb, sp_block_len(s->n, W, rblk));
        if (s->exact && (rc = take_top(s->w, sp_block_off(s->n, W, blk), blen, scnt, s->sbuf)) != SP_OK)
            break;
        sp_compute(c, SP_K_TOPK, (double)blen);
        rc = exchange(c, (q + gap[i]) % W, (q - gap[i] + W) % W, TAG_RS, s->exact ? s->sbuf : NULL,
                      scnt * sizeof(sp_pair), s->exact ? s->rbuf : NULL, rcnt * sizeof(sp_pair));
        for (uint64_t j = 0; rc == SP_OK && s->exact && j < rcnt; j++)
            s->w[s->rbuf[j].idx] += s->rbuf[j].val;
        sp_compute(c, SP_K_SCATTER_ADD, (double)rcnt);
    }
    if (s->d > 1)
        sp_group_leave(c);
out:
    free(gap);
    free(off);
    return rc;
}

/* exact: the sum of the d holders' index-sorted lists in s->sag, cut to the
 * top cap; what of this holder's own list the cut drops returns to its
 * partial sums */
static int sum_across(spardl_rank *s)
{
    sp_pair *cur = s->m2, *tmp = s->m1;
    uint64_t hq = s->hq, m = hq;
    memcpy(cur, s->sag, hq * sizeof *cur);
    for (int i = 1; i < s->d; i++) {
        m = sp_merge_add(cur, m, s->sag + (size_t)i * hq, hq, tmp);
        sp_pair *x = cur;
        cur = tmp;
        tmp = x;
    }
    if (m > s->cap) {
        if (sp_topk_pairs(cur, m, s->cap, tmp) != s->cap)
            return SP_ERR_MEM;
        const sp_pair *mine = s->sag + (size_t)s->t * hq;
        uint64_t a = 0;
        for (uint64_t j = 0; j < hq; j++) {
            while (a < s->cap && tmp[a].idx < mine[j].idx)
                a++;
            if (a == s->cap || tmp[a].idx != mine[j].idx)
                s->w[mine[j].idx] += mine[j].val;
        }
        sp_compute(s->c, SP_K_TOPK, (double)m);
        m = s->cap;
        cur = tmp;
    }
    s->fin = cur;
    s->mcnt = m;
    return SP_OK;
}

/* 3. the Spar-All-Gather across teams: the d holders of block q */
static int across_teams(spardl_rank *s)
{
    sp_ctx *c = s->c;
    sp_phase(c, "spar-allgather");
    int rc = sp_group_enter(c, s->q, s->W, s->d);
    if (rc != SP_OK)
        return rc;
    rc = sp_allgather(c, s->exact ? s->m1 : NULL, s->hq * sizeof(sp_pair), s->exact ? s->sag : NULL, TAG_SAG);
    sp_group_leave(c);
    if (rc != SP_OK)
        return rc;
    if (s->exact) {
        if ((rc = sum_across(s)) != SP_OK)
            return rc;
    } else { /* the model's union of the d teams' top h of block q (sums over a team's W ranks) */
        s->mcnt = sp_model_team_union(c, s->W, s->d, s->hq, (int64_t)s->qoff, (int64_t)(s->qoff + s->qlen), s->cap);
    }
    sp_compute(c, SP_K_MERGE, (double)s->d * (double)s->hq);
    sp_stat(c, "merged", (double)s->mcnt);
    return SP_OK;
}

/* 4. the team's allgather of its W blocks; *total: the entries gathered */
static int team_allgather(spardl_rank *s, uint64_t *total)
{
    sp_ctx *c = s->c;
    int W = s->W, rc = SP_OK;
    uint64_t *cnt = calloc((size_t)W, sizeof *cnt);
    if (!cnt)
        return SP_ERR_MEM;
    sp_phase(c, "allgather");
    if (s->d > 1 && (rc = sp_group_enter(c, s->t * W, 1, W)) != SP_OK)
        goto out;
    *total = 0;
    if (s->d == 1) {
        for (int j = 0; j < W; j++)
            *total += cnt[j] = min_u64(s->h, sp_block_len(s->n, W, j));
    } else {
        rc = sp_allgather_count(c, s->mcnt, cnt, total, TAG_CNT);
    }
    if (rc == SP_OK)
        rc = sp_allgatherv_counts(c, s->exact ? s->fin : NULL, cnt, sizeof(sp_pair), s->exact ? s->gathered : NULL,
                                  TAG_AG);
    if (s->d > 1)
        sp_group_leave(c);
out:
    free(cnt);
    return rc;
}

/* the result, and what stays in the residual */
static void update(spardl_rank *s, const sp_set *sel, uint64_t total)
{
    sp_algo_io *io = s->io;
    uint64_t n = s->n;
    sp_phase(s->c, "update");
    sp_compute(s->c, SP_K_SCATTER_ADD, (double)total);
    if (!s->exact) {
        float thr_global;
        sp_global_topk(s->c, NULL, total, total, sel->thr, &thr_global);
        sp_set_consume_delivered(s->c, io, sel, NULL, 0, thr_global);
        return;
    }
    memset(io->result, 0, n * sizeof(float));
    for (uint64_t j = 0; j < total; j++)
        io->result[s->gathered[j].idx] = s->gathered[j].val;
    if (io->opts->spardl_residual == 1) { /* the authors' code */
        for (uint64_t j = 0; j < total; j++)
            io->acc[s->gathered[j].idx] = s->w[s->gathered[j].idx];
    } else {
        memcpy(io->acc, s->w, n * sizeof *s->w);
    }
    sp_acc_rewritten(io->acc, n);
}

static int alloc_exact(spardl_rank *s)
{
    size_t across = (size_t)s->d * s->hq + 1;
    s->w = malloc((s->n ? s->n : 1) * sizeof *s->w);
    s->sbuf = malloc((s->kb + 1) * sizeof *s->sbuf);
    s->rbuf = malloc((s->kb + 1) * sizeof *s->rbuf);
    s->sag = malloc(across * sizeof *s->sag);
    s->m1 = malloc(across * sizeof *s->m1);
    s->m2 = malloc(across * sizeof *s->m2);
    s->gathered = malloc(((uint64_t)s->W * s->kb + 1) * sizeof *s->gathered);
    if (!s->w || !s->sbuf || !s->rbuf || !s->sag || !s->m1 || !s->m2 || !s->gathered)
        return SP_ERR_MEM;
    memcpy(s->w, s->io->acc, s->n * sizeof *s->w);
    return SP_OK;
}

int sp_spardl(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    const sp_algo_opts *o = io->opts;
    spardl_rank s = {.c = c, .io = io, .d = o->spardl_teams > 0 ? o->spardl_teams : 1, .exact = sp_data_exact(io)};
    if (P % s.d)
        return SP_ERR_ARG;
    s.W = P / s.d;
    s.t = r / s.W;
    s.q = r % s.W;
    s.n = io->n;
    uint64_t k = io->k < io->n ? io->k : io->n;
    s.kb = k / (uint64_t)s.W > 0 ? k / (uint64_t)s.W : 1;
    double share = o->spardl_share > 0 ? o->spardl_share : 1.0 / s.d;
    s.h = (uint64_t)floor(share * (double)s.kb + 1e-9);
    s.h = s.h < 1 ? 1 : s.h > s.kb ? s.kb : s.h;
    s.qoff = sp_block_off(s.n, s.W, s.q);
    s.qlen = sp_block_len(s.n, s.W, s.q);
    s.hq = min_u64(s.h, s.qlen);
    s.cap = min_u64(s.kb, s.qlen);
    sp_set sel = {0};
    uint64_t total = 0;
    int rc = s.exact ? alloc_exact(&s) : sp_set_topk(c, io, k, &sel); /* model: the rank's top-k threshold */
    if (rc == SP_OK)
        rc = reduce_scatter(&s);
    if (rc == SP_OK) { /* 2. the holder's top h of its team's block */
        sp_phase(c, "select");
        if (s.exact)
            rc = take_top(s.w, s.qoff, s.qlen, s.hq, s.m1);
        sp_compute(c, SP_K_TOPK, (double)s.qlen);
        s.fin = s.m1;
        s.mcnt = s.hq;
    }
    if (rc == SP_OK && s.d > 1)
        rc = across_teams(&s);
    if (rc == SP_OK)
        rc = team_allgather(&s, &total);
    if (rc == SP_OK)
        update(&s, &sel, total);
    sp_set_free(&sel);
    free(s.w);
    free(s.sbuf);
    free(s.rbuf);
    free(s.sag);
    free(s.m1);
    free(s.m2);
    free(s.gathered);
    return rc;
}
