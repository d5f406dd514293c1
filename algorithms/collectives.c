/* collectives.c - collectives on top of the shim's point-to-point calls.
 *
 * Written once here so that every backend sends the same messages.  Bruck's
 * allgather is used for the gathers because it needs ceil(log2 P) rounds for
 * any P (recursive doubling needs a power of two) and delivers exactly
 * (P-1) blocks to every rank, which is what the volume bounds count.
 */
#include "collectives.h"

#include <stdlib.h>
#include <string.h>

/* Waits for both requests of an exchange step.  One that could not be
 * posted (NULL) makes the step fail, but the other is still waited for, so
 * that no buffer is freed while a transfer may still use it. */
static int wait_pair(sp_ctx *c, sp_req *q[2], size_t got[2])
{
    int missing = !q[0] || !q[1];
    int rc = sp_waitall(c, q, 2, got);
    return missing ? SP_ERR_COMM : rc;
}

/* the block sizes of an allgatherv: bytes[j], or counts[j] x unit */
typedef struct {
    const size_t *bytes;
    const uint64_t *counts;
    size_t unit;
} sizes_of;

static inline size_t block(const sizes_of *z, int j) { return z->bytes ? z->bytes[j] : (size_t)(z->counts[j] * z->unit); }

/* the bytes of rotated blocks [from, to): those of ranks (r + from) .. (r + to - 1) mod P */
static size_t rotated(const sizes_of *z, int r, int P, int from, int to)
{
    size_t s = 0;
    for (int j = from; j < to; j++)
        s += block(z, (r + j) % P);
    return s;
}

/* Bruck's rounds over blocks of any sizes.  A round sends the first `cnt`
 * rotated blocks held and receives the next `cnt`; their sizes are summed as
 * the rounds reach them (O(P) in all), so a rank keeps no array of P offsets:
 * every rank of a simulated run holds its own at once (P^2 in all; Ok-Topk at
 * P = 16384 held 2 GB of them). */
static int allgatherv_sized(sp_ctx *c, const void *mine, const sizes_of *z, void *all, int tag)
{
    int P = sp_size(c), r = sp_rank(c);
    int exact = all != NULL;
    unsigned char *tmp = NULL;
    size_t total = 0;
    if (exact) {
        total = rotated(z, r, P, 0, P);
        tmp = malloc(total ? total : 1);
        if (!tmp)
            return SP_ERR_MEM;
        if (block(z, r))
            memcpy(tmp, mine, block(z, r));
    }
    int rc = SP_OK;
    int held = 1;
    size_t held_b = block(z, r); /* bytes of the blocks held: rotated [0, held) */
    while (held < P) {
        int cnt = held < P - held ? held : P - held;
        int dst = (r - held + P) % P, src = (r + held) % P;
        size_t sendb = cnt == held ? held_b : rotated(z, r, P, 0, cnt), recvb = rotated(z, r, P, held, held + cnt);
        sp_req *q[2];
        q[0] = sp_irecv(c, src, tag, exact ? tmp + held_b : NULL, recvb);
        q[1] = sp_isend(c, dst, tag, exact ? tmp : NULL, sendb);
        size_t got[2];
        rc = wait_pair(c, q, got);
        if (rc)
            break;
        if (got[0] != recvb) {
            rc = SP_ERR_TRUNC;
            break;
        }
        held += cnt;
        held_b += recvb;
    }
    if (exact && rc == SP_OK) {
        /* un-rotate: rotated block j belongs to rank (r + j) % P, whose place
         * in `all` is the sum of the blocks of ranks below it */
        size_t first = rotated(z, r, P, 0, P - r); /* ranks r .. P-1 */
        size_t below_r = total - first;            /* ranks 0 .. r-1 */
        memcpy((unsigned char *)all + below_r, tmp, first);
        memcpy(all, tmp + first, below_r);
        sp_compute(c, SP_K_COPY, (double)total);
    }
    free(tmp);
    return rc;
}

int sp_allgatherv(sp_ctx *c, const void *mine, const size_t *bytes, void *all, int tag)
{
    sizes_of z = {bytes, NULL, 0};
    return allgatherv_sized(c, mine, &z, all, tag);
}

int sp_allgatherv_counts(sp_ctx *c, const void *mine, const uint64_t *counts, size_t unit, void *all, int tag)
{
    sizes_of z = {NULL, counts, unit};
    return allgatherv_sized(c, mine, &z, all, tag);
}

