/* test_training.c - whole training iterations (sim/driver/training.c):
 * compute + allreduce exactly without overlap, the layer-by-layer overlap
 * rule on hand-computed cases, the presets' compute from their FLOPs, the
 * papers' layer tables (sim/workload/paper_models.c) against their stated
 * parameter counts, a short run of each gTop-k model, the speedup over the
 * fastest dense allreduce run alongside, and bad input. */
#include "helpers.h"
#include "sim/workload/profile.h"
#include "sim/driver/run.h"
#include "sim/driver/training.h"
#include "sim/workload/paper_models.h"
#include "traces/trace.h"
#include "traces/summary_keys.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* device none: iteration = compute + the simulated allreduce, to the last bit */
Test(training, compute_plus_allreduce_exactly)
{
    sp_plan p;
    t_plan(&p, "ring", 8, 4096, 0.01);
    p.train_compute = 0.25;
    p.batch = 4;
    sp_report rep = t_run_ok(&p);
    sp_report_figures f;
    sp_report_figures_of(&rep, &f);
    cr_assert(rep.training.on);
    cr_assert(f.t_mean > 0);
    cr_assert_eq(rep.training.comm_s, f.t_mean);
    cr_assert_eq(rep.training.iter_s, 0.25 + f.t_mean, "%.17g vs %.17g", rep.training.iter_s, 0.25 + f.t_mean);
    cr_assert_eq(rep.training.samples_per_s, 8.0 * 4 / (0.25 + f.t_mean));
    cr_assert_eq(rep.training.fwd_s + rep.training.bwd_s, 0.25);
    cr_assert(fabs(rep.training.bwd_s - 2 * rep.training.fwd_s) < 1e-15); /* backward twice forward */
    sp_report_free(&rep);
}

/* done_l = max(ready_l, done_{l-1}) + comm x size_l / n, ready_l = fwd + bwd x cum_l / n */
Test(training, overlap_rule_by_hand)
{
    uint64_t two[] = {1, 1};
    /* communication-bound: ready 2, done 4; ready 3, done 6 */
    cr_assert_float_eq(sp_training_overlapped(two, 2, 1, 2, 4), 6.0, 1e-12);
    /* compute-bound: ready 2, done 2.1; ready 3, done 3.1 */
    cr_assert_float_eq(sp_training_overlapped(two, 2, 1, 2, 0.2), 3.1, 1e-12);
    /* one layer: nothing to overlap */
    uint64_t one[] = {10};
    cr_assert_float_eq(sp_training_overlapped(one, 1, 1, 2, 0.5), 3.5, 1e-12);
    /* uneven: sizes 3 and 1 of 4; fwd 0, bwd 4, comm 4: ready 3 done 6; ready 4 done 7 */
    uint64_t uneven[] = {3, 1};
    cr_assert_float_eq(sp_training_overlapped(uneven, 2, 0, 4, 4), 7.0, 1e-12);
}

/* a dense allreduce overlaps, never beyond compute + allreduce nor below
 * either; a sparse one does not overlap at all */
Test(training, overlap_dense_only)
{
    sp_plan p;
    t_plan(&p, "ring", 4, 1 << 14, 0.01);
    p.train_compute = 0.01;
    p.batch = 1;
    p.overlap = 1;
    sp_report rep = t_run_ok(&p);
    const sp_report_training *t = &rep.training;
    cr_assert(t->overlapped);
    cr_assert(t->iter_s < t->compute_s + t->comm_s);
    cr_assert(t->iter_s >= t->compute_s && t->iter_s >= t->comm_s);
    sp_report_free(&rep);
}

/* (one SimGrid engine per process: one run per test) */
Test(training, overlap_not_sparse)
{
    sp_plan p;
    t_plan(&p, "topka", 4, 1 << 14, 0.01);
    p.train_compute = 0.01;
    p.batch = 1;
    p.overlap = 1;
    sp_report rep = t_run_ok(&p);
    cr_assert(!rep.training.overlapped);
    cr_assert_eq(rep.training.iter_s, rep.training.compute_s + rep.training.comm_s);
    sp_report_free(&rep);
}

