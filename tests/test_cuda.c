/* test_cuda.c - the CUDA selection kernels against the CPU ones, bit for bit.
 *
 * For many n (1 to 2^27, odd sizes among them), k (0, 1, a few densities,
 * n - 1, n, beyond n) and kinds of data (Laplace-like values, heavy ties,
 * all equal, NaN and infinities, signed zeros and subnormals): the GPU's
 * exact top-k and threshold selections equal the CPU's pair for pair, bit for
 * bit; the Gaussian estimate agrees to rounding (its sums run in another
 * order); scatter-add, the residual add and the zeroing give the CPU's
 * floats.
 *
 * Without a GPU, or in a build without CUDA, it does not pass: it says it is
 * skipped, and why, on stderr and exits 77 (ctest's SKIP_RETURN_CODE).
 * usage: test_cuda [--quick]   (--quick: n up to 2^20)
 */
#include "algorithms/select.h"
#include "algorithms/select_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        checks++;                                                                                            \
        if (!(cond)) {                                                                                       \
            failures++;                                                                                      \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                           \
            fputc('\n', stderr);                                                                             \
        }                                                                                                    \
    } while (0)

static uint64_t rng_state;
static uint64_t next_u64(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static double uniform01(void) { return ((double)(next_u64() >> 11) + 0.5) / 9007199254740992.0; }

enum { K_LAPLACE, K_TIES, K_EQUAL, K_SPECIAL, K_KINDS };
static const char *kind_name[] = {"laplace", "ties", "all-equal", "nan-inf-zeros"};

static void fill(float *x, uint64_t n, int kind, uint64_t seed)
{
    rng_state = 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull) ^ n;
    if (!rng_state)
        rng_state = 1;
    for (uint64_t i = 0; i < n; i++) {
        double u = uniform01();
        switch (kind) {
        case K_LAPLACE: /* Laplace draws: heavy-ish tails, as gradients */
            x[i] = (float)(u < 0.5 ? log(2 * u) : -log(2 * (1 - u)));
            break;
        case K_TIES: /* a handful of values: every cut falls inside a tie */
            x[i] = (float)((int)(u * 7) - 3) * 0.5f;
            break;
        case K_EQUAL:
            x[i] = -1.25f;
            break;
        default: { /* Laplace with NaN (both signs), infinities, signed zeros, subnormals */
            float v = (float)(u < 0.5 ? log(2 * u) : -log(2 * (1 - u)));
            uint64_t r = next_u64() % 64;
            if (r == 0)
                v = NAN;
            else if (r == 1)
                v = -NAN;
            else if (r == 2)
                v = INFINITY;
            else if (r == 3)
                v = -INFINITY;
            else if (r == 4)
                v = 0.0f;
            else if (r == 5)
                v = -0.0f;
            else if (r == 6)
                v = 1e-40f;
            x[i] = v;
        }
        }
    }
}

/* the same floats: the same bits, or both NaN (a NaN that GPU arithmetic
 * produces is its canonical NaN; select_cuda.h) */
static int same_floats(const float *a, const float *b, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) && !(isnan(a[i]) && isnan(b[i])))
            return 0;
    return 1;
}

static int same_pairs(const sp_pair *a, const sp_pair *b, uint64_t m) { return memcmp(a, b, m * sizeof *a) == 0; }

static void check_topk(sp_cuda *g, const float *x, uint64_t n, uint64_t k, const char *what, sp_pair *cpu,
                       sp_pair *gpu)
{
    uint64_t mc = sp_topk_exact(x, n, k, cpu);
    int64_t mg = sp_cuda_topk_host(g, x, n, k, gpu);
    CHECK(mg >= 0, "top-k %s n=%llu k=%llu: GPU failed: %s", what, (unsigned long long)n, (unsigned long long)k,
          sp_cuda_error(g));
    if (mg < 0)
        return;
    CHECK((uint64_t)mg == mc, "top-k %s n=%llu k=%llu: GPU %lld pairs, CPU %llu", what, (unsigned long long)n,
          (unsigned long long)k, (long long)mg, (unsigned long long)mc);
    if ((uint64_t)mg == mc && !same_pairs(cpu, gpu, mc)) {
        uint64_t i = 0;
        while (i < mc && !memcmp(&cpu[i], &gpu[i], sizeof *cpu))
            i++;
        CHECK(0, "top-k %s n=%llu k=%llu: pair %llu differs: CPU (%d, %g), GPU (%d, %g)", what,
              (unsigned long long)n, (unsigned long long)k, (unsigned long long)i, cpu[i].idx, (double)cpu[i].val,
              gpu[i].idx, (double)gpu[i].val);
    }
}

