/* topkdsa.c - TopkDSA, SparCML's dynamic sparse allreduce (Renggli et al.,
 * SC 2019, "DSAR split-allgather"), as the Ok-Topk authors run it.
 *
 * Each rank selects its exact local top-k, splits it over P equal index
 * regions (floor(n/P) each, the last takes the remainder), exchanges counts
 * (alltoall), then reduce-scatters the pairs point to point with destination
 * rotation in buckets (rotation.c): rank j sums everything that falls into
 * region j.  The reduced regions are then all-gathered: as pairs while the
 * total of reduced non-zeros stays below --dsa-dense-at x n (default n/3, the
 * Ok-Topk code's rule), densely (each region's floats) beyond it, because the
 * sparse form of a filled-in vector costs more than the dense one.
 * Volume per rank between 4k(P-1)/P and (2k+n)(P-1)/P words (Li & Hoefler,
 * PPoPP 2022, Table 1).  Residual: every selected entry is consumed.
 * Reports "reduced_nnz" (this rank's region) and "dense" (1 if the dense
 * allgather was used).  The data is looked at through sparse_set.h only:
 * exact vectors or a model workload.
 */
#include "algorithm.h"
#include "collectives.h"
#include "rotation.h"
#include "sparse_set.h"

#include <stdlib.h>
#include <string.h>

#define TAG_COUNTS 500
#define TAG_RS 501
#define TAG_NNZ 502
#define TAG_AG 503

static uint64_t region_off(uint64_t n, int P, int j) { return j == P ? n : (uint64_t)j * (n / (uint64_t)P); }
static uint64_t region_len(uint64_t n, int P, int j) { return region_off(n, P, j + 1) - region_off(n, P, j); }

int sp_topkdsa(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t n = io->n, k = io->k < io->n ? io->k : io->n;
    int exact = sp_data_exact(io);
    sp_set sel = {0};
    sp_pair *packed = NULL;
    /* arrays of P entries live only through the steps that use them, since
     * every rank holds them at once (P^2 in all, issue 27); blocks only in
     * exact mode, where they point at pairs */
    sp_pair **blocks = exact ? calloc((size_t)P, sizeof *blocks) : NULL;
    uint32_t *scnt = calloc((size_t)P, sizeof *scnt), *rcnt = calloc((size_t)P, sizeof *rcnt); /* n < 2^31 */
    uint64_t *nnz = NULL;
    size_t *bytes = NULL;
    int32_t *bounds = calloc((size_t)P + 1, sizeof *bounds); /* n < 2^31 */
    uint64_t off = region_off(n, P, r), len = region_len(n, P, r);
    sp_region st = {0};
    void *gathered = NULL;
    int rc = SP_OK;
    if ((exact && !blocks) || !scnt || !rcnt || !bounds) {
        rc = SP_ERR_MEM;
        goto out;
    }

    sp_phase(c, "select");
    if ((rc = sp_set_topk(c, io, k, &sel)) != SP_OK)
        goto out;
    sp_compute(c, SP_K_TOPK, (double)n);
    sp_set_consume(c, io, &sel);
    if (sp_region_init(&st, c, (int64_t)off, (int64_t)len, exact, sel.thr) != SP_OK) {
        rc = SP_ERR_MEM;
        goto out;
    }
    for (int j = 0; j <= P; j++)
        bounds[j] = (int32_t)region_off(n, P, j);
    sp_set_split(c, &sel, bounds, P, scnt, blocks);
    free(bounds);
    bounds = NULL;

    sp_phase(c, "counts");
    rc = sp_alltoall_counts(c, scnt, rcnt, TAG_COUNTS);
    if (rc)
        goto out;

    sp_phase(c, "reduce-scatter");
    sp_region_add(blocks ? blocks[r] : NULL, scnt[r], r, &st); /* my own part: a local copy */
    rc = sp_rotation_exchange(c, blocks, scnt, rcnt, io->opts->bucket, TAG_RS, exact, 0, sp_region_add, &st);
    if (rc)
        goto out;
    free(blocks);
    free(scnt);
    free(rcnt);
    blocks = NULL;
    scnt = rcnt = NULL;
    nnz = calloc((size_t)P, sizeof *nnz);
    if (!nnz) {
        rc = SP_ERR_MEM;
        goto out;
    }
    uint64_t mine = sp_region_nnz(&st);
    sp_stat(c, "reduced_nnz", (double)mine);

    sp_phase(c, "counts");
    uint64_t total;
    rc = sp_allgather_count(c, mine, nnz, &total, TAG_NNZ);
    if (rc)
        goto out;
    double dense_at = io->opts->dsa_dense_at;
    int dense = (double)total >= dense_at * (double)n;
    sp_stat(c, "dense", dense);
    sp_phase(c, "allgather");
    if (exact)
        memset(io->result, 0, n * sizeof(float));
    if (dense) {
        if (!(bytes = calloc((size_t)P, sizeof *bytes))) { /* the dense branch's only: the sparse one gathers by counts */
            rc = SP_ERR_MEM;
            goto out;
        }
        for (int j = 0; j < P; j++)
            bytes[j] = region_len(n, P, j) * sizeof(float);
        /* regions are contiguous and in rank order: gather straight into the result */
        rc = sp_allgatherv(c, st.values, bytes, io->result, TAG_AG);
    } else {
        if (exact) {
            packed = malloc((mine ? mine : 1) * sizeof *packed);
            gathered = malloc((total ? total : 1) * sizeof(sp_pair));
            if (!packed || !gathered) {
                rc = SP_ERR_MEM;
                goto out;
            }
            sp_region_pack(&st, -1.0f, packed);
        }
        rc = sp_allgatherv_counts(c, packed, nnz, sizeof(sp_pair), gathered, TAG_AG);
        if (rc == SP_OK) {
            sp_phase(c, "update");
            const sp_pair *g = gathered;
            for (uint64_t j = 0; exact && j < total; j++)
                io->result[g[j].idx] = g[j].val;
            sp_compute(c, SP_K_SCATTER_ADD, (double)total);
        }
    }
out:
    sp_set_free(&sel);
    free(packed);
    free(gathered);
    free(blocks);
    free(scnt);
    free(rcnt);
    free(nnz);
    free(bytes);
    free(bounds);
    sp_region_free(&st);
    return rc;
}
