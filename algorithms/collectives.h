/* collectives.h - collectives built once on the shim's point-to-point calls.
 *
 * Every backend therefore sends the same messages for them, and traces of a
 * simulated and a real run compare message by message.  All work for any
 * P >= 1.  A NULL data pointer means size-only (the message sizes are still
 * exact).  `tag` is the tag of this collective's messages; callers give
 * different collectives of one iteration different tags.
 */
#ifndef SPARSIM_COLLECTIVES_H
#define SPARSIM_COLLECTIVES_H

#include "sim/shim/shim.h"
#include <stddef.h>
#include <stdint.h>

/* Bruck's allgather: ceil(log2 P) rounds, every rank receives exactly
 * (P-1)*bytes.  `all` (P*bytes) gets the blocks in rank order. */
int sp_allgather(sp_ctx *c, const void *mine, size_t bytes, void *all, int tag);

/* Every rank's count (all[0..P-1], by Bruck's allgather) and, in *total,
 * their sum: the sizes an allgatherv of per-rank selections needs. */
int sp_allgather_count(sp_ctx *c, uint64_t mine, uint64_t *all, uint64_t *total, int tag);

/* Bruck's allgather with per-rank block sizes bytes[0..P-1] (known on every
 * rank, e.g. from an allgather of counts).  Blocks land in rank order, packed,
 * in `all` (sum of bytes). */
int sp_allgatherv(sp_ctx *c, const void *mine, const size_t *bytes, void *all, int tag);
/* The same with block sizes counts[j] x unit (no array of bytes to make). */
int sp_allgatherv_counts(sp_ctx *c, const void *mine, const uint64_t *counts, size_t unit, void *all, int tag);

/* Every rank sends send[j] to rank j and receives recv[j] from rank j; the
 * counts travel as 4-byte integers (they count entries, and n < 2^31):
 * all pairs at once below 8 ranks, Bruck's ceil(log2 P) rounds from 8 on. */
int sp_alltoall_counts(sp_ctx *c, const uint32_t *send, uint32_t *recv, int tag);

/* Every rank sends out + out_off[j] (out_len[j] bytes) to rank j and
 * receives into in + in_off[j] (in_len[j] bytes, known beforehand) from it,
 * by destination rotation: at step t rank r sends to r + t and receives from
 * r - t, `bucket` steps in flight at a time (<= 0: min(4, P)).  A rank's own
 * block is copied, not sent.  out or in NULL: size only. */
int sp_alltoallv(sp_ctx *c, const void *out, const size_t *out_off, const size_t *out_len, void *in,
                 const size_t *in_off, const size_t *in_len, int bucket, int tag);

/* Binomial-tree broadcast of `bytes` from `root`. */
int sp_bcast(sp_ctx *c, void *buf, size_t bytes, int root, int tag);

/* Folding P ranks onto p2 = 2^floor(log2 P) for power-of-two algorithms
 * (Thakur, Rabenseifner & Gropp, IJHPCA 2005): with rem = P - p2, ranks below
 * 2*rem pair up; the even one hands its vector to the odd one and sits out
 * (newrank = -1) until sp_fold_out hands the result back. */
typedef struct {
    int p2, rem, newrank;
} sp_fold;

typedef void (*sp_combine_fn)(void *buf, const void *in, void *arg);

/* Folds in: sends `buf` or receives into `tmp` and calls combine(buf, tmp). */
int sp_fold_in(sp_ctx *c, sp_fold *f, void *buf, void *tmp, size_t bytes, int tag, sp_combine_fn combine,
               void *arg);
/* The real rank of new rank `nr` (a rank among the p2). */
int sp_fold_rank(const sp_fold *f, int nr);
/* Folds out: the odd rank of each pair returns `buf` to the even one. */
int sp_fold_out(sp_ctx *c, const sp_fold *f, void *buf, size_t bytes, int tag);

typedef enum { SP_OP_SUM, SP_OP_MAX, SP_OP_MIN } sp_op;

/* Allreduce of a few int64 values (recursive doubling; non-powers of two fold
 * the extra ranks in first and out last). */
int sp_allreduce_i64(sp_ctx *c, int64_t *vals, int count, sp_op op, int tag);
int sp_allreduce_f64(sp_ctx *c, double *vals, int count, sp_op op, int tag);

#endif
