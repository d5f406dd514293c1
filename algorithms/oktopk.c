/* oktopk.c - Ok-Topk (Li & Hoefler, PPoPP 2022): sparse allreduce with fewer
 * than 6k words per rank, asymptotically optimal, with reused thresholds.
 *
 * Per rank and iteration (Algorithm 2 of the paper, as the authors' code runs it):
 *  1. Local threshold: exact (the k-th largest |acc|) every tau' iterations;
 *     in between the previous one, raised by x1.03 up to 5 times while more
 *     than 4k/3 entries pass.  Selection: |acc| > thr_local.
 *  2. Space repartition every tau iterations (64): each rank's boundaries at
 *     the i/P quantiles of its selected indices, averaged over ranks by a
 *     small allreduce, define P regions, kept until the next repartition.
 *     Fewer selected entries than ranks (the authors' code does not guard
 *     it): that rank proposes equal regions instead.
 *  3. Split and reduce: counts by alltoall, then point to point with
 *     destination rotation in buckets of b steps (rotation.c), the
 *     scatter-add of bucket c-1 overlapping the transfers of bucket c.
 *     Eq. 1: (P-1) alpha + 2k(P-1)/P beta.
 *  4. Global selection: every tau' iterations all reduced non-zeros are
 *     all-gathered and the exact top k kept, which sets thr_global; in
 *     between the entries of my region above thr_global, their counts
 *     all-gathered, data balanced so that rank j holds floor(T/P) or
 *     ceil(T/P) of the T entries (off in the authors' VGG and LSTM code),
 *     and an allgatherv of the blocks.  Eq. 2: at most
 *     (P + 2 log P) alpha + 4k(P-1)/P beta.  Total (Eq. 3): 6k(P-1)/P words.
 *  5. Feedback for the next iteration: thr_local by the local count,
 *     thr_global by the global count T, with the preset's factors.
 *  Residual: only local selections that entered the global result leave it.
 *
 * The data is looked at through sparse_set.h only (exact vectors or a model
 * workload), so one file runs in both modes.
 * Reports (sp_stat): local_selected, thr_local, raised (x1.03 steps taken),
 * region_nnz (imbalance after
 * repartition), global_count (this rank's c_r before balancing), balanced
 * (its block after), global_total (T), thr_global, recompute.
 */
#include "algorithm.h"
#include "collectives.h"
#include "rotation.h"
#include "sparse_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG_COUNTS 600
#define TAG_SPLIT 602 /* and 603 for separate values */
#define TAG_GCOUNTS 604
#define TAG_BAL 606   /* and 607 */
#define TAG_AG 608    /* and 609 */
#define TAG_REPART 610

/* Presets from the authors' scripts and allreducer code (see the table in
 * Li & Hoefler's repository: VGG-16/CIFAR-10, LSTM/AN4, BERT/Wikipedia). */
static const sp_oktopk_preset presets[] = {
    {.name = "vgg16", .density = 0.02, .tau_prime = 32, .warmup = 512, .balance = 0,
     .local_a = 2.0 / 3.0, .local_s = 1.012,
     .glob_lo = 2.0 / 3.0, .glob_div = 1.008, .glob_hi = 4.0 / 3.0, .glob_mul = 1.008},
    {.name = "lstm", .density = 0.02, .tau_prime = 32, .warmup = 128, .balance = 0,
     .local_a = 3.0 / 4.0, .local_s = 1.012,
     .glob_lo = 2.0 / 3.0, .glob_div = 1.01, .glob_hi = 4.0 / 3.0, .glob_mul = 1.008},
    {.name = "bert", .density = 0.01, .tau_prime = 128, .warmup = 0, .balance = 1,
     .local_a = 4.0 / 5.0, .local_s = 1.025,
     .glob_lo = 4.0 / 5.0, .glob_div = 1.036, .glob_hi = 5.0 / 4.0, .glob_mul = 1.025},
};

const sp_oktopk_preset *sp_oktopk_preset_find(const char *name, int *index)
{
    for (int i = 0; i < (int)(sizeof presets / sizeof presets[0]); i++)
        if (strcmp(presets[i].name, name) == 0) {
            if (index)
                *index = i;
            return &presets[i];
        }
    return NULL;
}

