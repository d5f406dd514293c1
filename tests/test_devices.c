/* test_devices.c - the built-in GPU profiles (topologies/devices.c): each
 * loads, prices every kernel finitely and in proportion to its published
 * memory bandwidth, and the newer GPUs are faster where their bandwidth says
 * so. */
#include "helpers.h"
#include "topologies/device.h"
#include "traces/summary_keys.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

/* name, published HBM bandwidth (bytes/s) the profile is derived from */
static const struct {
    const char *name;
    double peak;
} gpus[] = {{"v100", 900e9}, {"a100", 1555e9}, {"h100", 3.35e12}, {"h200", 4.8e12}};

Test(devices, gpu_profiles_follow_their_published_bandwidth)
{
    const double n = 134217728.0; /* 2^27 floats */
    for (int i = 0; i < 4; i++) {
        const sp_device *d = sp_device_find(gpus[i].name);
        cr_assert_not_null(d, "%s is not a built-in profile", gpus[i].name);
        cr_assert_float_eq(d->mem_bw, 0.75 * gpus[i].peak, 1.0, "%s: mem_bw %g", d->name, d->mem_bw);
        cr_assert(d->source && d->source[0] && d->source[0] != '-', "%s names no source", d->name);
        cr_assert(d->train_flops > 1e12, "%s: train_flops %g", d->name, d->train_flops);
        /* threshold filter over 2^27 floats: one read at 75% of peak */
        double thr = sp_device_time(d, SP_DEV_THRESHOLD, n);
        cr_assert_float_eq(thr, d->launch + 4.0 * n / (0.75 * gpus[i].peak), 1e-12, "%s: threshold %g s", d->name,
                           thr);
        /* exact top-k: a few reads, more than a threshold filter, far less than a second */
        double topk = sp_device_time(d, SP_DEV_TOPK, n);
        cr_assert(topk > 2.0 * thr && topk < 0.01, "%s: top-k of 2^27 takes %g s", d->name, topk);
        /* random scatter-add costs more per pair than streaming the pairs */
        double sc = sp_device_time(d, SP_DEV_SCATTER_ADD, 1e6);
        cr_assert(sc > d->launch + 8e6 / d->mem_bw, "%s: scatter-add %g s", d->name, sc);
        for (int k = 0; k < SP_DEV_KERNELS; k++) {
            double small = sp_device_time(d, (sp_device_kernel)k, 1000), big = sp_device_time(d, (sp_device_kernel)k, n);
            double launch = k == SP_DEV_FUSED_SUM ? 0 : d->launch; /* fused: inside a running kernel */
            cr_assert(isfinite(big) && big > small && small >= launch, "%s: kernel %d: %g s at 1000, %g s at 2^27",
                      d->name, k, small, big);
        }
    }
    /* newer means faster, by the bandwidth ratio */
    for (int i = 1; i < 4; i++) {
        const sp_device *a = sp_device_find(gpus[i - 1].name), *b = sp_device_find(gpus[i].name);
        double ta = sp_device_time(a, SP_DEV_THRESHOLD, n) - a->launch, tb = sp_device_time(b, SP_DEV_THRESHOLD, n) - b->launch;
        cr_assert_float_eq(ta / tb, gpus[i].peak / gpus[i - 1].peak, 1e-9, "%s over %s", b->name, a->name);
    }
    /* and all of them beat the papers' P100 at exact top-k over VGG-16's gradient (14.7M) */
    double p100 = sp_device_time(sp_device_find("p100"), SP_DEV_TOPK, 14.7e6);
    for (int i = 0; i < 4; i++)
        cr_assert(sp_device_time(sp_device_find(gpus[i].name), SP_DEV_TOPK, 14.7e6) < p100 / 10, "%s", gpus[i].name);
}

/* a simulated run picks a GPU profile by name (summary.json names it), and
 * its iteration time moves with the profile: at a small n on a fast network
 * the local kernels are a visible part, and the newer GPU's part is smaller */
Test(devices, a_run_prices_kernels_with_a_gpu_profile)
{
    const char *names[] = {"none", "p100", "v100", "h200"};
    double t[4];
    const char *dir = t_tmpdir();
    for (int i = 0; i < 4; i++) {
        const char *out = t_path(dir, names[i]);
        const char *args[] = {"run",    "--algo",   "topka", "--ranks", "4",     "--n",     "1M",
                              "--platform", "daint", "--device", names[i], "--quiet", "--out", out, NULL};
        t_proc r = t_run(args);
        cr_assert(r.exited && r.status == 0, "--device %s: %s", names[i], r.err);
        t_proc_free(&r);
        cJSON *j = sp_json_file(t_path(out, "summary.json"));
        cr_assert_not_null(j);
        cJSON *cfg = cJSON_GetObjectItemCaseSensitive(j, SPK_CONFIG);
        cJSON *dev = cJSON_GetObjectItemCaseSensitive(cfg, "device");
        cr_assert(cJSON_IsString(dev) && !strcmp(dev->valuestring, names[i]), "summary.json does not name %s",
                  names[i]);
        t[i] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, SPK_TIME_PER_ITER), SPK_MEAN)
                   ->valuedouble;
        cJSON_Delete(j);
    }
    /* the kernels' share: at least the exact top-k of 2^20 floats */
    const sp_device *p100 = sp_device_find("p100"), *h200 = sp_device_find("h200");
    double k100 = sp_device_time(p100, SP_DEV_TOPK, 1 << 20), k200 = sp_device_time(h200, SP_DEV_TOPK, 1 << 20);
    cr_assert(t[0] < t[3] && t[3] < t[2] && t[2] < t[1], "none %g, p100 %g, v100 %g, h200 %g s", t[0], t[1], t[2],
              t[3]);
    cr_assert(t[1] - t[0] >= k100 && t[3] - t[0] >= k200, "p100 adds %g s (top-k %g), h200 %g s (top-k %g)",
              t[1] - t[0], k100, t[3] - t[0], k200);
}
