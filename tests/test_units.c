#define _GNU_SOURCE
/* test_units.c - the pieces on their own: exact top-k against a sort,
 * .npy round trips, the CSV time format and reader, closed-form bounds. */
#include "helpers.h"
#include "algorithms/select.h"
#include "analysis/bounds.h"
#include "traces/npy.h"
#include "topologies/device.h"
#include "traces/trace.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_idx(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return i < j ? -1 : (i > j);
}

Test(topk, equals_sorted_selection_with_ties)
{
    unsigned seed = 12345;
    for (int trial = 0; trial < 200; trial++) {
        uint64_t n = 1 + (uint64_t)(rand_r(&seed) % 3000);
        float *x = malloc(n * sizeof *x);
        int distinct = 1 + rand_r(&seed) % 50; /* few distinct magnitudes: many ties */
        for (uint64_t i = 0; i < n; i++) {
            int v = rand_r(&seed) % distinct;
            x[i] = (rand_r(&seed) & 1 ? -1.0f : 1.0f) * (float)v * 0.5f;
        }
        uint64_t k = 1 + (uint64_t)rand_r(&seed) % n;
        sp_pair *out = malloc(k * sizeof *out);
        uint64_t m = sp_topk_exact(x, n, k, out);
        cr_assert_eq(m, k);
        int32_t *order = malloc(n * sizeof *order);
        for (uint64_t i = 0; i < n; i++)
            order[i] = (int32_t)i;
        t_sort_by_magnitude(order, n, x);
        qsort(order, k, sizeof *order, by_idx);
        for (uint64_t j = 0; j < k; j++) {
            cr_assert_eq(out[j].idx, order[j], "trial %d n=%llu k=%llu: pair %llu has index %d, expected %d", trial,
                         (unsigned long long)n, (unsigned long long)k, (unsigned long long)j, out[j].idx, order[j]);
            cr_assert_eq(out[j].val, x[order[j]]);
        }
        free(x);
        free(out);
        free(order);
    }
}

