/* select_cuda.cu - the selection kernels on an NVIDIA GPU (select_cuda.h).
 *
 * Exact top-k is a radix selection on the 31 bits of |x| (the IEEE pattern of
 * a non-negative float orders like its value, NaN patterns above infinity):
 * three histogram passes of 11, 11 and 10 bits find the bits v of the k-th
 * largest |x|, how many entries lie above it and how many of the equal ones
 * the top k keeps (the r with the smallest indices: select.h's tie rule).
 * When only some of the equal ones are kept, one more pass finds the index
 * of the r-th.  A last pass compacts the chosen entries in index order.  No
 * sort: about four reads of x, where a radix sort of 64-bit keys makes eight
 * read-write passes over keys and values.  (Radix selection on GPUs: Alabi,
 * Blanchard, Gordon and Steinbach, "Fast k-selection algorithms for graphics
 * processing units", ACM JEA 17, 2012.)
 *
 * Compaction (threshold filter, the last top-k pass) is one kernel of ours
 * (ct_compact: one read of x, decoupled look-back) that keeps index order
 * and writes only below the caller's capacity, so one pass both counts and
 * writes.  Where only some entries equal to the k-th are kept, the test needs
 * the index too, and CUB's DeviceSelect over (index, value) pairs does it.
 *
 * Every call synchronises its stream before it returns: the callers need the
 * counts on the host, and the times (copy, kernel) are wall times of calls.
 */
#include "select_cuda.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cub/block/block_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the context ----------------------------------------------------------- */

struct rs_state {                /* the radix selection's progress, on the device */
    unsigned int prefix, mask;   /* bits of |x| fixed so far, and which */
    unsigned long long remaining; /* of the top k, how many are still to place among the candidates */
    unsigned long long above;    /* entries known to lie above the candidates */
    unsigned long long equal;    /* candidates in the last chosen bin */
    long long istar;             /* equal entries with an index below it are kept */
};

struct mom {
    double s, q;
};

struct sp_cuda {
    int dev;
    cudaStream_t stream;
    char name[160];
    char err[300];
    void *temp;
    size_t temp_bytes;
    unsigned int *hist;      /* 2048 bins */
    rs_state *state;         /* device */
    long long *count;        /* DeviceSelect's count: pinned host memory the GPU writes (unified addressing) */
    mom *moments;            /* device */
    unsigned long long *tiles; /* the compaction's tile states and its ticket (device) */
    size_t tiles_bytes;
    void *host_small;        /* pinned: what comes back of the above */
    float *hx;               /* host wrappers' device buffers */
    size_t hx_bytes;
    sp_pair *hp;
    size_t hp_bytes;
    double copy_s, kernel_s, copy_bytes;
};

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(sp_cuda *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, sizeof g->err, fmt, ap);
    va_end(ap);
    return -1;
}

#define CK(g, call)                                                                                          \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess)                                                                               \
            return fail((g), "CUDA: %s (%s)", cudaGetErrorString(e_), #call);                               \
    } while (0)

static int ensure_temp(sp_cuda *g, size_t bytes)
{
    if (bytes <= g->temp_bytes)
        return 0;
    cudaFree(g->temp);
    g->temp = NULL;
    g->temp_bytes = 0;
    size_t want = bytes + bytes / 4;
    CK(g, cudaMalloc(&g->temp, want));
    g->temp_bytes = want;
    return 0;
}

static int grow(sp_cuda *g, void **p, size_t *have, size_t bytes)
{
    if (bytes <= *have)
        return 0;
    cudaFree(*p);
    *p = NULL;
    *have = 0;
    CK(g, cudaMalloc(p, bytes ? bytes : 16));
    *have = bytes;
    return 0;
}

extern "C" int sp_cuda_built(void) { return 1; }

extern "C" int sp_cuda_devices(char *err, size_t errlen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        snprintf(err, errlen, "no CUDA device: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports none");
        return 0;
    }
    return count;
}