/* the preset's compute: 3 x forward FLOPs x batch over the device's FLOP/s */
Test(training, preset_compute_from_flops)
{
    sp_plan p;
    t_plan(&p, "ring", 2, 1024, 0.01);
    snprintf(p.train_model, sizeof p.train_model, "vgg16");
    snprintf(p.device, sizeof p.device, "p100");
    p.payload = SP_PAYLOAD_SIZE;
    sp_report rep = t_run_ok(&p);
    cr_assert_eq(rep.training.batch, 16);
    double want = 3.0 * 6.26e8 * 16 / (0.4 * 9.3e12);
    cr_assert(fabs(rep.training.compute_s - want) < 1e-12 * want, "%.17g vs %.17g", rep.training.compute_s, want);
    sp_report_free(&rep);
}

/* --train-flops: a user's own model, priced as the presets are:
 * 3 x forward FLOPs per sample x batch over the device's sustained FLOP/s */
Test(training, own_model_compute_from_flops)
{
    sp_plan p;
    t_plan(&p, "ring", 2, 1024, 0.01);
    p.train_flops = 5.0e6;
    p.batch = 16;
    snprintf(p.device, sizeof p.device, "p100");
    p.payload = SP_PAYLOAD_SIZE;
    sp_report rep = t_run_ok(&p);
    double want = 3.0 * 5.0e6 * 16 / (0.4 * 9.3e12);
    cr_assert(rep.training.on);
    cr_assert(fabs(rep.training.compute_s - want) < 1e-12 * want, "%.17g vs %.17g", rep.training.compute_s, want);
    cr_assert(strstr(rep.training.compute_source, "--train-flops"));
    sp_report_free(&rep);
    const char *dir = t_tmpdir();
    const char *a1[] = {"run", "--algo", "ring", "--ranks", "2", "--train-flops", "1e6", "--device", "p100", "--out",
                        dir, NULL};
    t_refused(a1, "--train-flops needs --batch");
    const char *a2[] = {"run", "--algo", "ring", "--ranks", "2", "--train-flops", "1e6", "--batch", "2", "--out",
                        dir, NULL};
    t_refused(a2, "--train-flops on --device none has no compute time");
    const char *a3[] = {"run", "--algo", "ring", "--ranks", "2", "--train-flops", "1e6", "--train-model", "vgg16",
                        "--device", "p100", "--out", dir, NULL};
    t_refused(a3, "give one");
}

/* every table's tensors sum to the parameter count its comment states, and
 * each tensor has a kind its family's profile knows */