/* reverses bytes [lo, hi) of a */
static void reverse_bytes(unsigned char *a, size_t lo, size_t hi)
{
    while (hi > lo + 1) {
        unsigned char t = a[lo];
        a[lo++] = a[--hi];
        a[hi] = t;
    }
}

/* Equal blocks: the same rounds as sp_allgatherv with sizes by arithmetic,
 * so a rank needs no per-rank arrays (O(P) each, O(P^2) over a simulated
 * run) and only O(log P) work besides the copies.  The blocks gather in
 * `all` itself, rotated (this rank's first), and are turned into rank order
 * there: no second buffer of P blocks. */
int sp_allgather(sp_ctx *c, const void *mine, size_t bytes, void *all, int tag)
{
    int P = sp_size(c), r = sp_rank(c);
    int exact = all != NULL;
    unsigned char *tmp = all;
    if (exact && bytes)
        memmove(tmp, mine, bytes);
    int rc = SP_OK;
    for (int held = 1; held < P && rc == SP_OK;) {
        int cnt = held < P - held ? held : P - held;
        sp_req *q[2] = {sp_irecv(c, (r + held) % P, tag, exact ? tmp + (size_t)held * bytes : NULL,
                                 (size_t)cnt * bytes),
                        sp_isend(c, (r - held + P) % P, tag, exact ? tmp : NULL, (size_t)cnt * bytes)};
        size_t got[2];
        rc = wait_pair(c, q, got);
        if (rc == SP_OK && got[0] != (size_t)cnt * bytes)
            rc = SP_ERR_TRUNC;
        held += cnt;
    }
    if (exact && rc == SP_OK) {
        /* rotated block j belongs to rank (r + j) % P: the blocks of ranks
         * r..P-1 then 0..r-1, turned by r blocks (three reversals) */
        size_t total = (size_t)P * bytes, shift = (size_t)r * bytes;
        reverse_bytes(tmp, 0, total);
        reverse_bytes(tmp, 0, shift);
        reverse_bytes(tmp, shift, total);
        sp_compute(c, SP_K_COPY, (double)P * (double)bytes);
    }
    return rc;
}

int sp_allgather_count(sp_ctx *c, uint64_t mine, uint64_t *all, uint64_t *total, int tag)
{
    int rc = sp_allgather(c, &mine, sizeof mine, all, tag);
    *total = 0;
    for (int j = 0; rc == SP_OK && j < sp_size(c); j++)
        *total += all[j];
    return rc;
}

/* Alltoall of counts, chosen as MPICH chooses for short messages (Thakur,
 * Rabenseifner & Gropp, IJHPCA 19(1), 2005; MPICH's alltoall selection
 * takes Bruck's algorithm for blocks of at most 256 bytes from 8 ranks on):
 *  - below 8 ranks, every pair posted at once (P-1 sends, P-1 receives);
 *  - from 8 ranks, Bruck's index algorithm (Bruck et al., IEEE TPDS 8(11),
 *    1997): ceil(log2 P) rounds.  Block j of the rotated buffer is destined
 *    for rank (r + j) % P; in the round of bit `d` every block whose index
 *    has that bit set moves d ranks on, so after all rounds block j holds
 *    what rank (r - j) % P sent to r.  Each round carries about P/2 counts.
 * Counts travel as 4-byte integers, as the reference codes' MPI_Alltoall of
 * int32 sizes: they count entries of one region, and the plan keeps
 * n < 2^31, so every count fits. */
#define ALLTOALL_BRUCK_FROM 8

static int alltoall_pairs(sp_ctx *c, const uint32_t *send, uint32_t *recv, int tag)
{
    int P = sp_size(c), r = sp_rank(c);
    uint32_t *out = malloc(2 * (size_t)P * sizeof *out), *in = out ? out + P : NULL;
    sp_req **q = malloc(2 * (size_t)P * sizeof *q);
    int rc = out && q ? SP_OK : SP_ERR_MEM, nq = 0;
    for (int t = 1; t < P && rc == SP_OK; t++) {
        int src = (r - t + P) % P, dst = (r + t) % P;
        out[dst] = send[dst];
        q[nq++] = sp_irecv(c, src, tag, &in[src], sizeof *in);
        q[nq++] = sp_isend(c, dst, tag, &out[dst], sizeof *out);
    }
    for (int i = 0; i < nq; i++)
        if (!q[i])
            rc = SP_ERR_COMM;
    if (nq) {
        int w = sp_waitall(c, q, nq, NULL);
        rc = rc ? rc : w;
    }
    for (int t = 1; t < P && rc == SP_OK; t++)
        recv[(r - t + P) % P] = in[(r - t + P) % P];
    free(out);
    free(q);
    return rc;
}