extern "C" sp_cuda *sp_cuda_open(int slot, char *err, size_t errlen)
{
    int count = sp_cuda_devices(err, errlen);
    if (count <= 0)
        return NULL;
    sp_cuda *g = (sp_cuda *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->dev = (slot < 0 ? 0 : slot) % count;
    cudaDeviceProp prop;
    int rc = 0;
    if (cudaSetDevice(g->dev) != cudaSuccess || cudaGetDeviceProperties(&prop, g->dev) != cudaSuccess ||
        cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking) != cudaSuccess)
        rc = -1;
    if (rc == 0) {
        snprintf(g->name, sizeof g->name, "%.100s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
                 (double)prop.totalGlobalMem / 1073741824.0);
        if (cudaMalloc(&g->hist, 2048 * sizeof *g->hist) != cudaSuccess ||
            cudaMalloc(&g->state, sizeof *g->state) != cudaSuccess ||
            cudaMallocHost(&g->count, sizeof *g->count) != cudaSuccess ||
            cudaMalloc(&g->moments, sizeof *g->moments) != cudaSuccess ||
            cudaMallocHost(&g->host_small, 256) != cudaSuccess ||
            /* on the context's own stream: a non-blocking stream does not wait for the default one */
            cudaMemsetAsync(g->hist, 0, 2048 * sizeof *g->hist, g->stream) != cudaSuccess ||
            cudaStreamSynchronize(g->stream) != cudaSuccess)
            rc = -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot use CUDA device %d: %s", g->dev, cudaGetErrorString(cudaGetLastError()));
        sp_cuda_close(g);
        return NULL;
    }
    return g;
}

extern "C" void sp_cuda_close(sp_cuda *g)
{
    if (!g)
        return;
    cudaFree(g->temp);
    cudaFree(g->hist);
    cudaFree(g->state);
    if (g->count)
        cudaFreeHost(g->count);
    cudaFree(g->moments);
    cudaFree(g->tiles);
    cudaFree(g->hx);
    cudaFree(g->hp);
    if (g->host_small)
        cudaFreeHost(g->host_small);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
}

extern "C" const char *sp_cuda_name(const sp_cuda *g) { return g->name; }
extern "C" const char *sp_cuda_error(const sp_cuda *g) { return g->err; }

extern "C" void *sp_cuda_alloc(sp_cuda *g, size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
    if (e != cudaSuccess) {
        fail(g, "CUDA: cannot allocate %zu bytes: %s", bytes, cudaGetErrorString(e));
        return NULL;
    }
    return p;
}

extern "C" void sp_cuda_free(sp_cuda *g, void *d)
{
    (void)g;
    cudaFree(d);
}

static int copy(sp_cuda *g, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (!bytes)
        return 0;
    double t0 = wall();
    CK(g, cudaMemcpyAsync(dst, src, bytes, kind, g->stream));
    CK(g, cudaStreamSynchronize(g->stream));
    g->copy_s += wall() - t0;
    g->copy_bytes += (double)bytes;
    return 0;
}

extern "C" int sp_cuda_put(sp_cuda *g, void *dev, const void *host, size_t bytes)
{
    return copy(g, dev, host, bytes, cudaMemcpyHostToDevice);
}

extern "C" int sp_cuda_get(sp_cuda *g, void *host, const void *dev, size_t bytes)
{
    return copy(g, host, dev, bytes, cudaMemcpyDeviceToHost);
}

extern "C" void sp_cuda_times(const sp_cuda *g, double *copy_s, double *kernel_s, double *copy_bytes)
{
    *copy_s = g->copy_s;
    *kernel_s = g->kernel_s;
    *copy_bytes = g->copy_bytes;
}

extern "C" void sp_cuda_clear_times(sp_cuda *g) { g->copy_s = g->kernel_s = g->copy_bytes = 0; }

/* ---- device pieces ---------------------------------------------------------- */

__device__ __forceinline__ unsigned int absbits(float v) { return __float_as_uint(v) & 0x7fffffffu; }

/* entry i as a pair */
struct pair_at {
    const float *x;
    __host__ __device__ sp_pair operator()(long long i) const
    {
        sp_pair p;
        p.idx = (int32_t)i;
        p.val = x[i];
        return p;
    }
};