static void check_threshold(sp_cuda *g, const float *x, uint64_t n, float thr, const char *what, sp_pair *cpu,
                            sp_pair *gpu)
{
    uint64_t want = sp_threshold_select(x, n, thr, NULL, 0);
    int64_t cnt = sp_cuda_threshold_host(g, x, n, thr, NULL, 0);
    CHECK(cnt >= 0 && (uint64_t)cnt == want, "threshold %s n=%llu thr=%g: count GPU %lld, CPU %llu", what,
          (unsigned long long)n, (double)thr, (long long)cnt, (unsigned long long)want);
    uint64_t caps[2] = {want, want / 2};
    for (int c = 0; c < 2; c++) {
        uint64_t cap = caps[c];
        uint64_t mc = sp_threshold_select(x, n, thr, cpu, cap);
        int64_t mg = sp_cuda_threshold_host(g, x, n, thr, gpu, cap);
        CHECK(mg >= 0 && (uint64_t)mg == mc, "threshold %s n=%llu thr=%g cap=%llu: GPU %lld, CPU %llu", what,
              (unsigned long long)n, (double)thr, (unsigned long long)cap, (long long)mg, (unsigned long long)mc);
        uint64_t w = mc < cap ? mc : cap;
        if (mg >= 0)
            CHECK(same_pairs(cpu, gpu, w), "threshold %s n=%llu thr=%g cap=%llu: pairs differ", what,
                  (unsigned long long)n, (double)thr, (unsigned long long)cap);
    }
}

static void check_gaussian(sp_cuda *g, const float *x, uint64_t n, const char *what)
{
    float *dx = sp_cuda_alloc(g, n * sizeof *x);
    CHECK(dx != NULL, "alloc: %s", sp_cuda_error(g));
    if (!dx)
        return;
    double shift, s, q;
    int rc = sp_cuda_put(g, dx, x, n * sizeof *x) == 0 ? sp_cuda_moments(g, dx, n, &shift, &s, &q) : -1;
    CHECK(rc == 0, "moments %s n=%llu: %s", what, (unsigned long long)n, sp_cuda_error(g));
    double dens[3] = {0.001, 0.01, 0.1};
    for (int d = 0; rc == 0 && d < 3; d++) {
        double c = sp_gaussian_threshold(x, n, dens[d]), gpu = sp_gaussian_from_sums(shift, s, q, n, dens[d]);
        int same_class = (isnan(c) && isnan(gpu)) || (isinf(c) && c == gpu) ||
                         (isfinite(c) && isfinite(gpu) && fabs(c - gpu) <= 1e-9 * (fabs(c) + 1e-30) + 1e-300);
        CHECK(same_class, "gaussian %s n=%llu density %g: CPU %.17g, GPU %.17g", what, (unsigned long long)n,
              dens[d], c, gpu);
    }
    sp_cuda_free(g, dx);
}