const sp_oktopk_preset *sp_oktopk_preset_at(int index)
{
    if (index < 0 || index >= (int)(sizeof presets / sizeof presets[0]))
        index = 2;
    return &presets[index];
}

typedef struct {
    int init, have_regions;
    int last_it; /* the iteration this rank ran last */
    float thr_local, thr_global;
    int32_t bounds[]; /* P + 1 region boundaries (n < 2^31); every rank keeps them: P^2 in all */
} okstate;

/* step 2: boundaries from the averaged local quantiles.  The authors' code
 * takes boundary i at position i * floor(m / P) of the sorted selection,
 * which leaves the remainder (up to P - 1 entries per rank) to the last
 * region; --quantiles exact takes it at floor(i m / P). */
static int repartition(sp_ctx *c, okstate *st, const sp_set *sel, uint64_t n, int exact_q)
{
    uint64_t m = sel->count;
    int P = sp_size(c);
    st->bounds[0] = 0;
    st->bounds[P] = (int32_t)n;
    if (P > 1) {
        int64_t *b = malloc((size_t)(P - 1) * sizeof *b);
        if (!b)
            return SP_ERR_MEM;
        uint64_t chunk = m / (uint64_t)P;
        for (int i = 1; i < P; i++)
            b[i - 1] = !chunk   ? (int64_t)((uint64_t)i * (n / (uint64_t)P))
                       : exact_q ? sp_set_index_at(c, sel, (uint64_t)i * m / (uint64_t)P)
                                 : sp_set_index_at(c, sel, (uint64_t)i * chunk);
        int rc = sp_allreduce_i64(c, b, P - 1, SP_OP_SUM, TAG_REPART);
        for (int i = 1; i < P && rc == SP_OK; i++) {
            int64_t g = b[i - 1] / P;
            if (g < st->bounds[i - 1])
                g = st->bounds[i - 1];
            st->bounds[i] = (int32_t)(g > (int64_t)n ? (int64_t)n : g);
        }
        free(b);
        if (rc)
            return rc;
    }
    st->have_regions = 1;
    return SP_OK;
}

/* an allgatherv of pair blocks (counts known), as pairs or as two arrays */
static int allgatherv_pairs(sp_ctx *c, const sp_pair *mine, const uint64_t *counts, sp_pair *all, int separate)
{
    int P = sp_size(c), r = sp_rank(c);
    if (!separate)
        return sp_allgatherv_counts(c, mine, counts, sizeof(sp_pair), all, TAG_AG);
    if (!all) { /* size-only (a model workload): the two messages' sizes */
        int rc = sp_allgatherv_counts(c, NULL, counts, 4, NULL, TAG_AG);
        return rc == SP_OK ? sp_allgatherv_counts(c, NULL, counts, 4, NULL, TAG_AG + 1) : rc;
    }
    uint64_t total = 0;
    for (int j = 0; j < P; j++)
        total += counts[j];
    int32_t *idx = malloc((counts[r] + 1) * 4), *allidx = malloc((total + 1) * 4);
    float *val = malloc((counts[r] + 1) * 4), *allval = malloc((total + 1) * 4);
    int rc = idx && allidx && val && allval ? SP_OK : SP_ERR_MEM;
    if (rc == SP_OK) {
        for (uint64_t i = 0; i < counts[r]; i++) {
            idx[i] = mine[i].idx;
            val[i] = mine[i].val;
        }
        rc = sp_allgatherv_counts(c, idx, counts, 4, allidx, TAG_AG);
        if (rc == SP_OK)
            rc = sp_allgatherv_counts(c, val, counts, 4, allval, TAG_AG + 1);
        for (uint64_t i = 0; i < total && rc == SP_OK; i++) {
            all[i].idx = allidx[i];
            all[i].val = allval[i];
        }
    }
    free(idx);
    free(allidx);
    free(val);
    free(allval);
    return rc;
}

/* step 4, balancing: rank j ends up with entries [B_j, B_j + q_j) of the
 * virtual rank-order concatenation of all G_r, where G_j starts at O_j (the
 * counts' prefix sums, taken as they are walked) and B_j = j floor(T/P) +
 * min(j, T mod P) (the first T mod P ranks take one more).  A rank's
 * requests are sized to the peers its ranges meet, a few, not to P: at
 * P = 16,384 arrays of P entries a rank were P^2 in all (issue 27). */
