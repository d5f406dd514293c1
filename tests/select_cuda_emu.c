#define _GNU_SOURCE
/* select_cuda_emu.c - select_cuda.h played by the CPU, for testing what
 * stands around the GPU kernels where there is no GPU.
 *
 * "Device memory" is host memory and every kernel is the CPU's kernel from
 * algorithms/topk_select.c, so a run of sparsim-mpi linked with this file
 * (sparsim-mpi-emu, tests only) takes every path of --select cuda: the
 * residual kept in a second copy, gradients uploaded and added there,
 * selections made there and brought back in the phase gpu-copy, zeroing
 * mirrored, the copies checked equal at the end.  The kernels themselves are
 * tested on a GPU (test_cuda.c); this tests the plumbing, on any machine.
 */
#include "algorithms/select.h"
#include "algorithms/select_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sp_cuda {
    double copy_s, kernel_s, copy_bytes;
    char err[64];
};

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sp_cuda_built(void) { return 1; }
int sp_cuda_devices(char *err, size_t errlen) { return (void)err, (void)errlen, 1; }

sp_cuda *sp_cuda_open(int slot, char *err, size_t errlen)
{
    (void)slot;
    sp_cuda *g = calloc(1, sizeof *g);
    if (!g)
        snprintf(err, errlen, "out of memory");
    return g;
}

void sp_cuda_close(sp_cuda *g) { free(g); }
const char *sp_cuda_name(const sp_cuda *g) { return (void)g, "the CPU playing a GPU (tests)"; }
const char *sp_cuda_error(const sp_cuda *g) { return g->err; }
void *sp_cuda_alloc(sp_cuda *g, size_t bytes) { return (void)g, malloc(bytes ? bytes : 16); }
void sp_cuda_free(sp_cuda *g, void *d) { (void)g, free(d); }

static int copy(sp_cuda *g, void *dst, const void *src, size_t bytes)
{
    double t0 = wall();
    memcpy(dst, src, bytes);
    g->copy_s += wall() - t0;
    g->copy_bytes += (double)bytes;
    return 0;
}
int sp_cuda_put(sp_cuda *g, void *dev, const void *host, size_t bytes) { return copy(g, dev, host, bytes); }
int sp_cuda_get(sp_cuda *g, void *host, const void *dev, size_t bytes) { return copy(g, host, dev, bytes); }

void sp_cuda_times(const sp_cuda *g, double *copy_s, double *kernel_s, double *copy_bytes)
{
    *copy_s = g->copy_s;
    *kernel_s = g->kernel_s;
    *copy_bytes = g->copy_bytes;
}
void sp_cuda_clear_times(sp_cuda *g) { g->copy_s = g->kernel_s = g->copy_bytes = 0; }

/* "device" vectors are never the vector handed to select.h's device table,
 * so these calls run the CPU kernels themselves */
int64_t sp_cuda_topk(sp_cuda *g, const float *dx, uint64_t n, uint64_t k, sp_pair *dout)
{
    double t0 = wall();
    uint64_t want = k < n ? k : n, m = sp_topk_exact(dx, n, k, dout);
    g->kernel_s += wall() - t0;
    if (m != want) {
        snprintf(g->err, sizeof g->err, "out of memory");
        return -1;
    }
    return (int64_t)m;
}

int64_t sp_cuda_threshold(sp_cuda *g, const float *dx, uint64_t n, float thr, sp_pair *dout, uint64_t cap)
{
    double t0 = wall();
    uint64_t m = sp_threshold_select(dx, n, thr, dout, dout ? cap : 0);
    g->kernel_s += wall() - t0;
    return (int64_t)m;
}

/* the CPU's sums in the CPU's order (topk_select.c), so the estimate is the same */
int sp_cuda_moments(sp_cuda *g, const float *dx, uint64_t n, double *shift, double *sum, double *sumsq)
{
    *shift = *sum = *sumsq = 0;
    if (!n)
        return 0;
    double t0 = wall(), sh = dx[0], s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) {
            double d = (double)dx[i + j] - sh;
            s[j] += d;
            q[j] += d * d;
        }
    for (; i < n; i++) {
        double d = (double)dx[i] - sh;
        s[0] += d;
        q[0] += d * d;
    }
    *shift = sh;
    *sum = s[0] + s[1] + s[2] + s[3];
    *sumsq = q[0] + q[1] + q[2] + q[3];
    g->kernel_s += wall() - t0;
    return 0;
}

int sp_cuda_scatter_add(sp_cuda *g, float *dy, const sp_pair *dp, uint64_t m)
{
    (void)g;
    for (uint64_t j = 0; j < m; j++)
        dy[dp[j].idx] += dp[j].val;
    return 0;
}

int sp_cuda_add(sp_cuda *g, float *dacc, const float *dgrad, uint64_t n)
{
    (void)g;
    for (uint64_t i = 0; i < n; i++)
        dacc[i] += dgrad[i];
    return 0;
}

int sp_cuda_zero_at(sp_cuda *g, float *dacc, const sp_pair *dp, uint64_t m)
{
    (void)g;
    for (uint64_t j = 0; j < m; j++)
        dacc[dp[j].idx] = 0.0f;
    return 0;
}

int sp_cuda_zero(sp_cuda *g, float *dacc, uint64_t n)
{
    (void)g;
    memset(dacc, 0, n * sizeof *dacc);
    return 0;
}

int64_t sp_cuda_topk_host(sp_cuda *g, const float *x, uint64_t n, uint64_t k, sp_pair *out)
{
    return sp_cuda_topk(g, x, n, k, out);
}

int64_t sp_cuda_threshold_host(sp_cuda *g, const float *x, uint64_t n, float thr, sp_pair *out, uint64_t cap)
{
    return sp_cuda_threshold(g, x, n, thr, out, cap);
}
