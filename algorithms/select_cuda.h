/* select_cuda.h - the selection kernels on an NVIDIA GPU (select_cuda.cu).
 *
 * The same kernels as select.h, on vectors that live in GPU memory: exact
 * top-k by radix selection on the bits of |x| (histogram passes, no sort),
 * threshold filtering, the Gaussian-k moments, the scatter-add of received
 * pairs and the residual updates.  Results are bit for bit those of the CPU
 * kernels: the same total order (larger |x|, then smaller index; NaN above
 * infinity, as the bits of |x| order them), pairs in index order, |x| > thr
 * false for NaN.  Only the Gaussian moments are summed in another order, so
 * the estimate agrees with the CPU's to rounding (relative 1e-12 or so).
 * Arithmetic (the adds of scatter-add and of the residual) gives the CPU's
 * floats bit for bit, subnormals included (no flush to zero), except that a
 * NaN it produces is the GPU's canonical NaN, where the CPU keeps the payload
 * and sign of a NaN operand: NaN stays NaN, its bits may differ.
 *
 * A program built without nvcc links select_cuda_none.c instead: every call
 * fails with "built without CUDA".  Plain C interface (no CUDA header), so the
 * rest of the tree compiles with the C compiler alone.
 */
#ifndef SPARSIM_SELECT_CUDA_H
#define SPARSIM_SELECT_CUDA_H

#include "select.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_cuda sp_cuda; /* one device, one stream, scratch buffers */

/* 1 when this program was compiled with the CUDA kernels */
int sp_cuda_built(void);

/* How many CUDA devices this process sees; 0 with a one-line reason in err
 * when none (no driver, no GPU, a build without CUDA). */
int sp_cuda_devices(char *err, size_t errlen);

/* Opens GPU number `slot` modulo the number of GPUs (ranks sharing a node
 * spread over its GPUs; several may share one).  NULL with a one-line reason
 * in err when there is no CUDA device or the build has no CUDA. */
sp_cuda *sp_cuda_open(int slot, char *err, size_t errlen);
void sp_cuda_close(sp_cuda *g);
/* "NVIDIA H200 (sm_90, 139.8 GiB)" */
const char *sp_cuda_name(const sp_cuda *g);
/* the last failure, one line */
const char *sp_cuda_error(const sp_cuda *g);

/* Device memory and copies (synchronous); 0 or -1.  Copies count into the
 * copy time below. */
void *sp_cuda_alloc(sp_cuda *g, size_t bytes);
void sp_cuda_free(sp_cuda *g, void *d);
int sp_cuda_put(sp_cuda *g, void *dev, const void *host, size_t bytes);
int sp_cuda_get(sp_cuda *g, void *host, const void *dev, size_t bytes);

/* Seconds spent so far in host-device copies and in kernels (wall time of
 * the synchronous calls), and bytes copied; zeroed by sp_cuda_clear_times. */
void sp_cuda_times(const sp_cuda *g, double *copy_s, double *kernel_s, double *copy_bytes);
void sp_cuda_clear_times(sp_cuda *g);

/* ---- kernels on device vectors (dx, dout, dacc: device pointers) ---------- */

/* Exact top-k of |dx| (select.h's order) into dout (room for min(k, n) pairs),
 * index order.  Returns min(k, n), or -1 on failure. */
int64_t sp_cuda_topk(sp_cuda *g, const float *dx, uint64_t n, uint64_t k, sp_pair *dout);

/* Entries with |dx| > thr, index order: writes the first min(count, cap)
 * into dout (NULL: count only) and returns count, or -1 on failure. */
int64_t sp_cuda_threshold(sp_cuda *g, const float *dx, uint64_t n, float thr, sp_pair *dout, uint64_t cap);

/* One pass over dx: the sums of d and d^2, d = x - x[0] (the CPU's shift),
 * in double; sp_gaussian_from_sums turns them into the threshold. */
int sp_cuda_moments(sp_cuda *g, const float *dx, uint64_t n, double *shift, double *sum, double *sumsq);

/* dy[idx] += val for the m pairs dp (indices distinct within one list, as
 * every selection's are; lists applied one after another add in the CPU's
 * order, so the sums are the CPU's bit for bit). */
int sp_cuda_scatter_add(sp_cuda *g, float *dy, const sp_pair *dp, uint64_t m);
/* residual update: dacc += dgrad (n floats) */
int sp_cuda_add(sp_cuda *g, float *dacc, const float *dgrad, uint64_t n);
/* error feedback: dacc[idx] = 0 for the m pairs dp */
int sp_cuda_zero_at(sp_cuda *g, float *dacc, const sp_pair *dp, uint64_t m);
/* dacc[0..n) = 0 */
int sp_cuda_zero(sp_cuda *g, float *dacc, uint64_t n);

/* ---- the kernels on host vectors: upload, run, download (tests, calibrate) - */
int64_t sp_cuda_topk_host(sp_cuda *g, const float *x, uint64_t n, uint64_t k, sp_pair *out);
int64_t sp_cuda_threshold_host(sp_cuda *g, const float *x, uint64_t n, float thr, sp_pair *out, uint64_t cap);

#ifdef __cplusplus
}
#endif

#endif