/* writes output position pos only below the caller's capacity */
struct capped_writer {
    sp_pair *out;
    long long cap;
    __host__ __device__ void operator()(long long pos, const sp_pair &p) const
    {
        if (pos < cap)
            out[pos] = p;
    }
};

/* flags on the values alone: |x| > thr (NaN: false); |x|'s bits >= v; all */
struct abs_above {
    float thr;
    __host__ __device__ bool operator()(float v) const { return fabsf(v) > thr; }
};
struct bits_at_least {
    unsigned int v;
    __device__ bool operator()(float f) const { return absbits(f) >= v; }
};
struct every {
    __host__ __device__ bool operator()(float) const { return true; }
};

/* in the top k: above the k-th largest |x|, or equal to it with an index below istar */
struct in_topk {
    const rs_state *st;
    __device__ bool operator()(const sp_pair &p) const
    {
        unsigned int b = absbits(p.val), v = st->prefix;
        return b > v || (b == v && (long long)p.idx < st->istar);
    }
};

struct equal_bits {
    const float *x;
    const rs_state *st;
    __device__ bool operator()(long long i) const { return absbits(x[i]) == st->prefix; }
};

/* records the index of the r-th equal entry (r = st->remaining, 1-based) */
struct pick_rth {
    rs_state *st;
    __device__ void operator()(long long pos, long long i) const
    {
        if ((unsigned long long)pos + 1 == st->remaining)
            st->istar = i + 1;
    }
};

#define RS_BINS 2048
#define RS_THREADS 256 /* a block of 1024 asked for more registers than an SM has (H200: 65536) */

/* histogram of digit (b >> shift) & (bins - 1) over the candidates */
__global__ void rs_hist(const float *x, unsigned long long n, const rs_state *st, int shift, int bins,
                        unsigned int *hist)
{
    __shared__ unsigned int h[RS_BINS];
    for (int i = threadIdx.x; i < bins; i += blockDim.x)
        h[i] = 0;
    __syncthreads();
    unsigned int prefix = st->prefix, mask = st->mask, dm = (unsigned int)bins - 1;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    /* four floats a load where x is 16-byte aligned (cudaMalloc's always is),
     * then the tail one by one */
    unsigned long long n4 = ((unsigned long long)(size_t)x & 15) == 0 ? n / 4 : 0;
    const float4 *x4 = (const float4 *)x;
    for (unsigned long long i = first; i < n4; i += stride) {
        float4 v = x4[i];
        unsigned int b[4] = {absbits(v.x), absbits(v.y), absbits(v.z), absbits(v.w)};
        for (int j = 0; j < 4; j++)
            if ((b[j] & mask) == prefix)
                atomicAdd(&h[(b[j] >> shift) & dm], 1u);
    }
    for (unsigned long long i = 4 * n4 + first; i < n; i += stride) {
        unsigned int b = absbits(x[i]);
        if ((b & mask) == prefix)
            atomicAdd(&h[(b >> shift) & dm], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < bins; i += blockDim.x)
        if (h[i])
            atomicAdd(&hist[i], h[i]);
}

/* one block: the bin, from the top, in which the remaining-th largest
 * candidate lies; fixes its digit and clears the histogram */
__global__ void __launch_bounds__(RS_THREADS) rs_pick(rs_state *st, unsigned int *hist, int shift, int bins)
{
    typedef cub::BlockScan<unsigned long long, RS_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    int per = bins / RS_THREADS, t = threadIdx.x;
    unsigned long long rem = st->remaining, mine = 0, before;
    for (int j = 0; j < per; j++)
        mine += hist[bins - 1 - (t * per + j)];
    scan_t(tmp).ExclusiveSum(mine, before);
    __syncthreads(); /* every thread has read st->remaining */
    for (int j = 0; j < per; j++) {
        int d = bins - 1 - (t * per + j);
        unsigned long long h = hist[d];
        if (h && before < rem && before + h >= rem) {
            st->above += before;
            st->remaining = rem - before;
            st->prefix |= (unsigned int)d << shift;
            st->mask |= (unsigned int)(bins - 1) << shift;
            st->equal = h;
        }
        before += h;
    }
    __syncthreads();
    for (int j = 0; j < per; j++)
        hist[t * per + j] = 0;
}

__global__ void k_add(float *a, const float *b, unsigned long long n)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        a[i] += b[i];
}

