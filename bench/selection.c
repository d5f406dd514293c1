/* selection.c - the selection kernels on this machine's CPU, side by side.
 *
 * For each n, on one array of synthetic gradient values (the generator of
 * sparsim run), times in one run:
 *   stream     a plain read of the array (the memory-bandwidth floor)
 *   threshold  threshold filter at the threshold that selects ~density*n
 *   gaussian   Gaussian-k threshold estimate (mean, deviation, Phi^-1)
 *   topk       exact top-k (quickselect on 64-bit keys, expected O(n))
 *   sort       full sort of the same array by |value| (libc qsort), the
 *              naive way to get a top-k
 * and prints the best of R repetitions and the ratios.
 *
 *   selection [--n 1M,16M,128M] [--density 0.01] [--reps 3] [--no-sort]
 */
#include "algorithms/select.h"
#include "sim/workload/generator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_abs_desc(const void *a, const void *b)
{
    float x = fabsf(*(const float *)a), y = fabsf(*(const float *)b);
    return x > y ? -1 : x < y;
}

static uint64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1 << 10;
    else if (*end == 'M' || *end == 'm')
        v *= 1 << 20;
    else if (*end == 'G' || *end == 'g')
        v *= 1 << 30;
    return (uint64_t)v;
}

static volatile double sink;

int main(int argc, char **argv)
{
    const char *sizes = "1M,16M,128M";
    double density = 0.01;
    int reps = 3, do_sort = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(argv[i], "--density") && i + 1 < argc)
            density = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-sort"))
            do_sort = 0;
        else {
            fprintf(stderr, "usage: selection [--n 1M,16M,128M] [--density 0.01] [--reps 3] [--no-sort]\n");
            return 2;
        }
    }
    printf("| n | stream (s) | threshold (s) | gaussian (s) | top-k (s) | full sort (s) | threshold / stream | "
           "top-k / stream | sort / top-k |\n|---|---|---|---|---|---|---|---|---|\n");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", sizes);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t n = parse_size(tok), k = (uint64_t)((double)n * density);
        float *x = calloc(n, sizeof *x), *copy = malloc(n * sizeof *copy);
        sp_pair *out = malloc((k + 1) * sizeof *out * 2);
        if (!x || !copy || !out) {
            fprintf(stderr, "out of memory at n = %llu\n", (unsigned long long)n);
            return 1;
        }
        sp_profile prof;
        char err[300];
        sp_generator *gen = NULL;
        if (sp_profile_get("generic", n, 1, NULL, &prof, err, sizeof err) != 0 ||
            !(gen = sp_generator_new(&prof, 1, err, sizeof err))) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        sp_generator_fill(gen, 0, 0, x, 1);
        sp_generator_free(gen);
        sp_profile_free(&prof);
        double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
        float thr = 0;
        for (int r = 0; r < reps; r++) {
            /* eight independent sums: the loop is bound by memory, not by
             * the latency of one chain of additions */
            double t = now();
            float acc[8] = {0};
            uint64_t i = 0;
            for (; i + 8 <= n; i += 8)
                for (int j = 0; j < 8; j++)
                    acc[j] += x[i + j];
            for (; i < n; i++)
                acc[0] += x[i];
            sink = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
            t = now() - t;
            best[0] = t < best[0] ? t : best[0];

            t = now();
            uint64_t m = sp_topk_exact(x, n, k, out);
            t = now() - t;
            best[3] = t < best[3] ? t : best[3];
            if (r == 0) { /* the k-th largest magnitude selects ~k entries */
                thr = INFINITY;
                for (uint64_t j = 0; j < m; j++)
                    thr = fabsf(out[j].val) < thr ? fabsf(out[j].val) : thr;
                thr = nextafterf(thr, 0.0f);
            }

            t = now();
            m = sp_threshold_select(x, n, thr, out, 2 * k + 1);
            t = now() - t;
            sink = (double)m;
            best[1] = t < best[1] ? t : best[1];

            t = now();
            sink = sp_gaussian_threshold(x, n, density);
            t = now() - t;
            best[2] = t < best[2] ? t : best[2];
        }
        if (do_sort) { /* once: it is slow */
            memcpy(copy, x, n * sizeof *x);
            double t = now();
            qsort(copy, n, sizeof *copy, by_abs_desc);
            best[4] = now() - t;
            sink = copy[k];
        }
        printf("| %s | %.4f | %.4f | %.4f | %.4f | %s%.4f | %.2f | %.2f | %s%.1f |\n", tok, best[0], best[1], best[2],
               best[3], do_sort ? "" : "-", do_sort ? best[4] : 0.0, best[1] / best[0], best[3] / best[0],
               do_sort ? "" : "-", do_sort ? best[4] / best[3] : 0.0);
        fflush(stdout);
        free(x);
        free(copy);
        free(out);
    }
    return 0;
}
