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
#include "sim/shim/shim.h"

typedef void (*sp_consume_fn)(const sp_pair *pairs, uint64_t count, int src, void *arg);

/* The region a rank reduces: [off, off + len).  Exact: the summed values
 * and which entries some rank contributed to (the reduced non-zeros).
 * Model (no values): the counts received, and the rule the ranks selected
 * with (|x| > thr), from which the model says how many distinct entries and
 * reduced values there are. */
typedef struct {
    float *values;
    unsigned char *touched;
    int64_t off, len;
    sp_ctx *c;
    float thr;                     /* model: the ranks' selection threshold */
    uint64_t recv_total, recv_max; /* model: entries received, in all and from one rank */
    int64_t nnz;                   /* model: the reduced non-zeros once known, else -1 */
} sp_region;

/* exact: with value arrays; thr: the selection rule (model) */
int sp_region_init(sp_region *r, sp_ctx *c, int64_t off, int64_t len, int exact, float thr);
void sp_region_free(sp_region *r);
/* an sp_consume_fn: scatter-adds pairs (global indices) into the region,
 * or, in model mode (pairs NULL), counts them */
void sp_region_add(const sp_pair *pairs, uint64_t count, int src, void *region);
/* how many entries some rank contributed to */
uint64_t sp_region_nnz(sp_region *r);
/* the contributed entries with |value| > above (every one for above < 0) as
 * pairs with global indices, in index order, into out (NULL in model mode);
 * returns how many there are */
uint64_t sp_region_pack(sp_region *r, float above, sp_pair *out);

/* send[j] / send_cnt[j]: the block for rank j (send[j] may be NULL in
 * size-only mode); recv_cnt[j]: pairs to receive from j.  bucket <= 0 means
 * min(4, P).  One message of pairs per peer (the papers' cost model counts
 * one message per peer), or with separate = 1 an index and a value message
 * (tags tag and tag + 1), as the Ok-Topk authors' code sends them.  With
 * exact = 0 only sizes travel and consume(NULL, count, src, arg) is called. */
int sp_rotation_exchange(sp_ctx *c, sp_pair *const *send, const uint32_t *send_cnt, const uint32_t *recv_cnt,
                         int bucket, int tag, int exact, int separate, sp_consume_fn consume, void *arg);

/* Posts a block of pairs to `dst` as one message (tag), or as an index and
 * a value message (tag, tag + 1) when separate; `q` gets 1 or 2 requests,
 * and *scratch an allocation to free after the wait. Returns requests posted. */
int sp_post_pairs(sp_ctx *c, int dst, int tag, const sp_pair *p, uint64_t cnt, int separate, sp_req **q,
                  void **scratch);
/* The receiving side: into `p` directly (one message), or into scratch
 * buffers that sp_unpack_pairs zips into `p` after the wait. */
int sp_post_recv_pairs(sp_ctx *c, int src, int tag, sp_pair *p, uint64_t cnt, int separate, sp_req **q,
                       void **scratch);
void sp_unpack_pairs(sp_pair *p, uint64_t cnt, void *scratch);

#endif
