/* rotation.h - the sparse reduce-scatter exchange of TopkDSA and Ok-Topk.
 *
 * Every rank sends a block of (index, value) pairs to every other rank and
 * receives one from each: at step t = 1..P-1 rank r sends to r + t and
 * receives from r - t (destination rotation, so no rank is flooded), in
 * buckets of b steps whose messages are all in flight together; the blocks
 * received in bucket c - 1 are consumed (scatter-added) while bucket c is in
 * flight.  Receive sizes come from an alltoall of counts beforehand.
 */
#ifndef SPARSIM_ROTATION_H
#define SPARSIM_ROTATION_H

#include "select.h"
#include "../sim/shim.h"

typedef void (*sp_consume_fn)(const sp_pair *pairs, uint64_t count, int src, void *arg);

/* send[j] / send_cnt[j]: the block for rank j (send[j] may be NULL in
 * size-only mode); recv_cnt[j]: pairs to receive from j.  bucket <= 0 means
 * min(4, P).  One message of pairs per peer (the papers' cost model counts
 * one message per peer).  With exact = 0 only sizes travel and
 * consume(NULL, count, src, arg) is called. */
int sp_rotation_exchange(sp_ctx *c, sp_pair *const *send, const uint64_t *send_cnt, const uint64_t *recv_cnt,
                         int bucket, int tag, int exact, sp_consume_fn consume, void *arg);

#endif
