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

typedef struct {
    uint64_t n;
    int P, r;
    unsigned char *out; /* the worker's P messages, chunk j at out_off[j] (NULL: size only) */
    unsigned char *in;  /* the messages of chunk r from every worker, worker i's at i * msg_bytes(len_r) */
    size_t *out_off, *bytes;
} onebit;

/* chunk r of every worker to rank r: at step t rank r sends to r + t and
 * receives from r - t, b steps at a time */
static int reduce_scatter(sp_ctx *c, const onebit *o, int bucket)
{
    int P = o->P, r = o->r, rc = SP_OK;
    size_t mine = o->bytes[r];
    if (o->in)
        memcpy(o->in + (size_t)r * mine, o->out + o->out_off[r], mine);
    sp_req **q = malloc(2 * (size_t)bucket * sizeof *q);
    if (!q)
        return SP_ERR_MEM;
    for (int t0 = 1; t0 < P && rc == SP_OK; t0 += bucket) {
        int m = 0;
        for (int t = t0; t < t0 + bucket && t < P; t++) {
            int to = (r + t) % P, from = (r - t + P) % P;
            q[m++] = sp_irecv(c, from, TAG_RS, o->in ? o->in + (size_t)from * mine : NULL, mine);
            q[m++] = sp_isend(c, to, TAG_RS, o->out ? o->out + o->out_off[to] : NULL, o->bytes[to]);
        }
        rc = sp_waitall(c, q, m, NULL);
    }
    free(q);
    return rc;
}

int sp_onebit(sp_ctx *c, sp_algo_io *io)
{
    int P = sp_size(c), r = sp_rank(c), exact = io->acc != NULL, rc = SP_OK;
    uint64_t n = io->n, len = sp_block_len(n, P, r);
    int bucket = io->opts->bucket > 0 ? io->opts->bucket : (P < 4 ? P : 4);
    onebit o = {.n = n, .P = P, .r = r};
    o.out_off = malloc((size_t)P * sizeof *o.out_off);
    o.bytes = malloc((size_t)P * sizeof *o.bytes);
    size_t total = 0;
    for (int j = 0; o.out_off && o.bytes && j < P; j++) {
        o.out_off[j] = total;
        o.bytes[j] = msg_bytes(sp_block_len(n, P, j));
        total += o.bytes[j];
    }
    unsigned char *mine = malloc(o.bytes ? o.bytes[r] : 1), *all = exact ? malloc(total) : NULL;
    float *err = exact ? sp_rank_state(c, (sp_block_len(n, P, 0) + 1) * sizeof(float)) : NULL;
    if (exact) {
        o.out = malloc(total);
        o.in = malloc((size_t)P * msg_bytes(len));
    }
    if (!o.out_off || !o.bytes || !mine || (exact && (!all || !err || !o.out || !o.in))) {
        rc = SP_ERR_MEM;
        goto done;
    }

    sp_phase(c, "compress");
    for (int j = 0; exact && j < P; j++)
        compress(io->acc + sp_block_off(n, P, j), sp_block_len(n, P, j), o.out + o.out_off[j]);
    if (exact) /* acc holds the worker residual now: a device's copy of it follows */
        sp_acc_rewritten(io->acc, n);
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)n); /* the norms, then the signs */

    sp_phase(c, "reduce-scatter");
    if ((rc = reduce_scatter(c, &o, bucket)) != SP_OK)
        goto done;

    sp_phase(c, "server");
    if (exact) {
        float *s = err; /* s = the sum of the workers' chunks + the server residual, compressed in place */
        for (int i = 0; i < P; i++)
            expand(o.in + (size_t)i * o.bytes[r], len, s, 1);
        compress(s, len, mine);
    }
    sp_compute(c, SP_K_DENSE_SUM, (double)P * (double)len);
    sp_compute(c, SP_K_THRESHOLD, 2.0 * (double)len);

    sp_phase(c, "allgather");
    if ((rc = sp_allgatherv(c, exact ? mine : NULL, o.bytes, all, TAG_AG)) != SP_OK)
        goto done;
    for (int j = 0; exact && j < P; j++)
        expand(all + o.out_off[j], sp_block_len(n, P, j), io->result + sp_block_off(n, P, j), 0);
    sp_compute(c, SP_K_COPY, 4.0 * (double)n);

done:
    free(o.out_off);
    free(o.bytes);
    free(o.out);
    free(o.in);
    free(mine);
    free(all);
    return rc;
}
