/* gtopk.c - gTop-k (Shi et al., ICDCS 2019): a tree reduction that keeps only
 * the top k at every merge, then a broadcast of the k global pairs.
 *
 * Round i = 0 .. ceil(log2 P) - 1: rank r with r mod 2^(i+1) = 0 receives k
 * pairs from r + 2^i (when that rank exists), adds values on common indices
 * and keeps the top k of the union; rank r with r mod 2^(i+1) = 2^i sends its
 * k pairs to r - 2^i and drops out.  Rank 0 then broadcasts the k pairs down
 * a binomial tree (0->1; 0->2, 1->3; ...).  Any P, not only powers of two:
 * a rank without partner in a round just waits for the next one.
 * Exactly 2(P-1) messages of 8k bytes; volume 4k ceil(log2 P) words per rank
 * (reduction plus broadcast; the paper's README counts the reduction only).
 * Residual (the authors' rule): local top-k entries whose index made it into
 * the global k are consumed; the others stay.  The rule is not
 * mass-preserving for P >= 3: a rank whose entry was cut at one merge still
 * zeroes it when the same index reached the root through another subtree
 * (tests/test_results.c measures it).
 */
#include "algorithm.h"
#include "collectives.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

#define TAG_REDUCE 300
#define TAG_BCAST 301

int sp_gtopk(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c);
    uint64_t n = io->n, k = io->k < io->n ? io->k : io->n;
    int exact = io->acc != NULL;
    size_t kb = k * sizeof(sp_pair);
    sp_pair *mine = NULL, *cur = NULL, *in = NULL, *merged = NULL;
    int rc = SP_OK;

    sp_phase(c, "select");
    if (exact) {
        mine = malloc(kb);
        cur = malloc(kb);
        in = malloc(kb);
        merged = malloc(2 * kb);
        if (!mine || !cur || !in || !merged) {
            rc = SP_ERR_MEM;
            goto out;
        }
        if (sp_topk_exact(io->acc, n, k, mine) != k) {
            rc = SP_ERR_MEM;
            goto out;
        }
        memcpy(cur, mine, kb);
    }
    sp_compute(c, SP_K_TOPK, (double)n);

    sp_phase(c, "reduce");
    for (int step = 1; step < P; step <<= 1) {
        if (r % (2 * step) == 0) {
            if (r + step >= P)
                continue;
            long long got = sp_wait(c, sp_irecv(c, r + step, TAG_REDUCE, in, kb));
            if (got < 0) {
                rc = (int)got;
                goto out;
            }
            if (exact) {
                uint64_t m = sp_merge_add(cur, k, in, k, merged);
                if (sp_topk_pairs(merged, m, k, cur) != k) {
                    rc = SP_ERR_MEM;
                    goto out;
                }
            }
            sp_compute(c, SP_K_MERGE, 2.0 * (double)k);
            sp_compute(c, SP_K_TOPK, 2.0 * (double)k);
        } else if (r % (2 * step) == step) {
            long long w = sp_wait(c, sp_isend(c, r - step, TAG_REDUCE, cur, kb));
            if (w < 0) {
                rc = (int)w;
                goto out;
            }
            break;
        }
    }

    sp_phase(c, "bcast");
    rc = sp_bcast(c, cur, kb, 0, TAG_BCAST);
    if (rc)
        goto out;

    sp_phase(c, "update");
    if (exact) {
        memset(io->result, 0, n * sizeof(float));
        for (uint64_t j = 0; j < k; j++)
            io->result[cur[j].idx] = cur[j].val;
        sp_consume_delivered(io->acc, mine, k, cur, k);
    }
    sp_compute(c, SP_K_SCATTER_ADD, (double)k);
out:
    free(mine);
    free(cur);
    free(in);
    free(merged);
    return rc;
}
