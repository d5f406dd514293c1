/* run_cmd.c - `sparsim run`: one algorithm, or several side by side.
 *
 * Each algorithm runs in a child process (a SimGrid engine runs once per
 * process); several are compared in a table and in DIR/comparison.csv.
 * Everything the run will write is checked before the first child starts;
 * several algorithms publish all their outputs or none: when one fails or a
 * signal ends the command, the outputs of those before it go too.
 */
#include "cli.h"
#include "analysis/speedup.h"
#include "sim/driver/training.h"
#include "traces/csv.h"
#include "traces/summary_keys.h"
#include "traces/trace.h"
#include "sim/driver/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMPARISON_HEADER                                                                                         \
    "algo,ranks,n,density,k,platform,network,device,iters,payload,time_per_iter_s,volume_bytes,bound_formula,"   \
    "bound_bytes,bound_ratio,sent_bytes_max,recv_bytes_max,messages,wall_s,iteration_s,samples_per_s,"            \
    "speedup_vs_dense"

/* the volume of the iterations after the first, as a ratio to the bound:
 * the steady state, where the first iteration starts from a cold residual
 * (Ok-Topk's thresholds, Gaussian-k's estimate); < 0 with one iteration */
static double steady_ratio(const cJSON *j, double bound_bytes)
{
    const cJSON *its = cJSON_GetObjectItemCaseSensitive(j, SPK_ITERATIONS);
    int n = cJSON_GetArraySize(its);
    if (n < 2 || bound_bytes <= 0)
        return -1;
    double sum = 0;
    for (int i = 1; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(its, i), SPK_VOLUME_BYTES);
        sum += cJSON_IsNumber(v) ? v->valuedouble : 0;
    }
    return sum / (n - 1) / bound_bytes;
}

/* one row of comparison.csv and of the table, from a run's summary.json;
 * speedup: over the fastest dense allreduce (analysis/speedup.h), 0: none */
static int compare_row(const sp_plan *base, const char *name, FILE *csv, double speedup)
{
    char path[2200], e2[700];
    snprintf(path, sizeof path, "%.1023s/%.63s/summary.json", base->out, name);
    cJSON *j = sp_json_file_checked(path, (size_t)1 << 30, e2, sizeof e2);
    if (!j) {
        sp_opts_print_error(e2);
        return -1;
    }
    double t = sp_json_num(j, SPK_TIME_PER_ITER, SPK_MEAN), vol = sp_json_num(j, SPK_VOLUME, SPK_VOL_MAX);
    double bw = sp_json_num(j, SPK_BOUND, SPK_WORDS), ratio = sp_json_num(j, SPK_BOUND, SPK_RATIO);
    double smax = sp_json_num(j, SPK_RANKS, SPK_SENT_MAX_R), rmax = sp_json_num(j, SPK_RANKS, SPK_RECV_MAX_R);
    double msgs = sp_json_num(j, SPK_MESSAGES, NULL), k = sp_json_num(j, SPK_K, NULL);
    double wall = sp_json_num(j, SPK_WALL, NULL);
    char plat[2100], dev[2100], formula[300];
    fprintf(csv, "%s,%d,%llu,%.17g,%.0f,%s,%s,%s,%d,%s,%.9g,%.0f,%s,%.0f,%.6f,%.0f,%.0f,%.0f,%.3f,", name,
            base->ranks, (unsigned long long)sp_json_num(j, SPK_CONFIG, SPK_CFG_N), base->density, k,
            sp_csv_field(base->platform, plat, sizeof plat), base->network,
            sp_csv_field(base->device, dev, sizeof dev), (int)sp_json_num(j, SPK_CONFIG, SPK_CFG_ITERS),
            sp_json_str(j, SPK_CONFIG, SPK_CFG_PAYLOAD), t, vol,
            sp_csv_field(sp_json_str(j, SPK_BOUND, SPK_FORMULA), formula, sizeof formula), 4.0 * bw, ratio, smax,
            rmax, msgs, wall);
    double it = sp_json_num(j, SPK_TRAINING, SPK_TR_ITER), sps = sp_json_num(j, SPK_TRAINING, SPK_TR_SAMPLES);
    if (it > 0)
        fprintf(csv, "%.9g,%.9g,", it, sps);
    else
        fprintf(csv, ",,");
    if (speedup > 0)
        fprintf(csv, "%.6f", speedup);
    fprintf(csv, "\n");
    if (!base->quiet) {
        printf("%-14s %14.6g %16.0f %14.0f %10.4f", name, t, vol, 4.0 * bw, ratio);
        if (base->iters > 1)
            printf(" %10.4f", steady_ratio(j, 4.0 * bw));
        printf(" %14.0f %10.0f", smax, msgs);
        if (it > 0)
            printf(" %14.6g %12.6g", it, sps);
        if (speedup > 0)
            printf(" %10.4f", speedup);
        printf("\n");
    }
    cJSON_Delete(j);
    return 0;
}