static uint64_t bal_start(uint64_t T, uint64_t P, uint64_t j) { return j * (T / P) + (j < T % P ? j : T % P); }

/* [a, a1) cut by [b, b1): [*lo, *hi), 1 when not empty */
static int cut(uint64_t a, uint64_t a1, uint64_t b, uint64_t b1, uint64_t *lo, uint64_t *hi)
{
    *lo = a > b ? a : b;
    *hi = a1 < b1 ? a1 : b1;
    return *hi > *lo;
}

static int balance(sp_ctx *c, const sp_pair *g, const uint64_t *counts, sp_pair *out, int separate)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t T = 0, Or = 0;
    for (int j = 0; j < P; j++) {
        if (j == r)
            Or = T;
        T += counts[j];
    }
    const uint64_t uP = (uint64_t)P, Br = bal_start(T, uP, (uint64_t)r), Br1 = bal_start(T, uP, (uint64_t)r + 1);
    const uint64_t Or1 = Or + counts[r];
    /* the peers: j's range cut by my target (receives), mine cut by j's (sends) */
    int nrecv = 0, nsend = 0;
    uint64_t O = 0, lo, hi;
    for (int j = 0; j < P; j++, O += counts[j - 1]) {
        if (j == r)
            continue;
        nrecv += cut(O, O + counts[j], Br, Br1, &lo, &hi);
        nsend += cut(Or, Or1, bal_start(T, uP, (uint64_t)j), bal_start(T, uP, (uint64_t)j + 1), &lo, &hi);
    }
    sp_req **q = malloc((2 * (size_t)(nrecv + nsend) + 1) * sizeof *q);
    void **scr = calloc((size_t)nsend + 1, sizeof *scr);
    struct {
        uint64_t at, cnt;
        void *scratch;
    } *pend = malloc(((size_t)nrecv + 1) * sizeof *pend);
    if (!q || !scr || !pend) {
        free(q);
        free(scr);
        free(pend);
        return SP_ERR_MEM;
    }
    int nq = 0, ns = 0, npend = 0;
    O = 0;
    for (int j = 0; j < P; j++, O += counts[j - 1]) {
        /* what I receive from j: its range cut by my target */
        if (!cut(O, O + counts[j], Br, Br1, &lo, &hi))
            continue;
        if (j == r) {
            if (out)
                memcpy(out + (lo - Br), g + (lo - O), (hi - lo) * sizeof *out);
            continue;
        }
        pend[npend].at = lo - Br;
        pend[npend].cnt = hi - lo;
        nq += sp_post_recv_pairs(c, j, TAG_BAL, out ? out + (lo - Br) : NULL, hi - lo, separate, q + nq,
                                 &pend[npend].scratch);
        npend++;
    }
    for (int j = 0; j < P; j++) {
        /* what I send to j: my range cut by its target */
        if (j == r || !cut(Or, Or1, bal_start(T, uP, (uint64_t)j), bal_start(T, uP, (uint64_t)j + 1), &lo, &hi))
            continue;
        nq += sp_post_pairs(c, j, TAG_BAL, g ? g + (lo - Or) : NULL, hi - lo, separate, q + nq, &scr[ns++]);
    }
    int rc = sp_waitall(c, q, nq, NULL);
    for (int i = 0; i < npend; i++) {
        if (out)
            sp_unpack_pairs(out + pend[i].at, pend[i].cnt, pend[i].scratch);
        free(pend[i].scratch);
    }
    for (int i = 0; i < ns; i++)
        free(scr[i]);
    free(pend);
    free(q);
    free(scr);
    return rc;
}

/* Where the feedback holds a threshold in steady state.  Error feedback
 * makes the count above a kept threshold grow, so the count climbs to the
 * band's upper edge (up x k), one raise by `step` cuts it by step^-alpha
 * and it climbs again: a sawtooth whose mean is up x k x (1 + step^-alpha)
 * / 2.  alpha, the tail's slope, and the threshold at that mean follow
 * from the thresholds at k (t_k) and at up x k (t_up), as a power law. */
