/* select_device.c - sparsim-mpi --select cuda (select_device.h): the rank's
 * accumulated vector on a GPU, the selection kernels sent there through
 * select.h's device table, only the selected pairs copied back.
 *
 * One rank per process on the MPI backend, so one device table per process.
 * A kernel that fails inside an algorithm cannot return an error through the
 * CPU kernels' signatures; it marks the device failed, returns an empty
 * selection, and the iteration's end turns that into the run's failure.
 */
#include "select_device.h"
#include "sim/shim/backend.h"
#include "algorithms/select.h"
#include "algorithms/select_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sp_seldev {
    sp_cuda *g;
    sp_ctx *c;
    float *acc;           /* the host's mirror */
    uint64_t n;
    float *dacc, *dgrad;  /* on the GPU */
    float *grad;          /* the host's gradient buffer */
    sp_pair *dpairs;      /* the last selection, on the GPU */
    uint64_t dcap;        /* its room, in pairs */
    double upload_s, copy_s; /* this iteration's */
    double kernel_mark;      /* the context's kernel seconds at the iteration's start */
    int failed;
    char err[300];
};

static void lose(sp_seldev *d, const char *what)
{
    if (!d->failed)
        snprintf(d->err, sizeof d->err, "--select cuda: %s: %s", what, sp_cuda_error(d->g));
    d->failed = 1;
}

static int room(sp_seldev *d, uint64_t pairs)
{
    if (pairs <= d->dcap)
        return 0;
    sp_cuda_free(d->g, d->dpairs);
    d->dcap = 0;
    uint64_t want = pairs + pairs / 4 + 16;
    if (!(d->dpairs = sp_cuda_alloc(d->g, want * sizeof(sp_pair)))) {
        lose(d, "GPU memory for the selection");
        return -1;
    }
    d->dcap = want;
    return 0;
}

/* the selected pairs to the host, in a phase of their own */
static int bring(sp_seldev *d, sp_pair *out, uint64_t m)
{
    if (!m)
        return 0;
    sp_ctx *c = d->c;
    int prev = c->phase;
    sp_phase(c, "gpu-copy");
    double c0, k0, b0, c1, k1, b1;
    sp_cuda_times(d->g, &c0, &k0, &b0);
    int rc = sp_cuda_get(d->g, out, d->dpairs, m * sizeof *out);
    sp_cuda_times(d->g, &c1, &k1, &b1);
    d->copy_s += c1 - c0;
    sp_phase(c, c->shim->rep->phase_names[prev]);
    if (rc != 0)
        lose(d, "copying the selection to the host");
    return rc;
}

static uint64_t dev_topk(void *st, uint64_t k, sp_pair *out)
{
    sp_seldev *d = st;
    if (d->failed || room(d, k) != 0)
        return 0;
    int64_t m = sp_cuda_topk(d->g, d->dacc, d->n, k, d->dpairs);
    if (m < 0) {
        lose(d, "top-k");
        return 0;
    }
    return bring(d, out, (uint64_t)m) == 0 ? (uint64_t)m : 0;
}

static uint64_t dev_threshold(void *st, float thr, sp_pair *out, uint64_t cap)
{
    sp_seldev *d = st;
    if (d->failed)
        return 0;
    if (!out)
        cap = 0;
    if (cap && room(d, cap) != 0)
        return 0;
    int64_t m = sp_cuda_threshold(d->g, d->dacc, d->n, thr, cap ? d->dpairs : NULL, cap);
    if (m < 0) {
        lose(d, "threshold filter");
        return 0;
    }
    uint64_t w = (uint64_t)m < cap ? (uint64_t)m : cap;
    if (w && bring(d, out, w) != 0)
        return 0;
    return (uint64_t)m;
}

static double dev_gaussian(void *st, double density)
{
    sp_seldev *d = st;
    double shift, sum, sq;
    if (d->failed)
        return 0.0;
    if (sp_cuda_moments(d->g, d->dacc, d->n, &shift, &sum, &sq) != 0) {
        lose(d, "Gaussian estimate");
        return 0.0;
    }
    return sp_gaussian_from_sums(shift, sum, sq, d->n, density);
}

static void dev_zero_at(void *st, const sp_pair *sel, uint64_t m)
{
    sp_seldev *d = st;
    if (d->failed)
        return;
    if (!sel) {
        snprintf(d->err, sizeof d->err, "--select cuda: out of memory keeping the GPU's residual");
        d->failed = 1;
        return;
    }
    if (!m)
        return;
    /* the entries go up (8 bytes each, a selection's worth at most): the host
     * may have reordered or reused the buffer it got them in */
    if (room(d, m) != 0)
        return;
    double c0, k0, b0, c1, k1, b1;
    sp_cuda_times(d->g, &c0, &k0, &b0);
    int rc = sp_cuda_put(d->g, d->dpairs, sel, m * sizeof *sel);
    sp_cuda_times(d->g, &c1, &k1, &b1);
    d->copy_s += c1 - c0;
    if (rc != 0) {
        lose(d, "copying delivered entries to the GPU");
        return;
    }
    if (sp_cuda_zero_at(d->g, d->dacc, d->dpairs, m) != 0)
        lose(d, "residual update");
}

static void dev_zero_all(void *st)
{
    sp_seldev *d = st;
    if (!d->failed && sp_cuda_zero(d->g, d->dacc, d->n) != 0)
        lose(d, "residual update");
}

/* the host rewrote the vector (onebit's error feedback): it goes up whole */
static void dev_set_all(void *st, const float *acc)
{
    sp_seldev *d = st;
    if (d->failed)
        return;
    double c0, k0, b0, c1, k1, b1;
    sp_cuda_times(d->g, &c0, &k0, &b0);
    int rc = sp_cuda_put(d->g, d->dacc, acc, d->n * sizeof *acc);
    sp_cuda_times(d->g, &c1, &k1, &b1);
    d->copy_s += c1 - c0;
    if (rc != 0)
        lose(d, "copying the rewritten residual to the GPU");
}