Test(training, paper_tables_sum_to_n)
{
    static const char *const cnn[] = {"conv_weight", "conv_bias", "bn_weight", "bn_bias", "linear_weight",
                                      "linear_bias", NULL};
    static const char *const lstm[] = {"lstm_weight_ih", "lstm_weight_hh", "lstm_bias", "embedding", "linear_weight",
                                       "linear_bias", "conv_weight", "conv_bias", "bn_weight", "bn_bias", "other",
                                       NULL};
    static const char *const transformer[] = {"embedding", "linear_weight", "linear_bias", "layernorm_weight",
                                              "layernorm_bias", NULL};
    static const struct {
        const char *name, *family;
        uint64_t n;
        int nlayers, batch;
        double fwd_flops;
    } want[] = {
        {"vgg16", "cnn", 14728266, 54, 16, 6.26e8},
        {"lstm", "lstm", 27569568, 40, 2, 9.9e9},
        {"bert", "transformer", 133547324, 207, 8, 2.21e10},
        {"resnet20", "cnn", 269722, 59, 32, 8.11e7},
        {"alexnet", "cnn", 61100840, 16, 256, 1.43e9},
        {"resnet50", "cnn", 25557032, 161, 64, 8.18e9},
        {"lstm-ptb", "lstm", 66034000, 11, 20, 3.57e9},
        {"gpt2-xl", "transformer", 1557611200, 580, 8, 3.18e12},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const sp_paper_model *m = sp_paper_model_find(want[i].name);
        cr_assert(m, "%s", want[i].name);
        cr_assert_str_eq(m->family, want[i].family, "%s", want[i].name);
        cr_assert_eq(m->n, want[i].n, "%s: n %llu", want[i].name, (unsigned long long)m->n);
        cr_assert_eq(m->nlayers, want[i].nlayers, "%s: %d tensors", want[i].name, m->nlayers);
        cr_assert_eq(m->batch, want[i].batch, "%s", want[i].name);
        cr_assert_eq(m->fwd_flops, want[i].fwd_flops, "%s", want[i].name);
        const char *const *kinds = !strcmp(m->family, "cnn") ? cnn : !strcmp(m->family, "lstm") ? lstm : transformer;
        uint64_t sum = 0;
        for (int l = 0; l < m->nlayers; l++) {
            cr_assert(m->layers[l].size > 0, "%s: %s", want[i].name, m->layers[l].name);
            sum += m->layers[l].size;
            int known = 0;
            for (int k = 0; kinds[k]; k++)
                known |= !strcmp(kinds[k], m->layers[l].kind);
            cr_assert(known, "%s: %s has kind %s", want[i].name, m->layers[l].name, m->layers[l].kind);
            for (int o = 0; o < l; o++)
                cr_assert_str_neq(m->layers[o].name, m->layers[l].name, "%s: %s twice", want[i].name,
                                  m->layers[l].name);
        }
        cr_assert_eq(sum, m->n, "%s: tensors sum to %llu, n %llu", want[i].name, (unsigned long long)sum,
                     (unsigned long long)m->n);
    }
    cr_assert_null(sp_paper_model_find("resnet"));
}

/* the gTop-k paper's other models run as workload and training model: a
 * short run at P = 4 exits 0 and reports a throughput at the model's batch */
Test(training, gtopk_models_run)
{
    static const struct {
        const char *name;
        int batch;
    } models[] = {{"resnet20", 32}, {"alexnet", 256}, {"resnet50", 64}, {"lstm-ptb", 20}};
    const char *dir = t_tmpdir();
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *out = t_path(dir, models[i].name);
        const char *args[] = {"run", "--algo", "gtopk", "--ranks", "4", "--workload", models[i].name, "--payload",
                              "model", "--density", "0.001", "--iters-at", "0,1", "--train-model", models[i].name,
                              "--device", "p102", "--out", out, "--quiet", NULL};
        t_proc r = t_run(args);
        cr_assert_eq(r.status, 0, "%s: %s", models[i].name, r.err);
        t_proc_free(&r);
        char path[1200];
        snprintf(path, sizeof path, "%s/summary.json", out);
        cJSON *j = sp_json_file(path);
        cr_assert(j, "no %s", path);
        cr_assert(sp_json_num(j, SPK_TRAINING, SPK_TR_SAMPLES) > 0, "%s", models[i].name);
        cr_assert_eq(sp_json_num(j, SPK_TRAINING, SPK_TR_BATCH), models[i].batch, "%s", models[i].name);
        cr_assert_str_eq(sp_json_str(j, SPK_TRAINING, SPK_TR_MODEL), models[i].name);
        cJSON_Delete(j);
    }
}

static cJSON *summary(const char *dir, const char *algo)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/summary.json", dir, algo);
    cJSON *j = sp_json_file(path);
    cr_assert(j, "no %s", path);
    return j;
}

/* run with a dense and a sparse algorithm: speedups over the fastest dense
 * in summary.json, comparison.csv and the table */
