/* gradients.h - where per-rank gradients come from, as one interface.
 *
 * A gradient source yields, for iteration i and rank r, the dense float32
 * gradient of length n: a recorded trace (a .npy of shape (I, P, n), read
 * one iteration at a time by memory mapping, so a trace larger than memory
 * works), the synthetic generator (sim/workload/), or a trainer running
 * beside the simulator (live.c: closed-loop training).  Statistics, profile
 * fitting and exact runs read gradients through it only.
 */
#ifndef SPARSIM_GRADIENTS_H
#define SPARSIM_GRADIENTS_H

#include <stddef.h>
#include <stdint.h>

/* A contiguous tensor of the flattened gradient. */
typedef struct {
    char name[96];
    uint64_t offset, size;
    /* the tensor's shape where layers.json gives one: its first dimension
     * (rows of the tensor as a matrix, size / rows columns); 0 for one of a
     * single dimension or where no shape is given (shaped says which) */
    uint64_t rows;
    int shaped;
} sp_layer;

typedef struct sp_grad_source sp_grad_source;
struct sp_grad_source {
    uint64_t n;          /* gradient length */
    int ranks;           /* workers the source has */
    int iters;           /* iterations it holds (a generator: as many as asked) */
    const int *iter_ids; /* the training iteration of each (NULL: 0, 1, 2, ...) */
    sp_layer *layers;    /* the layer table, covering [0, n) in order; may be NULL */
    int nlayers;
    /* Adds (add = 1) or writes (add = 0) the gradient of (iteration index
     * `it`, rank `rank`) into out[0..n).  0, or -1 with a one-line message. */
    int (*fill)(sp_grad_source *s, int it, int rank, float *out, int add, char *err, size_t errlen);
    /* NULL, or told the global result of iteration index `it` as rank `rank`'s
     * algorithm returned it (a live source sends it to its trainer).  0, or -1
     * with a one-line message. */
    int (*result)(sp_grad_source *s, int it, int rank, const float *result, char *err, size_t errlen);
    void (*close)(sp_grad_source *s); /* frees the source (and s itself) */
    void *impl;
};

/* A recorded trace: DIR or FILE.npy (float32, C order, shape (I, P, n) or
 * (P, n)), with the layer table and iteration numbers of FILE's folder's
 * layers.json when there is one.  The data stays on disk (memory mapped).
 * NULL with a one-line message naming what is wrong. */
sp_grad_source *sp_trace_open(const char *path, char *err, size_t errlen);

/* Live gradients from a trainer on the connected stream socket `fd`
 * (live.c states the protocol): n entries, `ranks` ranks, `iters`
 * iterations; the hello goes out now.  NULL with a one-line message. */
sp_grad_source *sp_live_open(int fd, uint64_t n, int ranks, int iters, char *err, size_t errlen);

/* The training iteration of index `it` (iter_ids, or it itself). */
static inline int sp_grad_iter_id(const sp_grad_source *s, int it) { return s->iter_ids ? s->iter_ids[it] : it; }

#endif
