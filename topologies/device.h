/* device.h - device profiles: the time of local kernels from their size.
 *
 * A profile turns "an exact top-k over n floats" or "a scatter-add of m pairs"
 * into seconds, so that the sparsification overhead is part of every
 * simulated time.  `none` makes local compute free, for checking pure
 * communication models against closed forms.
 */
#ifndef SPARSIM_DEVICE_H
#define SPARSIM_DEVICE_H

#include <stddef.h>
#include <stdio.h>

/* The local kernels a profile prices (the shim's sp_kernel names the same
 * ones for algorithms). */
typedef enum {
    SP_DEV_TOPK = 0,    /* exact top-k selection over `size` elements */
    SP_DEV_THRESHOLD,   /* threshold filter over `size` elements */
    SP_DEV_SCATTER_ADD, /* scatter-add of `size` (index, value) pairs */
    SP_DEV_MERGE,       /* merge of two sorted sparse vectors, `size` pairs in all */
    SP_DEV_DENSE_SUM,   /* elementwise sum of two dense vectors of `size` floats */
    SP_DEV_COPY,        /* copy of `size` bytes */
    SP_DEV_FUSED_SUM,   /* a dense sum of `size` floats fused into a running kernel: no launch */
    SP_DEV_KERNELS
} sp_device_kernel;

typedef struct {
    const char *name;
    const char *description;
    double launch;      /* s per kernel launch */
    double mem_bw;      /* bytes/s of streaming memory traffic (0: free) */
    double topk_coeff;  /* s per n*log2(n) for exact top-k (0: use bandwidth terms) */
    double scatter_bw;  /* bytes/s for random-access scatter-add */
    const char *source; /* where the numbers come from */
    /* whole training iterations (sim/driver/training.c): sustained FLOP/s of
     * forward and backward passes (0: compute is free) */
    double train_flops;
    /* host and copy overheads (LogGP's o and the copies around a message;
     * charged by the simulated backend, sim/shim/simgrid.c): */
    double send_o, recv_o; /* s of host CPU per message posted / completed */
    double call_o;         /* s of software overhead per algorithm phase entered (a library call) */
    double copy_lat;       /* s per host-device copy */
    double copy_bw;        /* bytes/s of a host-device copy (0: no copies, buffers live on the host) */
} sp_device;

const sp_device *sp_device_find(const char *name);
const sp_device *sp_device_list(int *count);
/* A profile from a JSON file; NULL with a one-line message on error. */
const sp_device *sp_device_load(const char *path, char *err, size_t errlen);

/* Seconds of one host-device copy of `bytes` (0 without copies). */
double sp_device_copy_time(const sp_device *d, double bytes);

/* Seconds for kernel `k` over `size` units. */
double sp_device_time(const sp_device *d, sp_device_kernel k, double size);

/* Seconds of a kernel of `flops` operations streaming `bytes` (a matrix
 * product, sp_compute_flops): launch + max(flops / train_flops, bytes /
 * mem_bw); a profile without train_flops prices the bytes alone. */
double sp_device_flops_time(const sp_device *d, double flops, double bytes);

/* Writes a profile as the JSON that sp_device_load reads. */
int sp_device_write_json(FILE *f, const char *name, const char *description, double launch, double mem_bw,
                         double topk_coeff, double scatter_bw, double send_o, double recv_o);

#endif