__global__ void k_scatter_add(float *y, const sp_pair *p, unsigned long long m)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
        y[p[i].idx] += p[i].val;
}

__global__ void k_zero_at(float *y, const sp_pair *p, unsigned long long m)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
        y[p[i].idx] = 0.0f;
}

struct to_mom {
    const float *x;
    double shift;
    __host__ __device__ mom operator()(long long i) const
    {
        double d = (double)x[i] - shift;
        mom m;
        m.s = d;
        m.q = d * d;
        return m;
    }
};

struct add_mom {
    __host__ __device__ mom operator()(const mom &a, const mom &b) const
    {
        mom m;
        m.s = a.s + b.s;
        m.q = a.q + b.q;
        return m;
    }
};

static unsigned int grid_for(unsigned long long n, int threads)
{
    unsigned long long b = (n + (unsigned long long)threads - 1) / (unsigned long long)threads;
    if (b > 65535ull * 8)
        b = 65535ull * 8;
    return (unsigned int)(b ? b : 1);
}

/* DeviceSelect of the pairs of x that pass `pred`, in index order, into a
 * capped writer; the count lands in *selected */
template <typename Pred>
static int select_pairs(sp_cuda *g, const float *dx, unsigned long long n, Pred pred, sp_pair *dout, long long cap,
                        long long *selected)
{
    auto in = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), pair_at{dx});
    capped_writer w{dout, dout ? cap : 0};
    auto out = thrust::make_tabulate_output_iterator(w);
    size_t bytes = 0;
    CK(g, cub::DeviceSelect::If(NULL, bytes, in, out, g->count, (long long)n, pred, g->stream));
    if (ensure_temp(g, bytes) != 0)
        return -1;
    CK(g, cub::DeviceSelect::If(g->temp, bytes, in, out, g->count, (long long)n, pred, g->stream));
    CK(g, cudaStreamSynchronize(g->stream));
    *selected = *(volatile long long *)g->count;
    return 0;
}

/* The same on a test of the value alone, in one pass of one kernel of our own:
 * each block takes the next tile of 4096 entries (a ticket, so that every
 * tile before it is running or done), reads it four floats a load, counts its
 * entries that pass, publishes the count, learns how many pass before it by
 * decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan
 * with Decoupled Look-back", NVIDIA technical report NVR-2016-002), and writes
 * its pairs in index order.  CUB's DeviceSelect building pairs per entry went
 * at a fifth of an H200's bandwidth, its FlaggedIf on the values at a third. */
#define CT_THREADS 256
#define CT_VEC 4 /* float4 loads per thread */
#define CT_TILE (CT_THREADS * CT_VEC * 4)
#define CT_AGG 1ull  /* a tile state: its own count is published */
#define CT_INCL 2ull /* ... the count of it and every tile before it */
#define CT_VALUE ((1ull << 62) - 1)