static float sawtooth(float t_k, float t_up, double up, double step)
{
    if (!(t_k > t_up && t_up > 0))
        return t_k;
    double alpha = log(up) / log((double)t_k / (double)t_up);
    double target = up * (1 + pow(step, -alpha)) / 2; /* in units of k */
    return (float)((double)t_up * pow(up / target, 1 / alpha));
}

/* What one rank's iteration of Ok-Topk holds from step to step. */
typedef struct {
    sp_ctx *c;
    sp_algo_io *io;
    okstate *st;
    const sp_oktopk_preset *pre;
    int P, r, exact, sep, recompute;
    uint64_t n, k;
    double kd;
    sp_set sel;             /* step 1: my local selection */
    uint64_t m;             /* its size */
    sp_pair **blocks;       /* step 2: sel cut at the region boundaries */
    uint32_t *scnt, *rcnt;  /* step 3: counts sent to and received from each rank (n < 2^31) */
    sp_region rs;           /* my region, reduced */
    int64_t len;            /* its length */
    uint64_t nnz;           /* its non-zeros */
    float thr_sel;          /* the local threshold the selection used */
    sp_pair *gsel, *gall, *mine_bal; /* step 4: my candidates, all of them, my balanced block */
    uint64_t *gcnt;         /* candidates per rank */
    uint64_t cr, T;         /* mine, and all ranks' */
    float thr_used;         /* the global threshold the result used */
} okiter;

/* iterations skipped (--iters-at): the thresholds their feedback would
 * hold, from the model's state now and at no cost; the regions stay those
 * of the last simulated repartition (the model's index distribution does
 * not drift, so a skipped repartition would place about the same ones) */
static void thresholds_after_skip(okiter *x)
{
    okstate *st = x->st;
    const sp_oktopk_preset *pre = x->pre;
    float tl_k = sp_kth_threshold(x->c, x->io, x->k), tl_up = sp_kth_threshold(x->c, x->io, (uint64_t)(1.25 * x->kd));
    st->thr_local = sawtooth(tl_k, tl_up, 1.25, pre->local_s);
    float tg_k = sp_global_threshold_now(x->c, x->io, st->thr_local, x->k);
    float tg_up = sp_global_threshold_now(x->c, x->io, st->thr_local, (uint64_t)(pre->glob_hi * x->kd));
    st->thr_global = sawtooth(tg_k, tg_up, pre->glob_hi, pre->glob_mul);
}

/* 1. local threshold and selection */
static int select_local(okiter *x)
{
    sp_ctx *c = x->c;
    okstate *st = x->st;
    sp_phase(c, "threshold");
    if (x->recompute) {
        st->thr_local = sp_kth_threshold(c, x->io, x->k);
        if (isnan(st->thr_local))
            return SP_ERR_MEM;
        sp_compute(c, SP_K_TOPK, (double)x->n);
    } else {
        int raised = 0;
        for (int pass = 0; pass < 5; pass++) {
            uint64_t cnt = sp_count_above(c, x->io, st->thr_local);
            sp_compute(c, SP_K_THRESHOLD, (double)x->n);
            if ((double)cnt <= 4.0 * x->kd / 3.0)
                break;
            st->thr_local *= 1.03f;
            raised++;
        }
        sp_stat(c, "raised", raised);
    }
    int rc = sp_set_above(c, x->io, st->thr_local, &x->sel);
    if (rc != SP_OK)
        return rc;
    x->m = x->sel.count;
    sp_compute(c, SP_K_THRESHOLD, (double)x->n);
    sp_stat(c, "local_selected", (double)x->m);
    sp_stat(c, "thr_local", st->thr_local);
    return SP_OK;
}

/* 2. regions (repartitioned every tau iterations), and 3. split and reduce;
 * then the local threshold's feedback for the next iteration */
