/* gpu_bench.cu - the CUDA selection kernels (algorithms/select_cuda.cu) on
 * this machine's GPU, against its memory bandwidth, against a full CUB radix
 * sort of the same keys, and against the CPU kernels on the same machine.
 *
 * For each n and density, on Laplace-distributed values (heavy-ish tails, as
 * gradients) in GPU memory:
 *   threshold  the filter at the threshold that keeps exactly k = density * n
 *              entries; bytes moved (4n read + 8k written) over its time, as a
 *              share of the GPU's published peak and of a measured plain read
 *              (CUB's float sum over the same n)
 *   topk       exact top-k (radix selection)
 *   sort       CUB DeviceRadixSort of the same 64-bit keys the selection
 *              orders by (|x| bits above the complemented index), descending:
 *              the sort alone, keys already built (what a sort-based top-k
 *              would at least pay)
 *   gaussian   the Gaussian-k moments in one pass
 *   cpu_*      the CPU kernels (algorithms/topk_select.c) on the same values
 * Times are wall times of the synchronous calls as sparsim-mpi makes them
 * (launches, the small copies of counts and the synchronisation included),
 * the median of --reps runs after a warm-up.  The GPU's top-k and threshold
 * selections are checked against the CPU's, pair for pair.
 *
 * Prints a markdown table on stdout.  usage: gpu_bench [--sizes 20,24,27]
 * [--densities 0.001,0.01,0.1] [--reps R] [--no-cpu]  (sizes as log2 n)
 */
#include "algorithms/select.h"
#include "algorithms/select_cuda.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

#define CK(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "gpu_bench: CUDA: %s (%s)\n", cudaGetErrorString(e_), #call);                   \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

__global__ void make_keys(const float *x, unsigned long long n, unsigned long long *keys)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned long long b = __float_as_uint(x[i]) & 0x7fffffffu;
        keys[i] = (b << 32) | (unsigned long long)(0xffffffffu - (unsigned int)i);
    }
}

/* published peak memory bandwidth by product name, first match wins (NVIDIA
 * data sheets: H200 4.8 TB/s; H100 SXM 3.35, NVL 3.9, PCIe 2.0 TB/s; A100 80 GB
 * SXM 2,039, 80 GB PCIe 1,935, 40 GB 1,555 GB/s; V100 900 GB/s; P100 720 GB/s);
 * 0 when the name is not in the table */
static double published_peak(const char *name)
{
    static const struct {
        const char *part;
        double bw;
    } table[] = {{"H200", 4.8e12},          {"H100 NVL", 3.9e12},    {"H100 PCIe", 2.0e12},
                 {"H100", 3.35e12},         {"A100 80GB PCIe", 1.935e12}, {"A100-SXM4-80GB", 2.039e12},
                 {"A100", 1.555e12},        {"V100", 900e9},         {"P100", 720e9}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strstr(name, table[i].part))
            return table[i].bw;
    return 0.0;
}