Test(training, speedup_over_fastest_dense)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", "ring,rabenseifner,topka", "--ranks", "8", "--n", "64K", "--network",
                          "cm02", "--train-compute", "0.002", "--batch", "32", "--out", dir, "--no-trace", "--no-csv",
                          NULL};
    t_proc r = t_run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "vs dense"), "%s", r.out);
    cJSON *ring = summary(dir, "ring"), *rab = summary(dir, "rabenseifner"), *topka = summary(dir, "topka");
    double it_ring = sp_json_num(ring, SPK_TRAINING, SPK_TR_ITER), it_rab = sp_json_num(rab, SPK_TRAINING, SPK_TR_ITER);
    double it_topka = sp_json_num(topka, SPK_TRAINING, SPK_TR_ITER);
    double best = it_ring < it_rab ? it_ring : it_rab;
    cr_assert(best > 0 && it_topka > 0);
    cr_assert_float_eq(sp_json_num(topka, SPK_TRAINING, SPK_TR_SPEEDUP), best / it_topka, 1e-12);
    cr_assert_float_eq(sp_json_num(ring, SPK_TRAINING, SPK_TR_SPEEDUP), best / it_ring, 1e-12);
    cr_assert_str_eq(sp_json_str(topka, SPK_TRAINING, SPK_TR_DENSE), "-"); /* an object, not a string */
    cJSON *ref = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(topka, SPK_TRAINING), SPK_TR_DENSE);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(ref, SPK_CFG_ALGO)->valuestring,
                     it_ring < it_rab ? "ring" : "rabenseifner");
    cr_assert_float_eq(sp_json_num(topka, SPK_TRAINING, SPK_TR_SAMPLES), 8.0 * 32 / it_topka, 1e-9);
    char *csv = t_read_file(t_path(dir, "comparison.csv"), NULL);
    cr_assert(csv && strstr(csv, ",iteration_s,samples_per_s,speedup_vs_dense\n"), "%s", csv);
    free(csv);
    cJSON_Delete(ring);
    cJSON_Delete(rab);
    cJSON_Delete(topka);
    t_proc_free(&r);
}

