/* gaussiank.c - Gaussian-k (Shi, Chu, Cheung & See, arXiv 1911.08772): the
 * selection threshold is estimated from a normal fit of the gradient instead
 * of an exact top-k, then the variable-size selections are all-gathered.
 *
 * thr = mu + |Phi^-1(rho/2)| sigma over acc (sp_gaussian_threshold); entries
 * with |acc| > thr are selected.  Adjustment loops (--gaussian-variant):
 *   authors: up to 3 counts; below 2k/3 halve thr, above 4k/3 multiply by
 *            1.5, else stop; after the third count its selection is used
 *            (GaussianK-SGD's compressor);
 *   oktopk:  below 3k/4 divide by 1.02, above 5k/4 multiply by 1.02, up to
 *            20 steps (the Ok-Topk authors' Gaussiank baseline).
 * Communication: an allgather of the counts, then an allgatherv of the
 * (int32, float32) pairs: about 2k(P-1) words per rank (Li & Hoefler,
 * PPoPP 2022, Table 1).  Residual: selected entries are consumed.
 * Reports "selected", "threshold", "adjust_rounds", "first_over_k" (the
 * first estimate's count over k), "first_in_band" and "ended_in_band"
 * (sp_stat; the last two 0 or 1 per rank).  The data
 * is looked at through sparse_set.h only: exact vectors or a model workload.
 */
#include "algorithm.h"
#include "collectives.h"
#include "sparse_set.h"

#include <stdlib.h>
#include <string.h>

#define TAG_COUNTS 400
#define TAG_PAIRS 401

/* is count m inside the variant's band around k */
static int in_band(double m, double kd, int oktopk)
{
    return oktopk ? m >= 3.0 * kd / 4.0 && m <= 5.0 * kd / 4.0 : m >= 2.0 * kd / 3.0 && m <= 4.0 * kd / 3.0;
}

/* the threshold after the variant's adjustment loop; *rounds = counts done,
 * *first = the first estimate's count */
static float adjust(sp_ctx *c, sp_algo_io *io, uint64_t k, float thr, int oktopk, int *rounds, uint64_t *first)
{
    double kd = (double)k, n = (double)io->n;
    *rounds = 0;
    if (!oktopk) {
        for (int pass = 0; pass < 3; pass++) {
            uint64_t m = sp_count_above(c, io, thr);
            sp_compute(c, SP_K_THRESHOLD, n);
            if (!(*rounds)++)
                *first = m;
            if (pass == 2 || ((double)m >= 2.0 * kd / 3.0 && (double)m <= 4.0 * kd / 3.0))
                break;
            thr = (double)m < 2.0 * kd / 3.0 ? thr * 0.5f : thr * 1.5f;
        }
        return thr;
    }
    uint64_t m = sp_count_above(c, io, thr);
    sp_compute(c, SP_K_THRESHOLD, n);
    *rounds = 1;
    *first = m;
    if ((double)m < 3.0 * kd / 4.0) {
        for (int i = 0; i < 20 && (double)m < 3.0 * kd / 4.0; i++) {
            thr /= 1.02f;
            m = sp_count_above(c, io, thr);
            sp_compute(c, SP_K_THRESHOLD, n);
            (*rounds)++;
        }
    } else if ((double)m > 5.0 * kd / 4.0) {
        for (int i = 0; i < 20 && (double)m > 5.0 * kd / 4.0; i++) {
            thr *= 1.02f;
            m = sp_count_above(c, io, thr);
            sp_compute(c, SP_K_THRESHOLD, n);
            (*rounds)++;
        }
    }
    return thr;
}

int sp_gaussiank(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c);
    uint64_t n = io->n, k = io->k;
    sp_set sel = {0};
    sp_pair *all = NULL;
    uint64_t *counts = malloc((size_t)P * sizeof *counts);
    int exact = sp_data_exact(io), rc = counts ? SP_OK : SP_ERR_MEM;
    if (rc)
        goto out;

    sp_phase(c, "select");
    float thr = sp_gaussian_estimate(c, io, (double)k / (double)n);
    sp_compute(c, SP_K_DENSE_SUM, 2.0 * (double)n); /* mean and deviation: two passes */
    int rounds, okv = io->opts->gaussian_oktopk;
    uint64_t first = 0;
    thr = adjust(c, io, k, thr, okv, &rounds, &first);
    if ((rc = sp_set_above(c, io, thr, &sel)) != SP_OK)
        goto out;
    sp_compute(c, SP_K_THRESHOLD, (double)n);
    sp_set_consume(c, io, &sel);
    sp_stat(c, "selected", (double)sel.count);
    sp_stat(c, "threshold", thr);
    sp_stat(c, "adjust_rounds", rounds);
    sp_stat(c, "first_over_k", k ? (double)first / (double)k : 0);
    /* over the ranks, their means are the shares whose first estimate was in
     * the band, and whose selection ended in it */
    sp_stat(c, "first_in_band", in_band((double)first, (double)k, okv));
    sp_stat(c, "ended_in_band", in_band((double)sel.count, (double)k, okv));

    sp_phase(c, "counts");
    uint64_t total;
    rc = sp_allgather_count(c, sel.count, counts, &total, TAG_COUNTS);
    if (rc)
        goto out;
    sp_phase(c, "allgather");
    if (exact && !(all = malloc((total ? total : 1) * sizeof *all))) {
        rc = SP_ERR_MEM;
        goto out;
    }
    rc = sp_allgatherv_counts(c, sel.pairs, counts, sizeof(sp_pair), all, TAG_PAIRS);
    if (rc)
        goto out;

    sp_phase(c, "sum");
    if (exact) {
        memset(io->result, 0, n * sizeof(float));
        for (uint64_t j = 0; j < total; j++)
            io->result[all[j].idx] += all[j].val;
    }
    sp_compute(c, SP_K_SCATTER_ADD, (double)total);
out:
    sp_set_free(&sel);
    free(all);
    free(counts);
    return rc;
}