template <typename Flag>
__global__ void __launch_bounds__(CT_THREADS)
    ct_compact(const float *x, long long n, Flag flag, sp_pair *out, long long cap, unsigned long long *state,
               unsigned long long *ticket, long long ntiles, long long *count)
{
    typedef cub::BlockScan<int, CT_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ long long s_tile, s_excl;
    if (threadIdx.x == 0)
        s_tile = (long long)atomicAdd(ticket, 1ull);
    __syncthreads();
    long long tile = s_tile, base = tile * CT_TILE;
    int vec = ((unsigned long long)(size_t)x & 15) == 0;
    float v[CT_VEC][4];
    unsigned int hit[CT_VEC];
    int off[CT_VEC], tot[CT_VEC], agg = 0;
    for (int j = 0; j < CT_VEC; j++) {
        long long e = base + ((long long)j * CT_THREADS + threadIdx.x) * 4;
        if (vec && e + 3 < n) {
            float4 f = *(const float4 *)(x + e);
            v[j][0] = f.x;
            v[j][1] = f.y;
            v[j][2] = f.z;
            v[j][3] = f.w;
        } else
            for (int c = 0; c < 4; c++)
                v[j][c] = e + c < n ? x[e + c] : 0.0f;
        hit[j] = 0;
        for (int c = 0; c < 4; c++)
            if (e + c < n && flag(v[j][c]))
                hit[j] |= 1u << c;
    }
    for (int j = 0; j < CT_VEC; j++) {
        scan_t(tmp).ExclusiveSum(__popc(hit[j]), off[j], tot[j]);
        __syncthreads();
        agg += tot[j];
    }
    if (threadIdx.x < 32) { /* the look-back, by the first warp */
        int lane = threadIdx.x;
        long long excl = 0;
        if (tile == 0) {
            if (lane == 0)
                atomicExch(&state[0], (CT_INCL << 62) | (unsigned long long)agg);
        } else {
            if (lane == 0)
                atomicExch(&state[tile], (CT_AGG << 62) | (unsigned long long)agg);
            for (long long p = tile - 1;; p -= 32) {
                long long q = p - lane;
                unsigned long long w = CT_INCL << 62; /* before the first tile: 0 */
                if (q >= 0)
                    do
                        w = atomicAdd(&state[q], 0ull);
                    while ((w >> 62) == 0);
                unsigned int incl = __ballot_sync(0xffffffffu, (w >> 62) == CT_INCL);
                int first = incl ? __ffs(incl) - 1 : 31; /* the nearest tile with its whole prefix */
                long long val = lane <= first ? (long long)(w & CT_VALUE) : 0;
                for (int o = 16; o > 0; o >>= 1)
                    val += __shfl_down_sync(0xffffffffu, val, o);
                excl += __shfl_sync(0xffffffffu, val, 0);
                if (incl)
                    break;
            }
            if (lane == 0)
                atomicExch(&state[tile], (CT_INCL << 62) | (unsigned long long)(excl + agg));
        }
        if (lane == 0) {
            s_excl = excl;
            if (tile == ntiles - 1)
                *count = excl + agg;
        }
    }
    __syncthreads();
    long long before = s_excl;
    for (int j = 0; j < CT_VEC; j++) {
        long long pos = before + off[j], e = base + ((long long)j * CT_THREADS + threadIdx.x) * 4;
        for (int c = 0; c < 4; c++)
            if (hit[j] >> c & 1) {
                if (pos < cap) {
                    sp_pair pr;
                    pr.idx = (int32_t)(e + c);
                    pr.val = v[j][c];
                    out[pos] = pr;
                }
                pos++;
            }
        before += tot[j];
    }
}

template <typename Flag>
static int select_fast(sp_cuda *g, const float *dx, unsigned long long n, Flag flag, sp_pair *dout, long long cap,
                       long long *selected)
{
    long long ntiles = (long long)((n + CT_TILE - 1) / CT_TILE);
    size_t bytes = (size_t)(ntiles + 1) * sizeof(unsigned long long);
    if (grow(g, (void **)&g->tiles, &g->tiles_bytes, bytes) != 0)
        return -1;
    CK(g, cudaMemsetAsync(g->tiles, 0, bytes, g->stream));
    ct_compact<<<(unsigned int)ntiles, CT_THREADS, 0, g->stream>>>(dx, (long long)n, flag, dout, dout ? cap : 0,
                                                                 g->tiles + 1, g->tiles, ntiles, g->count);
    CK(g, cudaGetLastError());
    CK(g, cudaStreamSynchronize(g->stream));
    *selected = *(volatile long long *)g->count;
    return 0;
}

static int too_long(sp_cuda *g, uint64_t n)
{
    if (n > 0x7fffffffull)
        return fail(g, "n = %llu does not fit the int32 indices of the pairs", (unsigned long long)n);
    return 0;
}

/* ---- the kernels ------------------------------------------------------------- */

