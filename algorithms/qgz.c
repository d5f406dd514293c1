/* qgz.c - a quantized allreduce as ZeRO++'s qgZ runs its reduce-scatter
 * (Wang et al., "ZeRO++", ICLR 2024, section 3.3: block-wise INT4
 * quantization, a hierarchical all-to-all inside the node first, then
 * across the nodes), followed by a quantized allgather so that every rank
 * holds the result (ZeRO++ stops at the reduce-scatter: its optimizer
 * states are sharded).
 *
 * Ranks on N nodes of G GPUs (rank r = GPU j of node a; flat: G = 1).
 * Shard s of the vector (P blocks) ends at rank s.
 *   1. (G > 1) quantize the whole vector; to every GPU l of its node send the
 *      shards that end on rail l, (m, l) for every node m; sum the G
 *      contributions to the shards of rail j, dequantized, in local order
 *   2. quantize those N partial sums (flat: the rank's own shards); to GPU
 *      j of every node m send shard (m, j); sum the N contributions to its
 *      own shard in node order
 *   3. quantize the reduced shard; Bruck's allgather along the rail, then
 *      inside the node; every rank dequantizes all P shards, its own too,
 *      so the result is the same everywhere
 * The all-to-alls go by destination rotation in buckets of --bucket steps
 * (0: min(4, peers)).
 *
 * Quantization: symmetric, one scale per block of --quant-block entries,
 * max |x| / (2^(b-1) - 1), codes round(x / scale) clamped to +-(2^(b-1) - 1)
 * with --quant-bits b (4: ZeRO++'s INT4), packed lowest bit first; a
 * message of L entries is 4 ceil(L / block) + ceil(L b / 8) bytes
 * (sp_qgz_bytes).  Symmetric codes and the block of 256 are chosen: the
 * paper's figures do not settle either.  No error feedback, as in ZeRO++:
 * every entry is delivered, quantized, and the residual is zero.
 *
 * Compute, as the device profile prices it: each quantization's two passes
 * (the block maxima, then the codes) as threshold filters, each
 * dequantize-and-add as a dense sum.
 */
#include "algorithm.h"
#include "blocks.h"
#include "collectives.h"
#include "select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG_INTRA 2800
#define TAG_INTER 2900
#define TAG_AG_RAIL 3000
#define TAG_AG_NODE 3100

typedef struct {
    uint64_t n;
    int P, G, N, a, j, bits, block, bucket;
    int exact;
} qgz;

static uint64_t shard_len(const qgz *q, int s) { return sp_block_len(q->n, q->P, s); }
static uint64_t shard_off(const qgz *q, int s) { return sp_block_off(q->n, q->P, s); }
static uint64_t qbytes(const qgz *q, uint64_t len) { return sp_qgz_bytes(len, q->bits, q->block); }

/* x[0..len) into msg: the blocks' scales, then the codes */
static void quantize(const qgz *q, const float *x, uint64_t len, unsigned char *msg)
{
    uint64_t nb = (len + (uint64_t)q->block - 1) / (uint64_t)q->block;
    int qmax = (1 << (q->bits - 1)) - 1;
    unsigned char *codes = msg + 4 * nb;
    memset(codes, 0, (size_t)((len * (uint64_t)q->bits + 7) / 8));
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t lo = b * (uint64_t)q->block, hi = lo + (uint64_t)q->block < len ? lo + (uint64_t)q->block : len;
        float amax = 0;
        for (uint64_t i = lo; i < hi; i++)
            amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
        float scale = amax / (float)qmax;
        memcpy(msg + 4 * b, &scale, 4);
        for (uint64_t i = lo; i < hi; i++) {
            long v = scale > 0 ? lroundf(x[i] / scale) : 0;
            v = v > qmax ? qmax : v < -qmax ? -qmax : v;
            uint64_t u = (uint64_t)(v + qmax + 1), at = i * (uint64_t)q->bits; /* 1 .. 2 qmax + 1 */
            for (int k = 0; k < q->bits; k++, at++)
                codes[at >> 3] |= (unsigned char)(((u >> k) & 1) << (at & 7));
        }
    }
}

/* y (+)= the values of msg */
static void dequantize(const qgz *q, const unsigned char *msg, uint64_t len, float *y, int add)
{
    uint64_t nb = (len + (uint64_t)q->block - 1) / (uint64_t)q->block;
    int qmax = (1 << (q->bits - 1)) - 1;
    const unsigned char *codes = msg + 4 * nb;
    for (uint64_t i = 0; i < len; i++) {
        float scale;
        memcpy(&scale, msg + 4 * (i / (uint64_t)q->block), 4);
        uint64_t u = 0, at = i * (uint64_t)q->bits;
        for (int k = 0; k < q->bits; k++, at++)
            u |= (uint64_t)((codes[at >> 3] >> (at & 7)) & 1) << k;
        float v = (float)((long)u - qmax - 1) * scale;
        y[i] = add ? y[i] + v : v;
    }
}

