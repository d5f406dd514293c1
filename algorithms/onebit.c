/* onebit.c - error-compensated 1-bit allreduce, the compressed allreduce
 * of 1-bit Adam and 1-bit LAMB (Tang et al., "1-bit Adam", ICML 2021,
 * Algorithm 1 and its section on the compressed allreduce; Li et al.,
 * "1-bit LAMB", HiPC 2022), as DeepSpeed runs it: every rank is a worker
 * and the server of one chunk of the vector.
 *
 *   worker r:  x = acc (its gradient plus its worker residual), cut into P
 *              chunks; chunk j becomes one scale, its RMS ||x_j|| / sqrt(|x_j|),
 *              and a bit per entry, its sign (0 counts as +, as DeepSpeed's
 *              sign().add_(1).bool()); the worker residual is what that
 *              leaves, x_j - scale_j sign(x_j)  (error feedback)
 *   reduce-scatter: chunk j of every worker to rank j, by destination
 *              rotation in buckets of --bucket steps (0: min(4, P))
 *   server j:  s = the sum over workers of scale_i sign_i (in rank order) plus
 *              the server residual e_j; compressed again the same way;
 *              e_j = s - scale sign(s)  (server-side error feedback)
 *   allgather: every server's chunk, by Bruck's allgather; the result is
 *              scale sign(s) chunk by chunk
 *
 * Chosen where DeepSpeed differs: one scale per chunk, sent in the chunk's
 * message (DeepSpeed keeps one scale per worker for the whole buffer and
 * gathers the scales apart); the sum over workers, not their mean, since
 * algorithm.h's result is the sum.  A message is 4 bytes of scale and
 * ceil(len / 8) of bits, so the volume is about n / 16 bytes against the
 * dense ring's 8n (analysis/bounds.c).  Message sizes do not depend on the
 * data: size-only and model payloads send the same messages.
 *
 * Compute, as the device profile prices it: the worker's two passes over n
 * (its norms, then its signs) as threshold filters, the server's sum of P
 * chunks and its two passes, and the unpacking of the result as a copy.
 */
#include "algorithm.h"
#include "blocks.h"
#include "collectives.h"
#include "select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG_RS 2600
#define TAG_AG 2700

/* a chunk's message: its scale, then its signs, one bit each (1: >= 0),
 * the lowest bit first */
static size_t msg_bytes(uint64_t len) { return sizeof(float) + (size_t)((len + 7) / 8); }

/* compresses x[0..len) into msg and leaves in x what that loses */
static void compress(float *x, uint64_t len, unsigned char *msg)
{
    double ss = 0;
    for (uint64_t i = 0; i < len; i++)
        ss += (double)x[i] * x[i];
    float scale = len ? (float)sqrt(ss / (double)len) : 0.0f;
    memcpy(msg, &scale, sizeof scale);
    unsigned char *bits = msg + sizeof scale;
    memset(bits, 0, (size_t)((len + 7) / 8));
    for (uint64_t i = 0; i < len; i++) {
        int pos = !(x[i] < 0.0f);
        bits[i >> 3] |= (unsigned char)(pos << (i & 7));
        x[i] -= pos ? scale : -scale;
    }
}

/* y = (or +=) scale sign of a message */
static void expand(const unsigned char *msg, uint64_t len, float *y, int add)
{
    float scale;
    memcpy(&scale, msg, sizeof scale);
    const unsigned char *bits = msg + sizeof scale;
    for (uint64_t i = 0; i < len; i++) {
        float v = (bits[i >> 3] >> (i & 7)) & 1 ? scale : -scale;
        y[i] = add ? y[i] + v : v;
    }
}

int sp_onebit(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c), exact = io->acc != NULL, rc = SP_OK;
    uint64_t n = io->n, len = sp_block_len(n, P, r);
    /* the worker's P messages (chunk j at out_off[j], bytes[j] long), and the
     * P messages of chunk r it gets as a server (worker i's at in_off[i]) */
    size_t *out_off = malloc(4 * (size_t)P * sizeof *out_off), total = 0;
    size_t *bytes = out_off + P, *in_off = out_off + 2 * P, *in_len = out_off + 3 * P;
    for (int j = 0; out_off && j < P; j++) {
        out_off[j] = total;
        bytes[j] = msg_bytes(sp_block_len(n, P, j));
        total += bytes[j];
        in_len[j] = msg_bytes(len);
        in_off[j] = (size_t)j * in_len[j];
    }
    unsigned char *mine = malloc(msg_bytes(len)), *all = exact ? malloc(total) : NULL;
    unsigned char *out = exact ? malloc(total) : NULL, *in = exact ? malloc((size_t)P * msg_bytes(len)) : NULL;
    float *err = exact ? sp_rank_state(c, (sp_block_len(n, P, 0) + 1) * sizeof(float)) : NULL;
    if (!out_off || !mine || (exact && (!all || !err || !out || !in))) {
        rc = SP_ERR_MEM;
        goto done;
    }

    sp_phase(c, "compress");
    for (int j = 0; exact && j < P; j++)
        compress(io->acc + sp_block_off(n, P, j), sp_block_len(n, P, j), out + out_off[j]);
    if (exact) /* acc holds the worker residual now: a device's copy of it follows */
        sp_acc_rewritten(io->acc, n);
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)n); /* the norms, then the signs */

    sp_phase(c, "reduce-scatter"); /* chunk j of every worker to rank j */
    if ((rc = sp_alltoallv(c, out, out_off, bytes, in, in_off, in_len, io->opts->bucket, TAG_RS)) != SP_OK)
        goto done;

    sp_phase(c, "server");
    if (exact) {
        float *s = err; /* s = the sum of the workers' chunks + the server residual, compressed in place */
        for (int i = 0; i < P; i++)
            expand(in + in_off[i], len, s, 1);
        compress(s, len, mine);
    }
    sp_compute(c, SP_K_DENSE_SUM, (double)P * (double)len);
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)len);

    sp_phase(c, "allgather");
    if ((rc = sp_allgatherv(c, exact ? mine : NULL, bytes, all, TAG_AG)) != SP_OK)
        goto done;
    for (int j = 0; exact && j < P; j++)
        expand(all + out_off[j], sp_block_len(n, P, j), io->result + sp_block_off(n, P, j), 0);
    sp_compute(c, SP_K_COPY, 4.0 * (double)n);

done:
    free(out_off);
    free(out);
    free(in);
    free(mine);
    free(all);
    return rc;
}