Test(npy, round_trip)
{
    const char *dir = t_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    float data[6] = {1, -2, 3.5f, 0, 1e-30f, -7};
    uint64_t shape[2] = {2, 3};
    char err[256];
    cr_assert_eq(sp_npy_write(path, data, 2, shape, err, sizeof err), 0, "%s", err);
    sp_npy a;
    cr_assert_eq(sp_npy_read(path, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.ndim, 2);
    cr_assert_eq(a.shape[0], 2);
    cr_assert_eq(a.shape[1], 3);
    cr_assert_arr_eq(a.data, data, sizeof data);
    sp_npy_free(&a);
    /* the header is what NumPy writes: 64-byte aligned data, shape "(2, 3)" */
    size_t len;
    char *raw = t_read_file(path, &len);
    cr_assert_eq(len, 128 + sizeof data);
    cr_assert(memmem(raw, 128, "'shape': (2, 3), }", 18) != NULL);
    free(raw);
}

Test(npy, rejects_non_finite)
{
    const char *dir = t_tmpdir();
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/nan.npy", dir);
    float data[2] = {1, NAN};
    uint64_t shape[1] = {2};
    cr_assert_eq(sp_npy_write(path, data, 1, shape, err, sizeof err), 0);
    sp_npy a;
    cr_assert_neq(sp_npy_read(path, &a, err, sizeof err), 0);
    cr_assert(strstr(err, "non-finite"), "%s", err);
}

Test(trace, seconds_format_and_reader)
{
    char buf[40];
    sp_format_seconds(buf, 0.000108);
    cr_assert_str_eq(buf, "0.000108000");
    sp_format_seconds(buf, 12.5);
    cr_assert_str_eq(buf, "12.500000000");
    const char *dir = t_tmpdir();
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    const char *phases[] = {"reduce-scatter", "allgather"};
    sp_csv_writer *w = sp_csv_open(path, phases, 1, err, sizeof err);
    cr_assert_not_null(w, "%s", err);
    sp_msg_event e1 = {0, 0, 1, 2, 100, 4000, 0.5, 0.75}, e2 = {3, 1, 2, 0, 7, 8, 1.0, 1.25};
    sp_csv_write(w, &e1);
    sp_csv_write(w, &e2);
    cr_assert_eq(sp_csv_close(w, 1, err, sizeof err), 0);
    sp_msg_list l;
    cr_assert_eq(sp_csv_read(path, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.phase_names[l.ev[1].phase], "allgather");
    cr_assert_eq(l.ev[0].bytes, 4000);
    cr_assert_eq(l.ev[1].iter, 3);
    cr_assert_float_eq(l.ev[1].t_done, 1.25, 1e-12);
    sp_msg_list_free(&l);
}

/* ranks that are GPUs on nodes of 4: each end's node and local rank follow
 * the eight columns, and both readers take them */
Test(trace, node_columns)
{
    const char *dir = t_tmpdir();
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    const char *phases[] = {"intra"};
    sp_csv_writer *w = sp_csv_open(path, phases, 4, err, sizeof err);
    cr_assert_not_null(w, "%s", err);
    sp_msg_event e = {1, 0, 6, 9, 3, 64, 0.25, 0.5};
    sp_csv_write(w, &e);
    cr_assert_eq(sp_csv_close(w, 1, err, sizeof err), 0);
    char *text = t_read_file(path, NULL);
    cr_assert_str_eq(text, SP_CSV_HEADER SP_CSV_NODE_COLUMNS "\n1,intra,6,9,3,64,0.250000000,0.500000000,1,2,2,1\n");
    free(text);
    sp_msg_list l;
    cr_assert_eq(sp_csv_read(path, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.ev[0].src, 6);
    cr_assert_eq(l.ev[0].dst, 9);
    cr_assert_float_eq(l.ev[0].t_done, 0.5, 1e-12);
    sp_msg_list_free(&l);
}

Test(trace, failed_run_leaves_no_file)
{
    const char *dir = t_tmpdir();
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    const char *phases[] = {"x"};
    sp_csv_writer *w = sp_csv_open(path, phases, 1, err, sizeof err);
    sp_msg_event e = {0, 0, 0, 1, 0, 8, 0, 1};
    sp_csv_write(w, &e);
    sp_csv_close(w, 0, err, sizeof err);
    cr_assert_null(t_read_file(path, NULL));
    char part[600];
    snprintf(part, sizeof part, "%s.part", path);
    cr_assert_null(t_read_file(part, NULL));
}

Test(bounds, closed_forms)
{
    sp_bound b;
    cr_assert_eq(sp_bound_volume("ring", 8, 800, 8, &b), 0);
    cr_assert_float_eq(b.words, 2.0 * 800 * 7 / 8, 1e-9);
    cr_assert_eq(sp_bound_volume("topka", 8, 800, 8, &b), 0);
    cr_assert_float_eq(b.words, 2.0 * 8 * 7, 1e-9);
    cr_assert_float_eq(b.lower_words, 2.0 * 8 * 7 / 8, 1e-9);
    cr_assert_eq(sp_bound_volume("recdoubling", 8, 800, 8, &b), 0);
    cr_assert_float_eq(b.words, 800.0 * 3, 1e-9);
    cr_assert_eq(sp_bound_volume("recdoubling", 6, 800, 8, &b), 0);
    cr_assert_float_eq(b.words, 800.0 * (2 + 2), 1e-9);
    cr_assert_neq(sp_bound_volume("nosuch", 8, 800, 8, &b), 0);
    /* ring prediction: 2(P-1)(alpha + 4 (n/P) beta) */
    cr_assert_float_eq(sp_predict_time("ring", 4, 400, 4, 1e-4, 8e-9), 6 * (1e-4 + 400 * 8e-9), 1e-15);
}

Test(device, none_is_free_and_fit_is_used)
{
    const sp_device *none = sp_device_find("none"), *p102 = sp_device_find("p102");
    cr_assert_not_null(none);
    cr_assert_not_null(p102);
    cr_assert_eq(sp_device_time(none, SP_DEV_TOPK, 1e6), 0.0);
    double n = 14.7e6; /* VGG-16: the authors' fit gives about 0.076 s */
    double t = sp_device_time(p102, SP_DEV_TOPK, n);
    cr_assert(fabs(t - (5e-6 + 2.18896957e-10 * n * log2(n))) < 1e-12);
    cr_assert(t > 0.07 && t < 0.08);
    cr_assert_null(sp_device_find("tpu"));
}

Test(select, threshold_matches_a_plain_loop)
{
    unsigned seed = 99;
    for (int trial = 0; trial < 100; trial++) {
        uint64_t n = (uint64_t)(rand_r(&seed) % 700); /* tails of every length */
        float *x = malloc((n + 1) * sizeof *x);
        for (uint64_t i = 0; i < n; i++)
            x[i] = ((float)(rand_r(&seed) % 2001) - 1000.0f) / 100.0f;
        float thr = (float)(rand_r(&seed) % 1000) / 100.0f;
        uint64_t want = 0;
        for (uint64_t i = 0; i < n; i++)
            want += fabsf(x[i]) > thr;
        sp_pair *out = malloc((want + 1) * sizeof *out);
        cr_assert_eq(sp_threshold_select(x, n, thr, NULL, 0), want);
        cr_assert_eq(sp_threshold_select(x, n, thr, out, want), want);
        uint64_t m = 0;
        for (uint64_t i = 0; i < n; i++)
            if (fabsf(x[i]) > thr) {
                cr_assert_eq(out[m].idx, (int32_t)i);
                cr_assert_eq(out[m].val, x[i]);
                m++;
            }
        /* a short buffer is filled, the count is still the full one */
        if (want > 1)
            cr_assert_eq(sp_threshold_select(x, n, thr, out, want / 2), want);
        free(x);
        free(out);
    }
}

Test(select, gaussian_threshold_formula)
{
    /* +-1 alternating: mean 0, deviation 1; rho = 0.05: |Phi^-1(0.025)| = 1.959964 */
    float x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = i % 2 ? 1.0f : -1.0f;
    cr_assert(fabs(sp_gaussian_threshold(x, 1000, 0.05) - 1.959964) < 1e-5);
    /* shifted by 1000: the mean moves, the deviation stays */
    for (int i = 0; i < 1000; i++)
        x[i] += 1000.0f;
    cr_assert(fabs(sp_gaussian_threshold(x, 1000, 0.05) - 1001.959964) < 1e-3);
}

Test(select, merge_adds_common_indices)
{
    sp_pair a[] = {{1, 1.0f}, {4, 2.0f}, {9, 3.0f}}, b[] = {{0, 5.0f}, {4, -2.5f}, {10, 1.0f}}, out[6];
    uint64_t m = sp_merge_add(a, 3, b, 3, out);
    cr_assert_eq(m, 5);
    int32_t idx[] = {0, 1, 4, 9, 10};
    float val[] = {5.0f, 1.0f, -0.5f, 3.0f, 1.0f};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(out[i].idx, idx[i]);
        cr_assert_eq(out[i].val, val[i]);
    }
    /* top 2 of those by |value|, kept in index order */
    sp_pair top[2];
    cr_assert_eq(sp_topk_pairs(out, 5, 2, top), 2);
    cr_assert_eq(top[0].idx, 0);
    cr_assert_eq(top[1].idx, 9);
}