/* one all-to-all of quantized blocks among `count` peers: peer p's block
 * out at ooff[p] (olen[p] bytes) and in at ioff[p] (ilen[p] bytes); the
 * buffers only with exact data */
typedef struct {
    int count;
    size_t *ooff, *olen, *ioff, *ilen;
    unsigned char *out, *in;
} xchg;

static void xchg_free(xchg *x)
{
    free(x->ooff);
    free(x->out);
    free(x->in);
}

/* the layouts, all lengths 0 (the caller fills olen and ilen, then xchg_place) */
static int xchg_init(xchg *x, int count)
{
    memset(x, 0, sizeof *x);
    x->count = count;
    if (!(x->ooff = calloc(4 * (size_t)count, sizeof *x->ooff)))
        return SP_ERR_MEM;
    x->olen = x->ooff + count;
    x->ioff = x->ooff + 2 * count;
    x->ilen = x->ooff + 3 * count;
    return SP_OK;
}

/* offsets from the lengths, and the buffers */
static int xchg_place(xchg *x, int exact)
{
    size_t ot = 0, it = 0;
    for (int p = 0; p < x->count; p++) {
        x->ooff[p] = ot;
        x->ioff[p] = it;
        ot += x->olen[p];
        it += x->ilen[p];
    }
    if (exact && (!(x->out = malloc(ot ? ot : 1)) || !(x->in = malloc(it ? it : 1))))
        return SP_ERR_MEM;
    return SP_OK;
}

/* the exchange among the group (first, stride, count) */
static int xchg_run(sp_ctx *c, const qgz *q, const xchg *x, int first, int stride, int tag)
{
    int rc = sp_group_enter(c, first, stride, x->count);
    if (rc != SP_OK)
        return rc;
    rc = sp_alltoallv(c, x->out, x->ooff, x->olen, x->in, x->ioff, x->ilen, q->bucket, tag);
    sp_group_leave(c);
    return rc;
}

/* stage 1 (in the node): every GPU l gets this GPU's quantized shards (m, l)
 * for m = 0..N-1; *part (N partial sums, shard (m, j) at part + poff[m])
 * gets the node's sum of the shards of rail j */
static int node_stage(sp_ctx *c, const qgz *q, const float *x, float *part, const uint64_t *poff)
{
    int G = q->G, N = q->N;
    xchg e;
    int rc = xchg_init(&e, G);
    for (int l = 0; rc == SP_OK && l < G; l++)
        for (int m = 0; m < N; m++) {
            e.olen[l] += qbytes(q, shard_len(q, m * G + l));
            e.ilen[l] += qbytes(q, shard_len(q, m * G + q->j));
        }
    if (rc == SP_OK)
        rc = xchg_place(&e, q->exact);
    for (int l = 0; rc == SP_OK && q->exact && l < G; l++)
        for (size_t m = 0, at = e.ooff[l]; m < (size_t)N; m++) {
            int s = (int)m * G + l;
            quantize(q, x + shard_off(q, s), shard_len(q, s), e.out + at);
            at += qbytes(q, shard_len(q, s));
        }
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)q->n);
    if (rc == SP_OK)
        rc = xchg_run(c, q, &e, q->a * G, 1, TAG_INTRA);
    for (int l = 0; rc == SP_OK && q->exact && l < G; l++)
        for (size_t m = 0, at = e.ioff[l]; m < (size_t)N; m++) {
            uint64_t len = shard_len(q, (int)m * G + q->j);
            dequantize(q, e.in + at, len, part + poff[m], l > 0);
            at += qbytes(q, len);
        }
    sp_compute(c, SP_K_DENSE_SUM, (double)G * (double)(poff[N]));
    xchg_free(&e);
    return rc;
}

/* stage 2 (along the rail): GPU j of node m gets the partial sum of shard
 * (m, j); *mine gets the sum over the nodes of this rank's own shard */
static int rail_stage(sp_ctx *c, const qgz *q, const float *part, const uint64_t *poff, float *mine)
{
    int N = q->N, G = q->G;
    uint64_t len = shard_len(q, q->a * G + q->j);
    xchg e;
    int rc = xchg_init(&e, N);
    for (int m = 0; rc == SP_OK && m < N; m++) {
        e.olen[m] = qbytes(q, shard_len(q, m * G + q->j));
        e.ilen[m] = qbytes(q, len);
    }
    if (rc == SP_OK)
        rc = xchg_place(&e, q->exact);
    for (int m = 0; rc == SP_OK && q->exact && m < N; m++)
        quantize(q, part + poff[m], shard_len(q, m * G + q->j), e.out + e.ooff[m]);
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)poff[N]);
    if (rc == SP_OK)
        rc = xchg_run(c, q, &e, q->j, G, TAG_INTER);
    for (int m = 0; rc == SP_OK && q->exact && m < N; m++)
        dequantize(q, e.in + e.ioff[m], len, mine, m > 0);
    sp_compute(c, SP_K_DENSE_SUM, (double)N * (double)len);
    xchg_free(&e);
    return rc;
}