int sp_alltoallv(sp_ctx *c, const void *out, const size_t *out_off, const size_t *out_len, void *in,
                 const size_t *in_off, const size_t *in_len, int bucket, int tag)
{
    int P = sp_size(c), me = sp_rank(c), rc = SP_OK;
    int b = bucket > 0 ? bucket : (P < 4 ? P : 4);
    const unsigned char *o = out;
    unsigned char *i = in;
    if (o && i)
        memcpy(i + in_off[me], o + out_off[me], out_len[me]);
    sp_req **q = malloc(2 * (size_t)b * sizeof *q);
    if (!q)
        return SP_ERR_MEM;
    for (int t0 = 1; t0 < P && rc == SP_OK; t0 += b) {
        int m = 0;
        for (int t = t0; t < t0 + b && t < P; t++) {
            int to = (me + t) % P, from = (me - t + P) % P;
            q[m++] = sp_irecv(c, from, tag, i ? i + in_off[from] : NULL, in_len[from]);
            q[m++] = sp_isend(c, to, tag, o ? o + out_off[to] : NULL, out_len[to]);
        }
        rc = sp_waitall(c, q, m, NULL);
    }
    free(q);
    return rc;
}

int sp_alltoall_counts(sp_ctx *c, const uint32_t *send, uint32_t *recv, int tag)
{
    int P = sp_size(c), r = sp_rank(c);
    recv[r] = send[r];
    if (P == 1)
        return SP_OK;
    if (P < ALLTOALL_BRUCK_FROM)
        return alltoall_pairs(c, send, recv, tag);
    /* a round moves the blocks whose index has its bit set: at most P/2 of them */
    size_t half = (size_t)P / 2 + 1;
    uint32_t *rot = malloc(((size_t)P + 2 * half) * sizeof *rot), *pack = rot ? rot + P : NULL,
             *in = rot ? rot + P + half : NULL;
    if (!rot)
        return SP_ERR_MEM;
    for (int j = 0; j < P; j++)
        rot[j] = send[(r + j) % P];
    int rc = SP_OK;
    for (int d = 1; d < P && rc == SP_OK; d <<= 1) {
        int m = 0;
        for (int j = d; j < P; j++)
            if (j & d)
                pack[m++] = rot[j];
        size_t bytes = (size_t)m * sizeof *pack;
        sp_req *q[2] = {sp_irecv(c, (r - d + P) % P, tag, in, bytes),
                        sp_isend(c, (r + d) % P, tag, pack, bytes)};
        size_t got[2];
        rc = wait_pair(c, q, got);
        if (rc == SP_OK && got[0] != bytes)
            rc = SP_ERR_TRUNC;
        for (int j = d, i = 0; rc == SP_OK && j < P; j++)
            if (j & d)
                rot[j] = in[i++];
    }
    if (rc == SP_OK)
        for (int j = 0; j < P; j++)
            recv[(r - j + P) % P] = rot[j];
    free(rot);
    return rc;
}

int sp_bcast(sp_ctx *c, void *buf, size_t bytes, int root, int tag)
{
    int P = sp_size(c), r = sp_rank(c);
    int vr = (r - root + P) % P;
    /* round i: virtual ranks below 2^i send to vr + 2^i (0->1; 0->2, 1->3; ...) */
    for (int mask = 1; mask < P; mask <<= 1) {
        if (vr < mask) {
            if (vr + mask < P) {
                long long rc = sp_wait(c, sp_isend(c, (vr + mask + root) % P, tag, buf, bytes));
                if (rc < 0)
                    return (int)rc;
            }
        } else if (vr < 2 * mask) {
            long long got = sp_wait(c, sp_irecv(c, (vr - mask + root) % P, tag, buf, bytes));
            if (got < 0)
                return (int)got;
            if ((size_t)got != bytes)
                return SP_ERR_TRUNC;
        }
    }
    return SP_OK;
}

/* ---- small allreduce ----------------------------------------------------- */

