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
 * allgather was used).
 */
#include "algorithm.h"
#include "collectives.h"
#include "rotation.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

#define TAG_COUNTS 500
#define TAG_RS 501
#define TAG_NNZ 502
#define TAG_AG 503

static uint64_t region_off(uint64_t n, int P, int j) { return (uint64_t)j * (n / (uint64_t)P); }
static uint64_t region_len(uint64_t n, int P, int j)
{
    return j == P - 1 ? n - region_off(n, P, j) : n / (uint64_t)P;
}

int sp_topkdsa(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t n = io->n, k = io->k < io->n ? io->k : io->n;
    if (!io->acc)
        return SP_ERR_ARG; /* region counts depend on the data: exact payloads only */
    sp_pair *sel = malloc(k * sizeof *sel), *packed = NULL;
    sp_pair **blocks = calloc((size_t)P, sizeof *blocks);
    uint64_t *scnt = calloc((size_t)P, sizeof *scnt), *rcnt = calloc((size_t)P, sizeof *rcnt);
    uint64_t *nnz = calloc((size_t)P, sizeof *nnz);
    size_t *bytes = calloc((size_t)P, sizeof *bytes);
    uint64_t off = region_off(n, P, r), len = region_len(n, P, r);
    sp_region st;
    int st_ok = sp_region_init(&st, c, (int64_t)off, (int64_t)len) == SP_OK;
    void *gathered = NULL;
    int rc = SP_OK;
    if (!sel || !blocks || !scnt || !rcnt || !nnz || !bytes || !st_ok) {
        rc = SP_ERR_MEM;
        goto out;
    }

    sp_phase(c, "select");
    if (sp_topk_exact(io->acc, n, k, sel) != k) {
        rc = SP_ERR_MEM;
        goto out;
    }
    sp_compute(c, SP_K_TOPK, (double)n);
    for (uint64_t j = 0; j < k; j++)
        io->acc[sel[j].idx] = 0.0f;
    /* the selection is sorted by index: each region's part is contiguous */
    for (uint64_t j = 0; j < k;) {
        int reg = (int)((uint64_t)sel[j].idx / (n / (uint64_t)P));
        if (reg > P - 1)
            reg = P - 1;
        uint64_t start = j;
        while (j < k && ((uint64_t)sel[j].idx < region_off(n, P, reg) + region_len(n, P, reg)))
            j++;
        blocks[reg] = sel + start;
        scnt[reg] = j - start;
    }

    sp_phase(c, "counts");
    rc = sp_alltoall_counts(c, scnt, rcnt, TAG_COUNTS);
    if (rc)
        goto out;

    sp_phase(c, "reduce-scatter");
    sp_region_add(blocks[r], scnt[r], r, &st); /* my own part: a local copy */
    rc = sp_rotation_exchange(c, blocks, scnt, rcnt, io->opts->bucket, TAG_RS, 1, 0, sp_region_add,
                              &st);
    if (rc)
        goto out;
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
    memset(io->result, 0, n * sizeof(float));
    if (dense) {
        for (int j = 0; j < P; j++)
            bytes[j] = region_len(n, P, j) * sizeof(float);
        /* regions are contiguous and in rank order: gather straight into the result */
        rc = sp_allgatherv(c, st.values, bytes, io->result, TAG_AG);
    } else {
        packed = malloc((mine ? mine : 1) * sizeof *packed);
        gathered = malloc((total ? total : 1) * sizeof(sp_pair));
        if (!packed || !gathered) {
            rc = SP_ERR_MEM;
            goto out;
        }
        sp_region_pack(&st, -1.0f, packed);
        for (int j = 0; j < P; j++)
            bytes[j] = nnz[j] * sizeof(sp_pair);
        rc = sp_allgatherv(c, packed, bytes, gathered, TAG_AG);
        if (rc == SP_OK) {
            sp_phase(c, "update");
            const sp_pair *g = gathered;
            for (uint64_t j = 0; j < total; j++)
                io->result[g[j].idx] = g[j].val;
            sp_compute(c, SP_K_SCATTER_ADD, (double)total);
        }
    }
out:
    free(sel);
    free(packed);
    free(gathered);
    free(blocks);
    free(scnt);
    free(rcnt);
    free(nnz);
    free(bytes);
    sp_region_free(&st);
    return rc;
}