static int64_t topk_run(sp_cuda *g, const float *dx, uint64_t n, uint64_t k, sp_pair *dout)
{
    if (too_long(g, n) != 0)
        return -1;
    if (k > n)
        k = n;
    if (k == 0)
        return 0;
    long long got = 0;
    if (k == n) { /* every entry, NaN too */
        if (select_fast(g, dx, n, every{}, dout, (long long)k, &got) != 0)
            return -1;
        return got;
    }
    rs_state init = {0, 0, k, 0, 0, (long long)n};
    CK(g, cudaMemcpyAsync(g->state, &init, sizeof init, cudaMemcpyHostToDevice, g->stream));
    static const int shifts[3] = {21, 10, 0}, widths[3] = {11, 11, 10};
    int sms = 0;
    CK(g, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g->dev));
    unsigned int grid = grid_for(n, 256);
    if (grid > (unsigned int)sms * 8u)
        grid = (unsigned int)sms * 8u;
    for (int pass = 0; pass < 3; pass++) {
        int bins = 1 << widths[pass];
        rs_hist<<<grid, 256, 0, g->stream>>>(dx, n, g->state, shifts[pass], bins, g->hist);
        rs_pick<<<1, RS_THREADS, 0, g->stream>>>(g->state, g->hist, shifts[pass], bins);
    }
    CK(g, cudaGetLastError());
    rs_state *hs = (rs_state *)g->host_small;
    CK(g, cudaMemcpyAsync(hs, g->state, sizeof *hs, cudaMemcpyDeviceToHost, g->stream));
    CK(g, cudaStreamSynchronize(g->stream));
    if (hs->remaining < hs->equal) { /* some of the equal ones: the first `remaining` by index */
        auto in = thrust::counting_iterator<long long>(0);
        auto out = thrust::make_tabulate_output_iterator(pick_rth{g->state});
        size_t bytes = 0;
        CK(g, cub::DeviceSelect::If(NULL, bytes, in, out, g->count, (long long)n, equal_bits{dx, g->state},
                                    g->stream));
        if (ensure_temp(g, bytes) != 0)
            return -1;
        CK(g, cub::DeviceSelect::If(g->temp, bytes, in, out, g->count, (long long)n, equal_bits{dx, g->state},
                                    g->stream));
    }
    /* every entry with the k-th's bits is kept: the bits decide alone */
    int rc = hs->remaining == hs->equal ? select_fast(g, dx, n, bits_at_least{hs->prefix}, dout, (long long)k, &got)
                                        : select_pairs(g, dx, n, in_topk{g->state}, dout, (long long)k, &got);
    if (rc != 0)
        return -1;
    if ((uint64_t)got != k)
        return fail(g, "top-k selected %lld entries, not %llu (a fault in the radix selection)", got,
                    (unsigned long long)k);
    return got;
}

extern "C" int64_t sp_cuda_topk(sp_cuda *g, const float *dx, uint64_t n, uint64_t k, sp_pair *dout)
{
    double t0 = wall();
    int64_t r = topk_run(g, dx, n, k, dout);
    g->kernel_s += wall() - t0;
    return r;
}

extern "C" int64_t sp_cuda_threshold(sp_cuda *g, const float *dx, uint64_t n, float thr, sp_pair *dout, uint64_t cap)
{
    if (too_long(g, n) != 0)
        return -1;
    if (n == 0)
        return 0;
    double t0 = wall();
    long long got = 0;
    int rc = select_fast(g, dx, n, abs_above{thr}, dout, (long long)(cap > n ? n : cap), &got);
    g->kernel_s += wall() - t0;
    return rc != 0 ? -1 : got;
}

