/* topka.c - TopkA: allgather of every rank's local top-k, then a local sum.
 *
 * Each rank selects its exact top-k of |acc|, sends it to all others as k
 * (int32 index, float32 value) pairs, and every rank sums the P selections.
 * Volume: every rank receives k(P-1) pairs = 2k(P-1) words = 8k(P-1) bytes
 * (Renggli et al., SC 2019; Table 1 of Li & Hoefler, PPoPP 2022).
 * Residual: the selected entries are consumed, the rest stays.
 */
#include "algorithm.h"
#include "collectives.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

#define TAG_AG 200

int sp_topka(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c);
    uint64_t n = io->n, k = io->k;
    int exact = io->acc != NULL;
    sp_pair *mine = NULL, *all = NULL;
    int rc = SP_OK;

    sp_phase(c, "select");
    if (exact) {
        mine = malloc(k * sizeof *mine);
        all = malloc((size_t)P * k * sizeof *all);
        if (!mine || !all) {
            rc = SP_ERR_MEM;
            goto out;
        }
        if (sp_topk_exact(io->acc, n, k, mine) != k) {
            rc = SP_ERR_MEM;
            goto out;
        }
        sp_zero_at(io->acc, mine, k);
    }
    sp_compute(c, SP_K_TOPK, (double)n);

    sp_phase(c, "allgather");
    rc = sp_allgather(c, mine, k * sizeof(sp_pair), all, TAG_AG);
    if (rc)
        goto out;

    sp_phase(c, "sum");
    if (exact) {
        memset(io->result, 0, n * sizeof(float));
        for (uint64_t j = 0; j < (uint64_t)P * k; j++)
            io->result[all[j].idx] += all[j].val;
    }
    sp_compute(c, SP_K_SCATTER_ADD, (double)P * (double)k);
out:
    free(mine);
    free(all);
    return rc;
}