int main(int argc, char **argv)
{
    std::vector<int> lg = {20, 24, 27};
    std::vector<double> dens = {0.001, 0.01, 0.1};
    int reps = 7, cpu = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            lg.clear();
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ","))
                lg.push_back(atoi(t));
        } else if (!strcmp(argv[i], "--densities") && i + 1 < argc) {
            dens.clear();
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ","))
                dens.push_back(atof(t));
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-cpu"))
            cpu = 0;
        else {
            fprintf(stderr, "gpu_bench: unknown argument '%s' (see the head of bench/gpu_bench.cu)\n", argv[i]);
            return 2;
        }
    }
    for (int l : lg)
        if (l < 10 || l > 30) {
            fprintf(stderr, "gpu_bench: --sizes takes log2 n from 10 to 30, got %d\n", l);
            return 2;
        }
    for (double d : dens)
        if (!(d > 0 && d <= 0.5)) {
            fprintf(stderr, "gpu_bench: --densities take numbers in (0, 0.5], got %g\n", d);
            return 2;
        }
    if (reps < 1)
        reps = 1;
    char err[300];
    sp_cuda *g = sp_cuda_open(0, err, sizeof err);
    if (!g) {
        fprintf(stderr, "gpu_bench: %s\n", err);
        return 1;
    }
    int dev = 0, clock_khz = 0, bus = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev);
    double peak = published_peak(prop.name);
    const char *peak_from = "data sheet";
    if (peak <= 0) { /* double data rate: two transfers per clock */
        peak = 2.0 * clock_khz * 1e3 * bus / 8.0;
        peak_from = "memory clock x bus width";
    }
    printf("GPU: %s; peak memory bandwidth %.0f GB/s (%s)\n\n", sp_cuda_name(g), peak / 1e9, peak_from);
    printf("| n | density | k | threshold ms | GB/s | share of peak | share of read | top-k ms | sort ms | sort / top-k "
           "| gaussian ms | CPU threshold ms | CPU top-k ms | CPU gaussian ms | speedup thr / top-k / gauss | same as CPU |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    int bad = 0;
    for (int l : lg) {
        uint64_t n = 1ull << l;
        std::vector<float> x(n);
        uint64_t s = 0x9e3779b97f4a7c15ull ^ n;
        for (uint64_t i = 0; i < n; i++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            double u = ((double)(s >> 11) + 0.5) / 9007199254740992.0;
            x[i] = (float)(u < 0.5 ? log(2 * u) : -log(2 * (1 - u)));
        }
        float *dx = (float *)sp_cuda_alloc(g, n * sizeof(float));
        sp_pair *dp = (sp_pair *)sp_cuda_alloc(g, n * sizeof(sp_pair) / 2 + 16);
        unsigned long long *k1, *k2;
        CK(cudaMalloc(&k1, n * 8));
        CK(cudaMalloc(&k2, n * 8));
        float *dsum;
        CK(cudaMalloc(&dsum, sizeof(float)));
        if (!dx || !dp || sp_cuda_put(g, dx, x.data(), n * sizeof(float)) != 0) {
            fprintf(stderr, "gpu_bench: %s\n", sp_cuda_error(g));
            return 1;
        }
        /* a plain read of n floats: CUB's sum */
        size_t tb = 0, sb = 0;
        CK(cub::DeviceReduce::Sum(NULL, tb, dx, dsum, (long long)n));
        CK(cub::DeviceRadixSort::SortKeysDescending(NULL, sb, k1, k2, (long long)n));
        void *temp;
        CK(cudaMalloc(&temp, std::max(tb, sb)));
        std::vector<double> tr;
        for (int r = 0; r <= reps; r++) {
            double t0 = wall();
            CK(cub::DeviceReduce::Sum(temp, tb, dx, dsum, (long long)n));
            CK(cudaDeviceSynchronize());
            if (r)
                tr.push_back(wall() - t0);
        }
        double read_bw = 4.0 * n / median(tr);
        /* the sort of the same keys */
        make_keys<<<4096, 256>>>(dx, n, k1);
        CK(cudaDeviceSynchronize());
        std::vector<double> ts;
        for (int r = 0; r <= std::min(reps, 3); r++) {
            double t0 = wall();
            CK(cub::DeviceRadixSort::SortKeysDescending(temp, sb, k1, k2, (long long)n));
            CK(cudaDeviceSynchronize());
            if (r)
                ts.push_back(wall() - t0);
        }
        double t_sort = median(ts);
        CK(cudaFree(k1));
        CK(cudaFree(k2));
        CK(cudaFree(temp));
        /* the Gaussian moments (independent of the density) */
        std::vector<double> tgv;
        double sh, sm, sq;
        for (int r = 0; r <= reps; r++) {
            double t0 = wall();
            if (sp_cuda_moments(g, dx, n, &sh, &sm, &sq) != 0) {
                fprintf(stderr, "gpu_bench: %s\n", sp_cuda_error(g));
                return 1;
            }
            if (r)
                tgv.push_back(wall() - t0);
        }
        double t_gauss = median(tgv), c_gauss = 0;
        if (cpu) {
            int cr = l >= 26 ? 1 : 3;
            std::vector<double> v;
            for (int r = 0; r < cr; r++) {
                double t0 = wall();
                volatile double th = sp_gaussian_threshold(x.data(), n, 0.01);
                (void)th;
                v.push_back(wall() - t0);
            }
            c_gauss = median(v);
        }
        for (double d : dens) {
            uint64_t k = (uint64_t)floor(d * (double)n);
            if (k < 1)
                k = 1;
            std::vector<sp_pair> gp(k), cp(k);
            std::vector<double> tk;
            int64_t m = 0;
            for (int r = 0; r <= reps; r++) {
                double t0 = wall();
                m = sp_cuda_topk(g, dx, n, k, dp);
                if (r)
                    tk.push_back(wall() - t0);
            }
            if (m != (int64_t)k || sp_cuda_get(g, gp.data(), dp, k * sizeof(sp_pair)) != 0) {
                fprintf(stderr, "gpu_bench: top-k: %s\n", sp_cuda_error(g));
                return 1;
            }
            /* the threshold that keeps exactly these k */
            float lo = INFINITY;
            for (auto &p : gp)
                lo = std::min(lo, fabsf(p.val));
            float thr = nextafterf(lo, 0.0f);
            std::vector<double> tt;
            int64_t cnt = 0;
            for (int r = 0; r <= reps; r++) {
                double t0 = wall();
                cnt = sp_cuda_threshold(g, dx, n, thr, dp, n / 2);
                if (r)
                    tt.push_back(wall() - t0);
            }
            double t_topk = median(tk), t_thr = median(tt);
            double c_thr = 0, c_topk = 0;
            int same = 1;
            if (cpu) {
                int cr = l >= 26 ? 1 : 3;
                std::vector<double> a, b;
                std::vector<sp_pair> all((size_t)cnt > 0 ? (size_t)cnt : 1);
                for (int r = 0; r < cr; r++) {
                    double t0 = wall();
                    sp_threshold_select(x.data(), n, thr, all.data(), (uint64_t)cnt);
                    a.push_back(wall() - t0);
                    t0 = wall();
                    sp_topk_exact(x.data(), n, k, cp.data());
                    b.push_back(wall() - t0);
                }
                c_thr = median(a);
                c_topk = median(b);
                same = memcmp(cp.data(), gp.data(), k * sizeof(sp_pair)) == 0;
                std::vector<sp_pair> gt((size_t)cnt > 0 ? (size_t)cnt : 1);
                if (cnt > 0 && (sp_cuda_get(g, gt.data(), dp, (size_t)cnt * sizeof(sp_pair)) != 0 ||
                                memcmp(gt.data(), all.data(), (size_t)cnt * sizeof(sp_pair)) != 0))
                    same = 0;
                bad |= !same;
            }
            double bytes = 4.0 * n + 8.0 * (double)cnt;
            char speed[96] = "-";
            if (cpu)
                snprintf(speed, sizeof speed, "%.0fx / %.0fx / %.0fx", c_thr / t_thr, c_topk / t_topk, c_gauss / t_gauss);
            printf("| 2^%d | %g | %llu | %.3f | %.0f | %.0f%% | %.0f%% | %.3f | %.3f | %.1fx | %.3f | %s | %s | %s | %s | "
                   "%s |\n",
                   l, d, (unsigned long long)k, 1e3 * t_thr, bytes / t_thr / 1e9, 100.0 * bytes / t_thr / peak,
                   100.0 * bytes / t_thr / read_bw, 1e3 * t_topk, 1e3 * t_sort, t_sort / t_topk, 1e3 * t_gauss,
                   cpu ? std::to_string(1e3 * c_thr).substr(0, 8).c_str() : "-",
                   cpu ? std::to_string(1e3 * c_topk).substr(0, 8).c_str() : "-",
                   cpu ? std::to_string(1e3 * c_gauss).substr(0, 8).c_str() : "-", speed,
                   cpu ? (same ? "yes" : "NO") : "-");
            fflush(stdout);
        }
        printf("| | | | plain read of 2^%d floats: %.0f GB/s (%.0f%% of peak) | | | | | | | | | | | | |\n", l,
               read_bw / 1e9, 100.0 * read_bw / peak);
        CK(cudaFree(dsum));
        sp_cuda_free(g, dx);
        sp_cuda_free(g, dp);
    }
    sp_cuda_close(g);
    if (bad)
        fprintf(stderr, "gpu_bench: the GPU's selection differs from the CPU's (column 'same as CPU')\n");
    return bad ? 1 : 0;
}