Test(training, bad_input_one_line)
{
    const char *dir = t_tmpdir();
    const char *a1[] = {"run", "--algo", "ring", "--ranks", "2", "--overlap", "--out", dir, NULL};
    t_refused(a1, "--overlap needs training iterations");
    const char *a2[] = {"run", "--algo", "ring", "--ranks", "2", "--train-model", "vgg16", "--out", dir, NULL};
    t_refused(a2, "has no compute time");
    const char *a3[] = {"run", "--algo", "ring", "--ranks", "2", "--train-compute", "0.1", "--out", dir, NULL};
    t_refused(a3, "needs --batch");
    const char *a4[] = {"run", "--algo", "ring", "--ranks", "2", "--train-compute", "0.1", "--batch", "2",
                        "--compute", "0.1", "--out", dir, NULL};
    t_refused(a4, "give one");
    const char *a5[] = {"run", "--algo", "ring", "--ranks", "2", "--train-model", "resnet", "--out", dir, NULL};
    t_refused(a5, "--train-model must be");
    const char *a6[] = {"run", "--algo", "ring", "--ranks", "2", "--train-compute", "-1", "--out", dir, NULL};
    t_refused(a6, "--train-compute must be");
    /* --batch without training sets a built-in workload's batch per worker; a profile file has none */
    sp_profile g;
    char err[300];
    cr_assert_eq(sp_profile_get("generic", 4096, 1, NULL, &g, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(t_path(dir, "p.json"), "w");
    cr_assert(f && sp_profile_write(&g, f) == 0);
    fclose(f);
    sp_profile_free(&g);
    const char *a7[] = {"run", "--algo", "ring", "--ranks", "2", "--workload", t_path(dir, "p.json"), "--batch", "4",
                        "--out", dir, NULL};
    t_refused(a7, "--batch needs training iterations or a built-in --workload");
}

/* --batch on a built-in workload, without training: its workers' own scales
 * at that batch, echoed as the run used them */
Test(training, batch_sets_the_workers_scales)
{
    const char *dir = t_tmpdir();
    const char *a[] = {"run", "--algo", "gtopk", "--ranks", "4", "--workload", "vgg16", "--batch", "32", "--payload",
                       "model", "--iters", "1", "--no-trace", "--no-csv", "--out", dir, NULL};
    t_proc r = t_run(a);
    cr_assert(r.exited && r.status == 0, "%s", r.err);
    t_proc_free(&r);
    sp_profile_knobs kn = {.tail = -1, .zeros = -1, .common = -1, .mean = -1, .refresh = -1, .keep = -1,
                           .scale_sd = -1, .scale_corr = -1, .spikes = -1, .spike_scale = -1, .rank_sd = -1,
                           .rank_corr = -1, .batch = 32};
    sp_profile p;
    char err[300];
    cr_assert_eq(sp_profile_get("vgg16", 0, 1, &kn, &p, err, sizeof err), 0, "%s", err);
    cr_assert_gt(p.rank_sd, 0);
    cJSON *j = sp_json_file(t_path(dir, "summary.json"));
    cr_assert(j);
    cJSON *cfg = cJSON_GetObjectItemCaseSensitive(j, SPK_CONFIG);
    cr_assert_float_eq(cJSON_GetObjectItemCaseSensitive(cfg, "grad-rank-sd")->valuedouble, p.rank_sd, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItemCaseSensitive(cfg, "grad-rank-corr")->valuedouble, p.rank_corr, 1e-12);
    cJSON_Delete(j);
    sp_profile_free(&p);
}

/* a sweep's rows carry the iteration, samples/s and the speedup over the
 * dense row of the same setting; analyze prints the same speedup */
Test(training, sweep_and_analyze_columns)
{
    const char *dir = t_tmpdir();
    const char *csv = t_path(dir, "s.csv");
    /* one run at a time: a row's speedup is over the dense rows written before it */
    const char *a[] = {"sweep", "--algo", "ring,topka", "--ranks", "4", "--n", "64K", "--network", "cm02",
                       "--train-compute", "0.001", "--batch", "8", "--jobs", "1", "--out", csv, NULL};
    t_proc p = t_run(a);
    cr_assert_eq(p.status, 0, "%s", p.err);
    t_proc_free(&p);
    char *text = t_read_file(csv, NULL);
    cr_assert(strstr(text, ",slowdown,iteration_s,samples_per_s,speedup_vs_dense,settings,"), "%s", text);
    /* the three fields follow slowdown (column 27, 1-based) */
    double it[2] = {0, 0}, sps[2] = {0, 0}, sp[2] = {0, 0};
    char *line = strchr(text, '\n') + 1;
    for (int row = 0; row < 2; row++) {
        char *end = strchr(line, '\n');
        *end = '\0';
        char *f = line;
        for (int c = 1; c < 27; c++)
            f = strchr(f, ',') + 1;
        cr_assert_eq(sscanf(f, "%lf,%lf,%lf", &it[row], &sps[row], &sp[row]), 3, "%s", f);
        line = end + 1;
    }
    cr_assert_float_eq(sp[0], 1.0, 1e-9);
    cr_assert_float_eq(sp[1], it[0] / it[1], 1e-5);
    cr_assert_float_eq(sps[1], 4.0 * 8 / it[1], 1e-3);
    free(text);
    const char *b[] = {"analyze", csv, NULL};
    p = t_run(b);
    cr_assert_eq(p.status, 0, "%s", p.err);
    char want[64];
    snprintf(want, sizeof want, "%10.4f\n", it[0] / it[1]);
    cr_assert(strstr(p.out, "training iterations") && strstr(p.out, want), "%s", p.out);
    t_proc_free(&p);
}
