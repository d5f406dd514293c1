/* device.h - device profiles: the time of local kernels from their size.
 *
 * A profile turns "an exact top-k over n floats" or "a scatter-add of m pairs"
 * into seconds, so that the sparsification overhead is part of every
 * simulated time.  `none` makes local compute free, for checking pure
 * communication models against closed forms.
 */
#ifndef SPARSIM_DEVICE_H
#define SPARSIM_DEVICE_H

#include "../sim/shim.h"

typedef struct {
    const char *name;
    const char *description;
    double launch;      /* s per kernel launch */
    double mem_bw;      /* bytes/s of streaming memory traffic (0: free) */
    double topk_coeff;  /* s per n*log2(n) for exact top-k (0: use bandwidth terms) */
    double scatter_bw;  /* bytes/s for random-access scatter-add */
    const char *source; /* where the numbers come from */
} sp_device;

const sp_device *sp_device_find(const char *name);
const sp_device *sp_device_list(int *count);
/* A profile from a JSON file; NULL with a one-line message on error. */
const sp_device *sp_device_load(const char *path, char *err, size_t errlen);

/* Seconds for kernel `k` over `size` units (see sp_kernel in shim.h). */
double sp_device_time(const sp_device *d, sp_kernel k, double size);

#endif