static int split_and_reduce(okiter *x)
{
    sp_ctx *c = x->c;
    okstate *st = x->st;
    const sp_algo_opts *o = x->io->opts;
    int rc;
    if (!st->have_regions || sp_iter(c) % o->tau == 0) {
        sp_phase(c, "repartition");
        rc = repartition(c, st, &x->sel, x->n, o->exact_quantiles);
        if (rc)
            return rc;
    }
    int64_t off = st->bounds[x->r];
    x->len = st->bounds[x->r + 1] - st->bounds[x->r];
    if (sp_region_init(&x->rs, c, off, x->len, x->exact, st->thr_local) != SP_OK)
        return SP_ERR_MEM;
    /* the split's arrays of P entries, after the repartition's own (every rank holds them at once) */
    x->blocks = x->exact ? calloc((size_t)x->P, sizeof *x->blocks) : NULL; /* model: no pairs to point at */
    x->scnt = calloc((size_t)x->P, sizeof *x->scnt);
    x->rcnt = calloc((size_t)x->P, sizeof *x->rcnt);
    if ((x->exact && !x->blocks) || !x->scnt || !x->rcnt)
        return SP_ERR_MEM;
    sp_set_split(c, &x->sel, st->bounds, x->P, x->scnt, x->blocks);

    sp_phase(c, "counts");
    rc = sp_alltoall_counts(c, x->scnt, x->rcnt, TAG_COUNTS);
    if (rc)
        return rc;
    sp_phase(c, "split-reduce");
    sp_region_add(x->blocks ? x->blocks[x->r] : NULL, x->scnt[x->r], x->r, &x->rs);
    rc = sp_rotation_exchange(c, x->blocks, x->scnt, x->rcnt, o->bucket, TAG_SPLIT, x->exact, x->sep, sp_region_add,
                              &x->rs);
    if (rc)
        return rc;
    x->nnz = sp_region_nnz(&x->rs);
    sp_stat(c, "region_nnz", (double)x->nnz);
    x->thr_sel = st->thr_local;
    if ((double)x->m < x->pre->local_a * x->kd)
        st->thr_local /= (float)x->pre->local_s;
    else if ((double)x->m > 5.0 * x->kd / 4.0)
        st->thr_local *= (float)x->pre->local_s;
    return SP_OK;
}

/* 4, every tau' iterations: all reduced non-zeros all-gathered, the exact
 * top k kept, which sets thr_global */
static int select_global_exact(okiter *x)
{
    sp_ctx *c = x->c;
    sp_phase(c, "counts");
    x->cr = sp_region_pack(&x->rs, -1.0f, x->gsel); /* every reduced non-zero */
    uint64_t all;
    int rc = sp_allgather_count(c, x->cr, x->gcnt, &all, TAG_GCOUNTS);
    if (rc)
        return rc;
    if (x->exact && !(x->gall = malloc((all ? all : 1) * sizeof *x->gall)))
        return SP_ERR_MEM;
    sp_phase(c, "allgatherv");
    rc = allgatherv_pairs(c, x->gsel, x->gcnt, x->gall, x->sep);
    if (rc)
        return rc;
    sp_phase(c, "threshold");
    x->T = sp_global_topk(c, x->gall, all, x->k, x->thr_sel, &x->st->thr_global);
    if (x->T == (uint64_t)-1)
        return SP_ERR_MEM;
    sp_compute(c, SP_K_TOPK, (double)all);
    x->thr_used = x->st->thr_global;
    return SP_OK;
}

/* 4, in between: my region's entries above thr_global, their counts
 * all-gathered, balanced (when asked) and all-gathered; then the global
 * threshold's feedback for the next iteration */