/* scatter-add of two selections' pairs, the residual add and the zeroing */
static void check_updates(sp_cuda *g, const float *x, uint64_t n, const char *what)
{
    uint64_t k = n / 10 + 1;
    float *y = malloc(n * sizeof *y), *acc = malloc(n * sizeof *acc), *back = malloc(n * sizeof *back);
    sp_pair *a = malloc(k * sizeof *a), *b = malloc(k * sizeof *b);
    float *dy = sp_cuda_alloc(g, n * sizeof *y), *dx = sp_cuda_alloc(g, n * sizeof *y);
    sp_pair *da = sp_cuda_alloc(g, k * sizeof *a), *db = sp_cuda_alloc(g, k * sizeof *a);
    CHECK(y && acc && back && a && b && dy && dx && da && db, "updates %s: allocation", what);
    if (y && acc && back && a && b && dy && dx && da && db) {
        uint64_t ma = sp_topk_exact(x, n, k, a);
        for (uint64_t i = 0; i < n; i++)
            y[i] = (float)(i % 13) * 0.1f - 0.6f;
        fill(acc, n, K_LAPLACE, 99);
        uint64_t mb = sp_topk_exact(acc, n, k, b); /* another list, overlapping in indices */
        int rc = sp_cuda_put(g, dy, y, n * sizeof *y) | sp_cuda_put(g, da, a, ma * sizeof *a) |
                 sp_cuda_put(g, db, b, mb * sizeof *b) | sp_cuda_put(g, dx, x, n * sizeof *x);
        for (uint64_t j = 0; j < ma; j++)
            y[a[j].idx] += a[j].val;
        for (uint64_t j = 0; j < mb; j++)
            y[b[j].idx] += b[j].val;
        rc |= sp_cuda_scatter_add(g, dy, da, ma) | sp_cuda_scatter_add(g, dy, db, mb);
        rc |= sp_cuda_get(g, back, dy, n * sizeof *y);
        CHECK(rc == 0 && same_floats(back, y, n), "scatter-add %s n=%llu differs", what,
              (unsigned long long)n);
        /* residual: y += x, then the first list's entries leave it */
        for (uint64_t i = 0; i < n; i++)
            y[i] += x[i];
        sp_zero_at(y, a, ma);
        rc = sp_cuda_add(g, dy, dx, n) | sp_cuda_zero_at(g, dy, da, ma) | sp_cuda_get(g, back, dy, n * sizeof *y);
        CHECK(rc == 0 && same_floats(back, y, n), "residual add and zeroing %s n=%llu differ", what,
              (unsigned long long)n);
        rc = sp_cuda_zero(g, dy, n) | sp_cuda_get(g, back, dy, n * sizeof *y);
        int zero = rc == 0;
        for (uint64_t i = 0; zero && i < n; i++)
            zero = back[i] == 0.0f && !signbit(back[i]);
        CHECK(zero, "zeroing all %s n=%llu", what, (unsigned long long)n);
    }
    free(y);
    free(acc);
    free(back);
    free(a);
    free(b);
    sp_cuda_free(g, dy);
    sp_cuda_free(g, dx);
    sp_cuda_free(g, da);
    sp_cuda_free(g, db);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    char err[300];
    sp_cuda *g = sp_cuda_open(0, err, sizeof err);
    if (!g) {
        fprintf(stderr, "test_cuda: SKIPPED: %s\n", err);
        return 77;
    }
    printf("test_cuda on %s\n", sp_cuda_name(g));
    /* odd and even sizes, powers of two and their neighbours, up to 2^27 */
    static const uint64_t sizes[] = {1,      2,       3,       7,       31,      32,       33,       255,
                                     1000,   1023,    4097,    65537,   100003,  1048576,  1000003,  16777217,
                                     1u << 27};
    int nsizes = sizeof sizes / sizeof sizes[0];
    uint64_t maxn = quick ? (1u << 20) : (1u << 27);
    float *x = malloc(maxn * sizeof *x);
    sp_pair *cpu = malloc(maxn * sizeof *cpu), *gpu = malloc(maxn * sizeof *gpu);
    if (!x || !cpu || !gpu) {
        fprintf(stderr, "test_cuda: out of memory\n");
        return 1;
    }
    for (int s = 0; s < nsizes; s++) {
        uint64_t n = sizes[s];
        if (n > maxn)
            continue;
        int big = n > 2000000;
        for (int kind = 0; kind < K_KINDS; kind++) {
            if (big && kind != K_LAPLACE && kind != K_SPECIAL)
                continue;
            fill(x, n, kind, (uint64_t)s);
            const char *what = kind_name[kind];
            uint64_t ks[] = {0, 1, 2, n / 1000, n / 100, n / 10, n / 2, n - 1, n, n + 5};
            int nk = sizeof ks / sizeof ks[0];
            for (int j = 0; j < nk; j++) {
                if (big && ks[j] != 1 && ks[j] != n / 100 && ks[j] != n)
                    continue;
                if (j > 0 && ks[j] == ks[j - 1])
                    continue;
                check_topk(g, x, n, ks[j], what, cpu, gpu);
            }
            float thrs[] = {-1.0f, 0.0f, 0.5f, 1.0f, 3.0f, INFINITY, NAN};
            for (int t = 0; t < (int)(sizeof thrs / sizeof thrs[0]); t++)
                if (!big || t == 3)
                    check_threshold(g, x, n, thrs[t], what, cpu, gpu);
            check_gaussian(g, x, n, what);
            if (!big)
                check_updates(g, x, n, what);
        }
        printf("  n = %llu done (%d checks, %d failed so far)\n", (unsigned long long)n, checks, failures);
        fflush(stdout);
    }
    free(x);
    free(cpu);
    free(gpu);
    sp_cuda_close(g);
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
