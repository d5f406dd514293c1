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

#endif
