/* bounds.c - closed forms, each with its citation. */
#include "bounds.h"

#include <math.h>
#include <string.h>

static int pow2_floor(int P)
{
    int p2 = 1;
    while (p2 * 2 <= P)
        p2 *= 2;
    return p2;
}

static int ceil_log2(int P)
{
    int r = 0;
    while ((1 << r) < P)
        r++;
    return r;
}

int sp_bound_volume(const char *algo, int P, uint64_t n, uint64_t k, sp_bound *b)
{
    double Pd = P, nd = (double)n, kd = (double)k;
    int p2 = pow2_floor(P), rem = P - p2;
    double lg = log2((double)p2);
    memset(b, 0, sizeof *b);
    /* dense lower bound: every rank must receive the other ranks' share of
     * each of its reduced entries and send its own (Patarasuk & Yuan, 2009) */
    b->lower_words = 2.0 * nd * (Pd - 1) / Pd;
    b->lower_formula = "2n(P-1)/P";
    if (strcmp(algo, "ring") == 0) {
        /* Patarasuk & Yuan, JPDC 2009; gTop-k paper's cost model (Shi et al., ICDCS 2019) */
        b->words = 2.0 * nd * (Pd - 1) / Pd;
        b->formula = "2n(P-1)/P";
        b->source = "Patarasuk & Yuan, JPDC 69(2) 2009";
    } else if (strcmp(algo, "recdoubling") == 0) {
        /* Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005: n log2 P; the
         * non-power-of-two fold adds one vector in and one out */
        b->words = nd * lg + (rem ? 2.0 * nd : 0.0);
        b->formula = rem ? "n(log2 p2 + 2), p2 = 2^floor(log2 P)" : "n log2 P";
        b->source = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005";
    } else if (strcmp(algo, "rabenseifner") == 0) {
        b->words = 2.0 * nd * (p2 - 1) / p2 + (rem ? 2.0 * nd : 0.0);
        b->formula = rem ? "2n(p2-1)/p2 + 2n, p2 = 2^floor(log2 P)" : "2n(P-1)/P";
        b->source = "Rabenseifner, ICCS 2004; Thakur et al., IJHPCA 2005";
    } else if (strcmp(algo, "topka") == 0) {
        /* Li & Hoefler, PPoPP 2022, Table 1; Renggli et al., SC 2019 */
        b->words = 2.0 * kd * (Pd - 1);
        b->formula = "2k(P-1)";
        b->source = "Li & Hoefler, PPoPP 2022, Table 1";
    } else if (strcmp(algo, "gtopk") == 0) {
        /* Shi et al., ICDCS 2019: reduction 2k log P words, plus the broadcast */
        b->words = 4.0 * kd * ceil_log2(P);
        b->formula = "4k ceil(log2 P)";
        b->source = "Shi et al., ICDCS 2019; Li & Hoefler, PPoPP 2022, Table 1";
    } else if (strcmp(algo, "gaussiank") == 0) {
        /* an allgather of about k pairs per rank */
        b->words = 2.0 * kd * (Pd - 1);
        b->formula = "2k(P-1) (about: counts vary)";
        b->source = "Li & Hoefler, PPoPP 2022, Table 1";
    } else if (strcmp(algo, "topkdsa") == 0) {
        /* Renggli et al., SC 2019; Li & Hoefler, PPoPP 2022, Table 1 */
        b->words = (2.0 * kd + nd) * (Pd - 1) / Pd;
        b->floor_words = 4.0 * kd * (Pd - 1) / Pd;
        b->formula = "(2k+n)(P-1)/P, at least 4k(P-1)/P";
        b->source = "Renggli et al., SC 2019; Li & Hoefler, PPoPP 2022, Table 1";
    } else if (strcmp(algo, "oktopk") == 0) {
        /* Li & Hoefler, PPoPP 2022, Eq. 3 */
        b->words = 6.0 * kd * (Pd - 1) / Pd;
        b->formula = "6k(P-1)/P";
        b->source = "Li & Hoefler, PPoPP 2022, Eq. 3";
    } else {
        return -1;
    }
    if (strcmp(algo, "ring") && strcmp(algo, "recdoubling") && strcmp(algo, "rabenseifner")) {
        /* sparse lower bound, Li & Hoefler, PPoPP 2022, Theorem 3.1 */
        b->lower_words = 2.0 * kd * (Pd - 1) / Pd;
        b->lower_formula = "2k(P-1)/P";
    }
    return 0;
}

double sp_predict_time(const char *algo, int P, uint64_t n, uint64_t k, double alpha, double beta)
{
    if (P <= 1)
        return 0.0;
    double Pd = P, nd = (double)n;
    int p2 = pow2_floor(P), rem = P - p2;
    double lg = log2((double)p2);
    if (strcmp(algo, "ring") == 0) {
        /* 2(P-1) steps of one block; the largest block paces each step */
        double blk = ceil(nd / Pd);
        return 2.0 * (Pd - 1) * (alpha + 4.0 * blk * beta);
    }
    if (strcmp(algo, "recdoubling") == 0)
        return (lg + (rem ? 2 : 0)) * (alpha + 4.0 * nd * beta);
    if (strcmp(algo, "rabenseifner") == 0)
        return 2.0 * lg * alpha + 2.0 * 4.0 * nd * (p2 - 1) / p2 * beta +
               (rem ? 2.0 * (alpha + 4.0 * nd * beta) : 0.0);
    if (strcmp(algo, "topka") == 0)
        /* Bruck allgather: ceil(log2 P) rounds, (P-1) blocks of 8k bytes */
        return ceil_log2(P) * alpha + 8.0 * (double)k * (Pd - 1) * beta;
    if (strcmp(algo, "gtopk") == 0)
        /* ceil(log2 P) rounds of one 8k-byte message up the tree and down again */
        return 2.0 * ceil_log2(P) * (alpha + 8.0 * (double)k * beta);
    if (strcmp(algo, "oktopk") == 0)
        /* Li & Hoefler, PPoPP 2022, Eq. 3: (2P + 2 log P) alpha + 6k(P-1)/P words */
        return (2.0 * Pd + 2.0 * ceil_log2(P)) * alpha + 4.0 * 6.0 * (double)k * (Pd - 1) / Pd * beta;
    if (strcmp(algo, "topkdsa") == 0)
        /* Renggli et al., SC 2019 (as Table 1 of Li & Hoefler): (P + 2 log P) alpha, and
         * the sparse end of its bandwidth term, 4k(P-1)/P words */
        return (Pd + 2.0 * ceil_log2(P)) * alpha + 4.0 * 4.0 * (double)k * (Pd - 1) / Pd * beta;
    if (strcmp(algo, "gaussiank") == 0)
        /* counts, then about k pairs per rank, both by Bruck's allgather */
        return 2.0 * ceil_log2(P) * alpha + 8.0 * (Pd - 1) * beta + 8.0 * (double)k * (Pd - 1) * beta;
    return -1.0;
}