static int select_global_reused(okiter *x)
{
    sp_ctx *c = x->c;
    okstate *st = x->st;
    const uint64_t P = (uint64_t)x->P;
    sp_phase(c, "threshold");
    x->cr = sp_region_pack(&x->rs, st->thr_global, x->gsel);
    sp_compute(c, SP_K_THRESHOLD, (double)x->len);
    sp_phase(c, "counts");
    int rc = sp_allgather_count(c, x->cr, x->gcnt, &x->T, TAG_GCOUNTS);
    if (rc)
        return rc;
    const uint64_t T = x->T;
    if (x->exact && !(x->gall = malloc((T ? T : 1) * sizeof *x->gall)))
        return SP_ERR_MEM;
    const sp_pair *block = x->gsel;
    if (x->io->opts->balance) {
        sp_phase(c, "balance");
        uint64_t q = T / P + ((uint64_t)x->r < T % P ? 1 : 0);
        if (x->exact && !(x->mine_bal = malloc((q ? q : 1) * sizeof *x->mine_bal)))
            return SP_ERR_MEM;
        rc = balance(c, x->gsel, x->gcnt, x->mine_bal, x->sep);
        if (rc)
            return rc;
        for (uint64_t j = 0; j < P; j++)
            x->gcnt[j] = T / P + (j < T % P ? 1 : 0);
        block = x->mine_bal;
        sp_stat(c, "balanced", (double)q);
    }
    sp_phase(c, "allgatherv");
    rc = allgatherv_pairs(c, block, x->gcnt, x->gall, x->sep);
    if (rc)
        return rc;
    if ((double)T < x->pre->glob_lo * x->kd)
        st->thr_global /= (float)x->pre->glob_div;
    else if ((double)T > x->pre->glob_hi * x->kd)
        st->thr_global *= (float)x->pre->glob_mul;
    return SP_OK;
}

/* 4. global selection, either way, and its report */
static int select_global(okiter *x)
{
    x->thr_used = x->st->thr_global;
    if (x->exact && !(x->gsel = malloc((x->nnz ? x->nnz : 1) * sizeof *x->gsel)))
        return SP_ERR_MEM;
    int rc = x->recompute ? select_global_exact(x) : select_global_reused(x);
    if (rc)
        return rc;
    sp_stat(x->c, "global_count", (double)x->cr);
    sp_stat(x->c, "global_total", (double)x->T);
    sp_stat(x->c, "thr_global", x->thr_used);
    sp_stat(x->c, "recompute", x->recompute);
    x->st->init = 1;
    return SP_OK;
}

/* 5. the result, and the residual: only what entered it leaves */
static void update(okiter *x)
{
    sp_phase(x->c, "update");
    if (x->exact) {
        memset(x->io->result, 0, x->n * sizeof(float));
        for (uint64_t j = 0; j < x->T; j++)
            x->io->result[x->gall[j].idx] = x->gall[j].val;
    }
    sp_compute(x->c, SP_K_SCATTER_ADD, (double)x->T);
    sp_set_consume_delivered(x->c, x->io, &x->sel, x->gall, x->T, x->thr_used);
}

int sp_oktopk(sp_ctx *c, sp_algo_io *io)
{
    okiter x = {.c = c, .io = io, .P = sp_size(c), .r = sp_rank(c), .n = io->n};
    const sp_algo_opts *o = io->opts;
    int it = sp_iter(c);
    x.k = io->k < io->n ? io->k : io->n;
    x.kd = (double)x.k;
    x.exact = sp_data_exact(io);
    x.sep = o->separate;
    x.pre = sp_oktopk_preset_at(o->oktopk_preset);
    if (o->tau < 1 || o->tau_prime < 1)
        return SP_ERR_ARG;
    x.st = sp_rank_state(c, sizeof(okstate) + ((size_t)x.P + 1) * sizeof(int32_t));
    if (!x.st)
        return SP_ERR_MEM;
    x.recompute = !x.st->init || it % o->tau_prime == 0;
    if (x.st->init && it != x.st->last_it + 1 && !x.recompute && !x.exact)
        thresholds_after_skip(&x);
    x.st->last_it = it;

    /* arrays of P entries live only through the steps that use them: every
     * rank holds them at once, P^2 in all (issue 27) */
    int rc = select_local(&x);
    if (rc == SP_OK)
        rc = split_and_reduce(&x);
    free(x.blocks);
    free(x.scnt);
    free(x.rcnt);
    x.blocks = NULL;
    x.scnt = x.rcnt = NULL;
    if (rc == SP_OK && !(x.gcnt = calloc((size_t)x.P, sizeof *x.gcnt)))
        rc = SP_ERR_MEM;
    if (rc == SP_OK)
        rc = select_global(&x);
    if (rc == SP_OK)
        update(&x);
    sp_set_free(&x.sel);
    free(x.gsel);
    free(x.gall);
    free(x.mine_bal);
    free(x.gcnt);
    sp_region_free(&x.rs);
    return rc;
}