/* Training iterations with a dense allreduce among the algorithms: each
 * one's speedup over the fastest dense one (analysis/speedup.h; 0: none,
 * when no dense one ran or training is off) in speedup[], and the fastest
 * dense iteration time in *dense_iter (0: none).  Every algorithm's
 * summary.json then gets its speedup and that reference (written whole
 * under a .part name and renamed, as every output).  0, or -1 with a
 * message. */
static int dense_speedups(const sp_plan *base, char names[][64], int count, double *speedup, double *dense_iter,
                          char *err, size_t errlen)
{
    sp_speedup_run runs[32];
    *dense_iter = 0;
    for (int i = 0; i < count; i++) {
        char path[2200];
        snprintf(path, sizeof path, "%.1023s/%.63s/summary.json", base->out, names[i]);
        cJSON *j = sp_json_file_checked(path, (size_t)1 << 30, err, errlen);
        if (!j)
            return -1;
        runs[i] = (sp_speedup_run){.algo = names[i], .ranks = base->ranks,
                                   .n = sp_json_num(j, SPK_CONFIG, SPK_CFG_N), .k = sp_json_num(j, SPK_K, NULL),
                                   .platform = base->platform, .level = "",
                                   .iter = sp_json_num(j, SPK_TRAINING, SPK_TR_ITER)};
        cJSON_Delete(j);
    }
    for (int i = 0; i < count; i++) {
        int best;
        speedup[i] = sp_speedup_vs_dense(runs, count, &runs[i], &best);
        if (!(speedup[i] > 0))
            continue;
        *dense_iter = runs[best].iter;
        char path[2200];
        snprintf(path, sizeof path, "%.1023s/%.63s/summary.json", base->out, names[i]);
        cJSON *j = sp_json_file_checked(path, (size_t)1 << 30, err, errlen);
        if (!j)
            return -1;
        cJSON *tr = cJSON_GetObjectItemCaseSensitive(j, SPK_TRAINING);
        int rc = 0;
        if (cJSON_IsObject(tr)) {
            cJSON_AddNumberToObject(tr, SPK_TR_SPEEDUP, speedup[i]);
            cJSON *ref = cJSON_AddObjectToObject(tr, SPK_TR_DENSE);
            cJSON_AddStringToObject(ref, SPK_CFG_ALGO, names[best]);
            cJSON_AddNumberToObject(ref, SPK_TR_ITER, runs[best].iter);
            rc = sp_json_write(path, j, err, errlen);
        }
        cJSON_Delete(j);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* the algorithms of a multi-algorithm run that have finished: their outputs
 * go when a later one fails or a signal ends the command */
typedef struct {
    const sp_plan *base;
    char (*names)[64];
    int count, done;
} finished_runs;

static void remove_finished(const finished_runs *f)
{
    for (int i = 0; i < f->done; i++) {
        sp_plan q;
        sp_plan_for_algorithm(f->base, f->names[i], f->count, &q); /* fits: sp_plan_validate checked */
        sp_cli_remove_run_dir(q.out);
        if (q.dump_result[0])
            unlink(q.dump_result);
    }
}

static void remove_on_interrupt(const sp_plan *run, void *arg)
{
    sp_cli_remove_run_dir(run->out);
    remove_finished(arg);
}

/* several algorithms: one child process each, then a comparison table */
static int run_many(const sp_plan *base, char names[][64], int count)
{
    char err[600];
    if (sp_mkdirs(base->out, err, sizeof err) != 0) {
        sp_opts_print_error(err);
        return 2;
    }
    finished_runs fin = {base, names, count, 0};
    sp_cli_on_interrupt(remove_on_interrupt, &fin);
    for (int i = 0; i < count; i++) {
        sp_plan p;
        if (sp_plan_for_algorithm(base, names[i], count, &p) != 0)
            return 2; /* sp_plan_validate checked */
        p.quiet = 1;
        int rc = sp_cli_run_in_child(&p);
        if (rc != 0) {
            sp_cli_remove_run_dir(p.out);
            remove_finished(&fin);
            sp_cli_on_interrupt(NULL, NULL);
            return rc;
        }
        fin.done = i + 1;
    }
    char path[2200];
    double dense_iter = 0, speedup[32];
    if (dense_speedups(base, names, count, speedup, &dense_iter, err, sizeof err) != 0) {
        sp_opts_print_error(err);
        remove_finished(&fin);
        sp_cli_on_interrupt(NULL, NULL);
        return 1;
    }
    snprintf(path, sizeof path, "%s/comparison.csv", base->out);
    sp_part_file pf;
    int ok = sp_part_open(&pf, path, err, sizeof err) == 0;
    if (!ok)
        sp_opts_print_error(err);
    if (ok) {
        fprintf(pf.f, COMPARISON_HEADER "\n");
        if (!base->quiet) {
            printf("P = %d on %s (%s network%s, device %s), n = %llu, density %g, %d iteration%s\n", base->ranks,
                   base->platform, base->network, base->engine == 1 ? " on the flow engine" : "", base->device, (unsigned long long)base->n, base->density,
                   base->iters, base->iters == 1 ? "" : "s");
            printf("%-14s %14s %16s %14s %10s", "algorithm", "time/iter (s)", "volume/rank (B)", "bound (B)",
                   "vol/bound");
            if (base->iters > 1)
                printf(" %10s", "steady");
            printf(" %14s %10s", "max sent (B)", "messages");
            if (sp_training_on(base))
                printf(" %14s %12s%s", "train iter (s)", "samples/s", dense_iter > 0 ? "  vs dense" : "");
            printf("\n");
        }
        for (int i = 0; i < count && ok; i++)
            ok = compare_row(base, names[i], pf.f, speedup[i]) == 0;
        if (sp_part_close(&pf, ok, err, sizeof err) != 0) {
            sp_opts_print_error(err);
            ok = 0;
        }
    }
    if (!ok) {
        remove_finished(&fin);
        sp_cli_on_interrupt(NULL, NULL);
        return 1;
    }
    sp_cli_on_interrupt(NULL, NULL);
    if (!base->quiet)
        printf("bound: each algorithm's closed-form volume per rank (formulas and sources in summary.json)%s\n"
               "outputs: %s/NAME/{messages.csv,summary.json,trace.json}, table in %s/comparison.csv\n",
               base->iters > 1 ? "\nvol/bound: the largest iteration's volume over the bound (often the first: a "
                                 "cold residual,\nthresholds not yet learnt); steady: the mean of the later iterations"
                               : "",
               base->out, base->out);
    if (!base->quiet && sp_training_on(base))
        printf("training: compute + allreduce per iteration%s; vs dense: %s\n",
               base->overlap ? " (dense ones overlapped with backward)" : "",
               dense_iter > 0 ? "speedup over the fastest dense allreduce run here" : "no dense allreduce ran here");
    return 0;
}

/* every path the run will write, before anything runs */
static int check_outputs(const sp_plan *p, char *err, size_t errlen)
{
    if (sp_opts_output_ok(p->out, 1, "--out", err, errlen) != 0)
        return -1;
    if (p->dump_result[0] && sp_opts_output_ok(p->dump_result, 0, "--dump-result", err, errlen) != 0)
        return -1;
    if (p->dump_grads[0] && sp_opts_output_ok(p->dump_grads, 0, "--dump-grads", err, errlen) != 0)
        return -1;
    return 0;
}

int sp_cmd_run(int argc, char **argv)
{
    sp_plan p;
    sp_plan_defaults(&p);
    char err[1400] = "";
    int rc = sp_plan_parse(&p, argc, argv, err, sizeof err);
    if (rc == 1) {
        if (sp_plan_print_help(sp_opts_help_arg(argc, argv), 0, stdout, err, sizeof err) == 0)
            return 0;
        sp_opts_print_error(err);
        return 2;
    }
    if (rc != 0 || sp_plan_validate(&p, err, sizeof err) != 0) {
        sp_opts_print_error(err);
        return 2;
    }
    char names[32][64];
    int count = sp_plan_algorithms(&p, names, 32);
    if (check_outputs(&p, err, sizeof err) != 0) {
        sp_opts_print_error(err);
        return 2;
    }
    /* progress on the terminal: only where a person watches stdout */
    if (!p.quiet && isatty(1) && isatty(2))
        sp_progress_enable(dup(2));
    if (count == 1) {
        snprintf(p.algo, sizeof p.algo, "%s", names[0]);
        return sp_cli_run_in_child(&p);
    }
    return run_many(&p, names, count);
}