typedef void (*combine_fn)(void *acc, const void *in, int count, sp_op op);

static void combine_i64(void *a, const void *b, int n, sp_op op)
{
    int64_t *x = a;
    const int64_t *y = b;
    for (int i = 0; i < n; i++)
        x[i] = op == SP_OP_SUM ? x[i] + y[i] : op == SP_OP_MAX ? (x[i] > y[i] ? x[i] : y[i])
                                                               : (x[i] < y[i] ? x[i] : y[i]);
}

static void combine_f64(void *a, const void *b, int n, sp_op op)
{
    double *x = a;
    const double *y = b;
    for (int i = 0; i < n; i++)
        x[i] = op == SP_OP_SUM ? x[i] + y[i] : op == SP_OP_MAX ? (x[i] > y[i] ? x[i] : y[i])
                                                               : (x[i] < y[i] ? x[i] : y[i]);
}

static int exchange(sp_ctx *c, int peer, int tag, const void *out, void *in, size_t bytes)
{
    sp_req *q[2] = {sp_irecv(c, peer, tag, in, bytes), sp_isend(c, peer, tag, out, bytes)};
    if (!q[0] || !q[1])
        return SP_ERR_COMM;
    return sp_waitall(c, q, 2, NULL);
}

int sp_fold_in(sp_ctx *c, sp_fold *f, void *buf, void *tmp, size_t bytes, int tag, sp_combine_fn combine,
               void *arg)
{
    int P = sp_size(c), r = sp_rank(c);
    f->p2 = 1;
    while (f->p2 * 2 <= P)
        f->p2 *= 2;
    f->rem = P - f->p2;
    f->newrank = r - f->rem;
    if (r >= 2 * f->rem)
        return SP_OK;
    long long w;
    if (r % 2 == 0) {
        w = sp_wait(c, sp_isend(c, r + 1, tag, buf, bytes));
        f->newrank = -1;
    } else {
        w = sp_wait(c, sp_irecv(c, r - 1, tag, tmp, bytes));
        if (w >= 0)
            combine(buf, tmp, arg);
        f->newrank = r / 2;
    }
    return w < 0 ? (int)w : SP_OK;
}

int sp_fold_rank(const sp_fold *f, int nr)
{
    return nr < f->rem ? nr * 2 + 1 : nr + f->rem;
}

int sp_fold_out(sp_ctx *c, const sp_fold *f, void *buf, size_t bytes, int tag)
{
    int r = sp_rank(c);
    if (r >= 2 * f->rem)
        return SP_OK;
    long long w = r % 2 ? sp_wait(c, sp_isend(c, r - 1, tag, buf, bytes))
                        : sp_wait(c, sp_irecv(c, r + 1, tag, buf, bytes));
    return w < 0 ? (int)w : SP_OK;
}

typedef struct {
    combine_fn f;
    int count;
    sp_op op;
} small_arg;

static void small_combine(void *buf, const void *in, void *arg)
{
    small_arg *a = arg;
    a->f(buf, in, a->count, a->op);
}

/* recursive doubling among the p2 folded ranks */
static int small_allreduce(sp_ctx *c, void *vals, size_t elem, int count, sp_op op, int tag, combine_fn f)
{
    size_t bytes = elem * (size_t)count;
    unsigned char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return SP_ERR_MEM;
    small_arg arg = {f, count, op};
    sp_fold fo;
    int rc = sp_fold_in(c, &fo, vals, tmp, bytes, tag, small_combine, &arg);
    for (int mask = 1; rc == SP_OK && fo.newrank >= 0 && mask < fo.p2; mask <<= 1) {
        rc = exchange(c, sp_fold_rank(&fo, fo.newrank ^ mask), tag, vals, tmp, bytes);
        if (rc == SP_OK)
            f(vals, tmp, count, op);
    }
    if (rc == SP_OK)
        rc = sp_fold_out(c, &fo, vals, bytes, tag);
    free(tmp);
    return rc;
}

int sp_allreduce_i64(sp_ctx *c, int64_t *vals, int count, sp_op op, int tag)
{
    return small_allreduce(c, vals, sizeof(int64_t), count, op, tag, combine_i64);
}

int sp_allreduce_f64(sp_ctx *c, double *vals, int count, sp_op op, int tag)
{
    return small_allreduce(c, vals, sizeof(double), count, op, tag, combine_f64);
}
