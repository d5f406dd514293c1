/* blocks.h - splitting n elements into P nearly equal contiguous blocks.
 * Block j has n/P elements, plus one for the first n mod P blocks. */
#ifndef SPARSIM_BLOCKS_H
#define SPARSIM_BLOCKS_H

#include <stdint.h>

static inline uint64_t sp_block_len(uint64_t n, int P, int j)
{
    return n / (uint64_t)P + ((uint64_t)j < n % (uint64_t)P ? 1 : 0);
}

static inline uint64_t sp_block_off(uint64_t n, int P, int j)
{
    uint64_t q = n / (uint64_t)P, rem = n % (uint64_t)P;
    return (uint64_t)j * q + ((uint64_t)j < rem ? (uint64_t)j : rem);
}

/* ---- what the dense allreduces share ---- */
#include "algorithm.h"

/* result = acc, acc = 0 (a dense algorithm delivers every entry), with the
 * copy's time on a modelled device; nothing in size-only mode. */
void sp_dense_deliver_all(sp_ctx *c, sp_algo_io *io);

/* Starts a dense allreduce: sp_dense_deliver_all, and a temporary of n
 * floats in exact mode (*tmp = NULL in size-only mode).  Returns SP_OK or
 * SP_ERR_MEM. */
int sp_dense_begin(sp_ctx *c, sp_algo_io *io, float **tmp);

typedef struct {
    sp_ctx *c;
    uint64_t n;
} sp_dense_add_arg;

/* buf += in over n floats (skipped when buf is NULL), charged as a dense
 * sum; the signature fits sp_fold_in's combine. */
void sp_dense_add(void *buf, const void *in, void *arg);

#endif