static const sp_select_device table = {dev_topk, dev_threshold, dev_gaussian, dev_zero_at, dev_zero_all, dev_set_all};

int sp_seldev_check(int exact, const char *backend, char *err, size_t errlen)
{
    if (strcmp(backend, "mpi") != 0) {
        snprintf(err, errlen, "--select cuda runs on sparsim-mpi (real kernels); the simulator prices them with "
                              "--device");
        return -1;
    }
    if (!sp_cuda_built()) {
        snprintf(err, errlen, "--select cuda: this sparsim-mpi was built without CUDA (no nvcc when it was "
                              "configured)");
        return -1;
    }
    if (!exact) {
        snprintf(err, errlen, "--select cuda needs exact payloads (real vectors to select from)");
        return -1;
    }
    char why[200];
    if (sp_cuda_devices(why, sizeof why) <= 0) {
        snprintf(err, errlen, "--select cuda: %s", why);
        return -2;
    }
    return 0;
}

sp_seldev *sp_seldev_open(sp_ctx *c, float *acc, uint64_t n, char *err, size_t errlen)
{
    sp_seldev *d = calloc(1, sizeof *d);
    char why[300];
    if (!d || !(d->grad = malloc((n ? n : 1) * sizeof *d->grad))) {
        snprintf(err, errlen, "--select cuda: out of memory on rank %d", c->rank);
        if (d)
            free(d);
        return NULL;
    }
    d->c = c;
    d->acc = acc;
    d->n = n;
    if (!(d->g = sp_cuda_open(c->rank, why, sizeof why))) {
        snprintf(err, errlen, "--select cuda on rank %d: %s", c->rank, why);
        free(d->grad);
        free(d);
        return NULL;
    }
    if (!(d->dacc = sp_cuda_alloc(d->g, n * sizeof *acc)) || !(d->dgrad = sp_cuda_alloc(d->g, n * sizeof *acc)) ||
        sp_cuda_put(d->g, d->dacc, acc, n * sizeof *acc) != 0) {
        snprintf(err, errlen, "--select cuda on rank %d: %s", c->rank, sp_cuda_error(d->g));
        sp_seldev_close(d);
        return NULL;
    }
    sp_cuda_clear_times(d->g);
    sp_select_device_install(&table, d, acc, n);
    return d;
}

int sp_seldev_gradient(sp_seldev *d, sp_grad_source *src, int it, int rank, char *err, size_t errlen)
{
    if (src->fill(src, it, rank, d->grad, 0, err, errlen) != 0)
        return -1;
    for (uint64_t i = 0; i < d->n; i++)
        d->acc[i] += d->grad[i];
    double c0, k0, b0, c1, k1, b1;
    sp_cuda_times(d->g, &c0, &k0, &b0);
    int rc = sp_cuda_put(d->g, d->dgrad, d->grad, d->n * sizeof *d->grad);
    sp_cuda_times(d->g, &c1, &k1, &b1);
    d->upload_s += c1 - c0;
    if (rc != 0 || sp_cuda_add(d->g, d->dacc, d->dgrad, d->n) != 0) {
        snprintf(err, errlen, "--select cuda: adding the gradient on the GPU: %s", sp_cuda_error(d->g));
        return -1;
    }
    return 0;
}

int sp_seldev_iteration_done(sp_seldev *d, sp_ctx *c, char *err, size_t errlen)
{
    double cs, ks, bs;
    sp_cuda_times(d->g, &cs, &ks, &bs);
    sp_stat(c, "gpu_copy_s", d->copy_s);
    sp_stat(c, "gpu_kernel_s", ks - d->kernel_mark);
    sp_stat(c, "gpu_upload_s", d->upload_s);
    d->copy_s = d->upload_s = 0;
    d->kernel_mark = ks;
    if (d->failed) {
        snprintf(err, errlen, "%s (rank %d)", d->err, c->rank);
        return -1;
    }
    return 0;
}

int sp_seldev_verify(sp_seldev *d, char *err, size_t errlen)
{
    if (d->failed) {
        snprintf(err, errlen, "%s", d->err);
        return -1;
    }
    /* the host's gradient buffer is free now: the GPU's vector comes back into it */
    if (sp_cuda_get(d->g, d->grad, d->dacc, d->n * sizeof *d->grad) != 0) {
        snprintf(err, errlen, "--select cuda: reading the GPU's residual: %s", sp_cuda_error(d->g));
        return -1;
    }
    /* the same bits, or both NaN (a NaN that GPU arithmetic makes is its canonical one) */
    uint64_t i = 0;
    while (i < d->n && (!memcmp(&d->grad[i], &d->acc[i], sizeof *d->grad) || (isnan(d->grad[i]) && isnan(d->acc[i]))))
        i++;
    if (i < d->n) {
        snprintf(err, errlen, "--select cuda: the GPU's residual and the host's differ first at index %llu (%.9g, %.9g)",
                 (unsigned long long)i, (double)d->grad[i], (double)d->acc[i]);
        return -1;
    }
    return 0;
}

void sp_seldev_close(sp_seldev *d)
{
    if (!d)
        return;
    sp_select_device_install(NULL, NULL, NULL, 0);
    if (d->g) {
        sp_cuda_free(d->g, d->dacc);
        sp_cuda_free(d->g, d->dgrad);
        sp_cuda_free(d->g, d->dpairs);
        sp_cuda_close(d->g);
    }
    free(d->grad);
    free(d);
}