extern "C" int sp_cuda_moments(sp_cuda *g, const float *dx, uint64_t n, double *shift, double *sum, double *sumsq)
{
    *shift = *sum = *sumsq = 0.0;
    if (n == 0)
        return 0;
    double t0 = wall();
    float first;
    CK(g, cudaMemcpyAsync(g->host_small, dx, sizeof first, cudaMemcpyDeviceToHost, g->stream));
    CK(g, cudaStreamSynchronize(g->stream));
    memcpy(&first, g->host_small, sizeof first);
    auto in = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), to_mom{dx, (double)first});
    mom zero = {0.0, 0.0};
    size_t bytes = 0;
    CK(g, cub::DeviceReduce::Reduce(NULL, bytes, in, g->moments, (long long)n, add_mom{}, zero, g->stream));
    if (ensure_temp(g, bytes) != 0)
        return -1;
    CK(g, cub::DeviceReduce::Reduce(g->temp, bytes, in, g->moments, (long long)n, add_mom{}, zero, g->stream));
    mom *h = (mom *)g->host_small;
    CK(g, cudaMemcpyAsync(h, g->moments, sizeof *h, cudaMemcpyDeviceToHost, g->stream));
    CK(g, cudaStreamSynchronize(g->stream));
    *shift = (double)first;
    *sum = h->s;
    *sumsq = h->q;
    g->kernel_s += wall() - t0;
    return 0;
}

static int launch_done(sp_cuda *g, double t0)
{
    CK(g, cudaGetLastError());
    CK(g, cudaStreamSynchronize(g->stream));
    g->kernel_s += wall() - t0;
    return 0;
}

extern "C" int sp_cuda_scatter_add(sp_cuda *g, float *dy, const sp_pair *dp, uint64_t m)
{
    if (!m)
        return 0;
    double t0 = wall();
    k_scatter_add<<<grid_for(m, 256), 256, 0, g->stream>>>(dy, dp, m);
    return launch_done(g, t0);
}

extern "C" int sp_cuda_add(sp_cuda *g, float *dacc, const float *dgrad, uint64_t n)
{
    if (!n)
        return 0;
    double t0 = wall();
    k_add<<<grid_for(n, 256), 256, 0, g->stream>>>(dacc, dgrad, n);
    return launch_done(g, t0);
}

extern "C" int sp_cuda_zero_at(sp_cuda *g, float *dacc, const sp_pair *dp, uint64_t m)
{
    if (!m)
        return 0;
    double t0 = wall();
    k_zero_at<<<grid_for(m, 256), 256, 0, g->stream>>>(dacc, dp, m);
    return launch_done(g, t0);
}

extern "C" int sp_cuda_zero(sp_cuda *g, float *dacc, uint64_t n)
{
    if (!n)
        return 0;
    double t0 = wall();
    CK(g, cudaMemsetAsync(dacc, 0, n * sizeof *dacc, g->stream));
    return launch_done(g, t0);
}

/* ---- on host vectors ------------------------------------------------------------ */

static int stage_in(sp_cuda *g, const float *x, uint64_t n, uint64_t pairs)
{
    if (grow(g, (void **)&g->hx, &g->hx_bytes, n * sizeof *x) != 0 ||
        grow(g, (void **)&g->hp, &g->hp_bytes, pairs * sizeof(sp_pair)) != 0)
        return -1;
    return sp_cuda_put(g, g->hx, x, n * sizeof *x);
}

extern "C" int64_t sp_cuda_topk_host(sp_cuda *g, const float *x, uint64_t n, uint64_t k, sp_pair *out)
{
    uint64_t kk = k < n ? k : n;
    if (stage_in(g, x, n, kk) != 0)
        return -1;
    int64_t m = sp_cuda_topk(g, g->hx, n, k, g->hp);
    if (m > 0 && sp_cuda_get(g, out, g->hp, (size_t)m * sizeof *out) != 0)
        return -1;
    return m;
}

extern "C" int64_t sp_cuda_threshold_host(sp_cuda *g, const float *x, uint64_t n, float thr, sp_pair *out,
                                          uint64_t cap)
{
    if (!out)
        cap = 0;
    uint64_t room = cap < n ? cap : n;
    if (stage_in(g, x, n, room) != 0)
        return -1;
    int64_t m = sp_cuda_threshold(g, g->hx, n, thr, room ? g->hp : NULL, room);
    if (m > 0 && room) {
        uint64_t w = (uint64_t)m < room ? (uint64_t)m : room;
        if (sp_cuda_get(g, out, g->hp, w * sizeof *out) != 0)
            return -1;
    }
    return m;
}
