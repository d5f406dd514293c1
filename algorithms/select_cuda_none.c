/* select_cuda_none.c - select_cuda.h in a build without nvcc: no GPU code,
 * every call fails with one line that says so, so that the programs and
 * tests link the same way with or without CUDA. */
#include "select_cuda.h"

#include <stdio.h>

static const char why[] = "built without CUDA (no nvcc when the build was configured)";

int sp_cuda_built(void) { return 0; }

int sp_cuda_devices(char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", why);
    return 0;
}

sp_cuda *sp_cuda_open(int slot, char *err, size_t errlen)
{
    (void)slot;
    snprintf(err, errlen, "%s", why);
    return NULL;
}

/* nothing below is reached without a context from sp_cuda_open */
void sp_cuda_close(sp_cuda *g) { (void)g; }
const char *sp_cuda_name(const sp_cuda *g) { return (void)g, "none"; }
const char *sp_cuda_error(const sp_cuda *g) { return (void)g, why; }
void *sp_cuda_alloc(sp_cuda *g, size_t bytes) { return (void)g, (void)bytes, NULL; }
void sp_cuda_free(sp_cuda *g, void *d) { (void)g, (void)d; }
int sp_cuda_put(sp_cuda *g, void *dev, const void *host, size_t bytes) { return (void)g, (void)dev, (void)host, (void)bytes, -1; }
int sp_cuda_get(sp_cuda *g, void *host, const void *dev, size_t bytes) { return (void)g, (void)dev, (void)host, (void)bytes, -1; }
void sp_cuda_times(const sp_cuda *g, double *copy_s, double *kernel_s, double *copy_bytes)
{
    (void)g;
    *copy_s = *kernel_s = *copy_bytes = 0;
}
void sp_cuda_clear_times(sp_cuda *g) { (void)g; }
int64_t sp_cuda_topk(sp_cuda *g, const float *dx, uint64_t n, uint64_t k, sp_pair *dout)
{
    return (void)g, (void)dx, (void)n, (void)k, (void)dout, -1;
}
int64_t sp_cuda_threshold(sp_cuda *g, const float *dx, uint64_t n, float thr, sp_pair *dout, uint64_t cap)
{
    return (void)g, (void)dx, (void)n, (void)thr, (void)dout, (void)cap, -1;
}
int sp_cuda_moments(sp_cuda *g, const float *dx, uint64_t n, double *shift, double *sum, double *sumsq)
{
    (void)g, (void)dx, (void)n;
    *shift = *sum = *sumsq = 0;
    return -1;
}
int sp_cuda_scatter_add(sp_cuda *g, float *dy, const sp_pair *dp, uint64_t m) { return (void)g, (void)dy, (void)dp, (void)m, -1; }
int sp_cuda_add(sp_cuda *g, float *dacc, const float *dgrad, uint64_t n) { return (void)g, (void)dacc, (void)dgrad, (void)n, -1; }
int sp_cuda_zero_at(sp_cuda *g, float *dacc, const sp_pair *dp, uint64_t m) { return (void)g, (void)dacc, (void)dp, (void)m, -1; }
int sp_cuda_zero(sp_cuda *g, float *dacc, uint64_t n) { return (void)g, (void)dacc, (void)n, -1; }
int64_t sp_cuda_topk_host(sp_cuda *g, const float *x, uint64_t n, uint64_t k, sp_pair *out)
{
    return (void)g, (void)x, (void)n, (void)k, (void)out, -1;
}
int64_t sp_cuda_threshold_host(sp_cuda *g, const float *x, uint64_t n, float thr, sp_pair *out, uint64_t cap)
{
    return (void)g, (void)x, (void)n, (void)thr, (void)out, (void)cap, -1;
}