/* stage 3: the quantized shards along the rail, then inside the node; the
 * result dequantized from them all */
static int gather_stage(sp_ctx *c, const qgz *q, const float *mine, float *result)
{
    int N = q->N, G = q->G, rc = SP_OK;
    size_t *rail = malloc((size_t)N * sizeof *rail), *node = malloc((size_t)G * sizeof *node);
    unsigned char *own = NULL, *got = NULL, *all = NULL;
    if (!rail || !node) {
        rc = SP_ERR_MEM;
        goto done;
    }
    size_t rt = 0, nt = 0;
    for (int m = 0; m < N; m++)
        rt += rail[m] = qbytes(q, shard_len(q, m * G + q->j));
    for (int l = 0; l < G; l++) {
        node[l] = 0;
        for (int m = 0; m < N; m++)
            node[l] += qbytes(q, shard_len(q, m * G + l));
        nt += node[l];
    }
    if (q->exact && (!(own = malloc(rail[q->a])) || !(got = malloc(rt ? rt : 1)) || !(all = malloc(nt ? nt : 1)))) {
        rc = SP_ERR_MEM;
        goto done;
    }
    if (q->exact)
        quantize(q, mine, shard_len(q, q->a * G + q->j), own);
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)shard_len(q, q->a * G + q->j));
    if ((rc = sp_group_enter(c, q->j, G, N)) != SP_OK)
        goto done;
    rc = sp_allgatherv(c, own, rail, got, TAG_AG_RAIL); /* shards (m, j), m = 0..N-1, in order */
    sp_group_leave(c);
    if (rc == SP_OK && (rc = sp_group_enter(c, q->a * G, 1, G)) == SP_OK) {
        rc = sp_allgatherv(c, got, node, all, TAG_AG_NODE); /* rail l's N shards, l = 0..G-1 */
        sp_group_leave(c);
    }
    size_t at = 0;
    for (int l = 0; rc == SP_OK && q->exact && l < G; l++)
        for (int m = 0; m < N; m++) {
            int s = m * G + l;
            dequantize(q, all + at, shard_len(q, s), result + shard_off(q, s), 0);
            at += qbytes(q, shard_len(q, s));
        }
    sp_compute(c, SP_K_COPY, 4.0 * (double)q->n);
done:
    free(rail);
    free(node);
    free(own);
    free(got);
    free(all);
    return rc;
}

int sp_qgz(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c), G = sp_node_size(c);
    if (G < 1 || P % G)
        G = 1; /* not whole nodes: flat */
    const sp_algo_opts *o = io->opts;
    qgz q = {.n = io->n, .P = P, .G = G, .N = P / G, .a = r / G, .j = r % G,
             .bits = o->quant_bits >= 2 && o->quant_bits <= 8 ? o->quant_bits : 4,
             .block = o->quant_block > 0 ? o->quant_block : 256, .bucket = o->bucket, .exact = io->acc != NULL};
    uint64_t *poff = malloc((size_t)(q.N + 1) * sizeof *poff);
    if (!poff)
        return SP_ERR_MEM;
    poff[0] = 0;
    for (int m = 0; m < q.N; m++)
        poff[m + 1] = poff[m] + shard_len(&q, m * G + q.j);
    float *part = q.exact && G > 1 ? malloc((poff[q.N] ? poff[q.N] : 1) * sizeof *part) : NULL;
    float *mine = q.exact ? malloc((shard_len(&q, r) + 1) * sizeof *mine) : NULL;
    int rc = q.exact && ((G > 1 && !part) || !mine) ? SP_ERR_MEM : SP_OK;
    if (rc == SP_OK && G > 1) {
        sp_phase(c, "node-all-to-all");
        rc = node_stage(c, &q, io->acc, part, poff);
    }
    if (rc == SP_OK) { /* flat: the rank's own vector is the one partial sum, shard m at poff[m] */
        sp_phase(c, G > 1 ? "rail-all-to-all" : "all-to-all");
        rc = rail_stage(c, &q, G > 1 ? part : io->acc, poff, mine);
    }
    if (rc == SP_OK) {
        sp_phase(c, "allgather");
        rc = gather_stage(c, &q, mine, io->result);
    }
    if (rc == SP_OK && q.exact) /* every entry delivered, quantized: no residual (a device's copy too) */
        sp_zero_all(io->acc, io->n);
    free(poff);
    free(part);
    free(mine);
    return rc;
}
