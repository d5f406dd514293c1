/* shim.h - the message-passing interface that algorithm code sees.
 *
 * A rank talks to other ranks through non-blocking point-to-point calls with
 * MPI-like matching on (source, tag) and non-overtaking order per pair.  The
 * same calls run on every backend (SimGrid actors, real MPI processes), and
 * every message a rank sends becomes exactly one trace event.  Algorithms only
 * name the phase they are in; they never see traces, files or the backend.
 *
 * Payloads: `buf` may be NULL on a send, which makes the message size-only
 * (it costs `bytes` on the wire but carries no data), and NULL on a receive,
 * which discards whatever arrives.  Exact-mode algorithms pass real buffers.
 *
 * What an algorithm asks of its rank's data under a model workload is the
 * other interface algorithms see, workload.h beside this one.
 */
#ifndef SPARSIM_SHIM_H
#define SPARSIM_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct sp_ctx sp_ctx; /* one per rank */
typedef struct sp_req sp_req; /* one outstanding send or receive */

/* Local kernels whose time a device profile models (or that really run). */
typedef enum {
    SP_K_TOPK = 0,    /* exact top-k selection over `size` elements */
    SP_K_THRESHOLD,   /* threshold filter over `size` elements */
    SP_K_SCATTER_ADD, /* scatter-add of `size` (index, value) pairs */
    SP_K_MERGE,       /* merge of two sorted sparse vectors, `size` pairs in all */
    SP_K_DENSE_SUM,   /* elementwise sum of two dense vectors of `size` floats */
    SP_K_COPY,        /* copy of `size` bytes */
    SP_K_FUSED_SUM,   /* a dense sum of `size` floats inside a kernel that runs already (NCCL's
                         reduction in its copy loop): its memory traffic, no launch */
    SP_K_COUNT
} sp_kernel;

/* Error codes returned by shim calls and algorithms (0 is success). */
enum { SP_OK = 0, SP_ERR_ARG = -1, SP_ERR_TRUNC = -2, SP_ERR_MEM = -3, SP_ERR_COMM = -4 };

/* This rank and the number of ranks, in the group the rank is in (below);
 * outside every group, the whole run's. */
int sp_rank(const sp_ctx *c);
int sp_size(const sp_ctx *c);

/* Nodes: a rank is a GPU on a node of G GPUs, rank r being GPU r mod G (its
 * local rank) of node r / G.  G is 1 where the platform has no nodes. */
int sp_node_size(const sp_ctx *c);

/* Groups: while a rank is in one, sp_rank, sp_size and the ranks that
 * sp_isend and sp_irecv take are the group's (0 .. count-1), group rank i
 * being the run's rank first + i * stride.  The ranks of one node are
 * (node * G, 1, G); those on rail j (local rank j on every node) are
 * (j, G, nodes).  An algorithm written for the whole run thus runs among a
 * group unchanged; its messages, phases and traces keep the run's ranks.
 * Groups do not nest: entering one leaves any other.  Returns SP_ERR_ARG
 * (and stays where it was) unless the group holds this rank and lies
 * within the run. */
int sp_group_enter(sp_ctx *c, int first, int stride, int count);
void sp_group_leave(sp_ctx *c);

/* The node's switch as an endpoint that reduces and multicasts (NVLink
 * SHARP in an NVSwitch, which NCCL's NVLS algorithm uses), where the
 * platform's nodes have one: sp_node_switch says so (0 on other platforms
 * and on real MPI, where sp_switch_push fails the run).
 *  - sp_switch_push sends `count` floats (buf NULL: size only) up this GPU's
 *    port to its node's switch under `tag` (>= 0).  The switch adds up what
 *    `pushes` GPUs of the node push under that tag and, once it has them
 *    all, sends the sum to local GPU `to` of the node (0 .. G-1), or to each
 *    of its GPUs with SP_SWITCH_ALL (a multicast: one copy down each port).
 *    All pushes of one tag give the same count, pushes and to; the tag is
 *    free again once its sum has left.  The request completes when the push
 *    has reached the switch.
 *  - The sum arrives as a message from SP_SWITCH:
 *    sp_irecv(c, SP_SWITCH, tag, buf, count * sizeof(float)).
 * In a group (sp_group_enter) SP_SWITCH and `to` keep meaning the node's. */
#define SP_SWITCH (-2)
#define SP_SWITCH_ALL (-1)
int sp_node_switch(const sp_ctx *c);
sp_req *sp_switch_push(sp_ctx *c, int tag, const float *buf, uint64_t count, int pushes, int to);

/* Post a send of `bytes` bytes to `dst` with `tag` (tag >= 0).  The data is
 * captured at the call; `buf` may be reused as soon as this returns.
 * Never NULL: a send or receive that cannot be posted (a rank out of range,
 * no memory) records the failure and returns a request whose wait reports
 * SP_ERR_COMM, so every caller sees the error at its wait. */
sp_req *sp_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes);

/* Post a receive of at most `cap` bytes from `src` with `tag`. */
sp_req *sp_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap);

/* Wait for one request; returns the size received (or sent), or a negative
 * error code (SP_ERR_TRUNC when a message was larger than the receive buffer).
 * The request is released. */
long long sp_wait(sp_ctx *c, sp_req *r);

/* Wait for all `n` requests (NULL entries are skipped).  If `sizes` is not
 * NULL, sizes[i] receives the size of request i.  Returns 0 or the first
 * error code; every request is waited for and released even then. */
int sp_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes);

/* A local kernel of `size` units (see sp_kernel): on simulated backends the
 * rank's clock advances by the device profile's time for it; on real backends
 * the caller has already run it and this only charges nothing. */
void sp_compute(sp_ctx *c, sp_kernel k, double size);

/* A local kernel of `flops` floating-point operations that streams `bytes`
 * of memory (a matrix product): on simulated backends the device profile's
 * launch plus the longer of flops over its sustained FLOP/s and bytes over
 * its memory bandwidth (a roofline); nothing on real backends, as above. */
void sp_compute_flops(sp_ctx *c, double flops, double bytes);

/* Current time of this rank in seconds (simulated or measured). */
double sp_now(const sp_ctx *c);

/* Name the phase the rank is entering.  `name` must be a string that lives
 * for the whole run (a literal).  Messages carry the sender's phase. */
void sp_phase(sp_ctx *c, const char *name);

/* The iteration this rank is in (0-based, counting warm-up iterations). */
int sp_iter(const sp_ctx *c);

/* State that an algorithm keeps across iterations (thresholds, regions):
 * `bytes` zeroed bytes on the first call of a run, the same block on every
 * later call of this rank; the driver frees it at the end.  Plain data only. */
void *sp_rank_state(sp_ctx *c, size_t bytes);

/* Records a figure of this rank in this iteration (a selected count, a
 * threshold, rounds of an adjustment loop, ...).  The run reports, per
 * iteration and name, its minimum, mean and maximum over the ranks that
 * recorded it.  `name` must be a literal.  A second call with the same name
 * in one iteration replaces the value. */
void sp_stat(sp_ctx *c, const char *name, double value);

#endif
