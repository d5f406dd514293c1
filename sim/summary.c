/* summary.c - summary.json and the human summary of one run.
 *
 * The volume "as the bounds count it" (see DESIGN): for each phase, the
 * largest over ranks of max(bytes sent, bytes received) in that phase,
 * summed over the phases of one iteration.  It is held against the
 * algorithm's closed-form bound; bytes everywhere, words (4 bytes) beside
 * them where a paper's formula is quoted.
 */
#include "internal.h"
#include "../analysis/bounds.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPARSIM_VERSION "0.1.0"

static uint64_t iter_volume(const sp_report *rep, int it)
{
    uint64_t v = 0;
    for (int ph = 0; ph < rep->nphases; ph++)
        v += rep->iters[it].phase_volume[ph];
    return v;
}

/* phases that took time or moved bytes in some iteration */
static int phase_used(const sp_report *rep, int ph)
{
    for (int it = 0; it < rep->niters; it++)
        if (rep->iters[it].phase_time[ph] > 0 || rep->iters[it].phase_volume[ph] > 0)
            return 1;
    return 0;
}

typedef struct {
    double t_mean, t_max, t_min;
    double vol_mean;
    uint64_t vol_max;
    double sent_mean, recv_mean;
    uint64_t sent_max, recv_max;
} figures;

static void compute_figures(const sp_report *rep, figures *f)
{
    memset(f, 0, sizeof *f);
    f->t_min = 1e300;
    for (int it = 0; it < rep->niters; it++) {
        double t = rep->iters[it].t_end - rep->iters[it].t_start;
        f->t_mean += t / rep->niters;
        if (t > f->t_max)
            f->t_max = t;
        if (t < f->t_min)
            f->t_min = t;
        uint64_t v = iter_volume(rep, it);
        f->vol_mean += (double)v / rep->niters;
        if (v > f->vol_max)
            f->vol_max = v;
    }
    for (int r = 0; r < rep->nranks; r++) {
        f->sent_mean += (double)rep->rank_sent[r] / rep->nranks;
        f->recv_mean += (double)rep->rank_recv[r] / rep->nranks;
        if (rep->rank_sent[r] > f->sent_max)
            f->sent_max = rep->rank_sent[r];
        if (rep->rank_recv[r] > f->recv_max)
            f->recv_max = rep->rank_recv[r];
    }
}

int sp_write_summary(const sp_plan *p, const sp_report *rep, const char *path, char *err, size_t errlen)
{
    figures f;
    compute_figures(rep, &f);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "sparsim_version", SPARSIM_VERSION);
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    cJSON_AddStringToObject(cfg, "algo", p->algo);
    cJSON_AddNumberToObject(cfg, "ranks", p->ranks);
    cJSON_AddStringToObject(cfg, "platform", p->platform);
    cJSON_AddStringToObject(cfg, "network", p->network);
    cJSON_AddStringToObject(cfg, "device", p->device);
    cJSON_AddNumberToObject(cfg, "n", (double)p->n);
    cJSON_AddNumberToObject(cfg, "density", p->density);
    cJSON_AddNumberToObject(cfg, "iters", p->iters);
    cJSON_AddNumberToObject(cfg, "seed", (double)p->seed);
    cJSON_AddStringToObject(cfg, "grad-file", p->grad_file);
    cJSON_AddStringToObject(cfg, "payload", rep->exact ? "exact" : "size");
    cJSON_AddNumberToObject(cfg, "warmup", p->warmup);
    cJSON_AddStringToObject(cfg, "gaussian-variant", p->opts.gaussian_oktopk ? "oktopk" : "authors");
    cJSON_AddNumberToObject(cfg, "dsa-dense-at", p->opts.dsa_dense_at);
    cJSON_AddNumberToObject(cfg, "bucket", p->opts.bucket);
    cJSON_AddStringToObject(cfg, "oktopk-preset", sp_oktopk_preset_at(p->opts.oktopk_preset)->name);
    cJSON_AddNumberToObject(cfg, "tau", p->opts.tau ? p->opts.tau : 64);
    cJSON_AddNumberToObject(cfg, "tau-prime", p->opts.tau_prime ? p->opts.tau_prime
                                                                 : sp_oktopk_preset_at(p->opts.oktopk_preset)->tau_prime);
    cJSON_AddNumberToObject(cfg, "balance", p->opts.balance);
    cJSON_AddStringToObject(cfg, "packing", p->opts.separate ? "separate" : "pairs");
    cJSON_AddStringToObject(cfg, "quantiles", p->opts.exact_quantiles ? "exact" : "authors");
    cJSON_AddNumberToObject(cfg, "grad-layers", p->grad_layers);
    cJSON_AddNumberToObject(cfg, "grad-spread", p->grad_spread);
    cJSON_AddNumberToObject(cfg, "grad-shared", p->grad_shared);
    cJSON_AddNumberToObject(cfg, "grad-persistence", p->grad_persistence);
    cJSON_AddStringToObject(root, "backend", sp_backend_name());
    cJSON_AddNumberToObject(root, "k", (double)rep->k);
    cJSON *plat = cJSON_AddObjectToObject(root, "platform");
    cJSON_AddNumberToObject(plat, "alpha_s", rep->alpha);
    cJSON_AddNumberToObject(plat, "bandwidth_Bps", rep->beta > 0 ? 1.0 / rep->beta : 0);

    cJSON *phases = cJSON_AddArrayToObject(root, "phases");
    for (int ph = 0; ph < rep->nphases; ph++)
        if (phase_used(rep, ph))
            cJSON_AddItemToArray(phases, cJSON_CreateString(rep->phase_names[ph]));

    cJSON *its = cJSON_AddArrayToObject(root, "iterations");
    for (int it = 0; it < rep->niters; it++) {
        const sp_iter_stats *st = &rep->iters[it];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "iter", it);
        cJSON_AddNumberToObject(o, "time_s", st->t_end - st->t_start);
        cJSON_AddNumberToObject(o, "t_start_s", st->t_start);
        cJSON_AddNumberToObject(o, "t_end_s", st->t_end);
        cJSON_AddNumberToObject(o, "volume_bytes", (double)iter_volume(rep, it));
        cJSON_AddNumberToObject(o, "messages", (double)st->msgs);
        cJSON_AddNumberToObject(o, "bytes", (double)st->bytes);
        if (st->dense_warmup)
            cJSON_AddBoolToObject(o, "dense_warmup", 1);
        if (rep->nstats) {
            cJSON *so = cJSON_AddObjectToObject(o, "stats");
            for (int i = 0; i < rep->nstats; i++) {
                if (!st->stat_count[i])
                    continue;
                cJSON *x = cJSON_AddObjectToObject(so, rep->stat_names[i]);
                cJSON_AddNumberToObject(x, "min", st->stat_min[i]);
                cJSON_AddNumberToObject(x, "mean", st->stat_sum[i] / st->stat_count[i]);
                cJSON_AddNumberToObject(x, "max", st->stat_max[i]);
            }
        }
        cJSON *po = cJSON_AddObjectToObject(o, "phases");
        for (int ph = 0; ph < rep->nphases; ph++) {
            if (!phase_used(rep, ph))
                continue;
            cJSON *x = cJSON_AddObjectToObject(po, rep->phase_names[ph]);
            cJSON_AddNumberToObject(x, "time_s", st->phase_time[ph]);
            cJSON_AddNumberToObject(x, "volume_bytes", (double)st->phase_volume[ph]);
            cJSON_AddNumberToObject(x, "sent_max_bytes", (double)st->phase_sent_max[ph]);
            cJSON_AddNumberToObject(x, "recv_max_bytes", (double)st->phase_recv_max[ph]);
        }
        cJSON_AddItemToArray(its, o);
    }
    cJSON *tpi = cJSON_AddObjectToObject(root, "time_per_iter_s");
    cJSON_AddNumberToObject(tpi, "mean", f.t_mean);
    cJSON_AddNumberToObject(tpi, "max", f.t_max);
    cJSON_AddNumberToObject(tpi, "min", f.t_min);
    cJSON *vol = cJSON_AddObjectToObject(root, "volume");
    cJSON_AddStringToObject(vol, "definition",
                            "per phase, max over ranks of max(bytes sent, bytes received); summed over phases");
    cJSON_AddNumberToObject(vol, "bytes_per_iter_mean", f.vol_mean);
    cJSON_AddNumberToObject(vol, "bytes_per_iter_max", (double)f.vol_max);
    cJSON_AddNumberToObject(vol, "words_per_iter_max", (double)f.vol_max / 4.0);

    sp_bound b;
    if (sp_bound_volume(p->algo, p->ranks, p->n, rep->k, &b) == 0) {
        cJSON *bo = cJSON_AddObjectToObject(root, "bound");
        cJSON_AddStringToObject(bo, "formula", b.formula);
        cJSON_AddStringToObject(bo, "source", b.source);
        cJSON_AddNumberToObject(bo, "words", b.words);
        cJSON_AddNumberToObject(bo, "bytes", 4.0 * b.words);
        cJSON_AddNumberToObject(bo, "ratio", b.words > 0 ? (double)f.vol_max / (4.0 * b.words) : 0);
        if (b.floor_words > 0)
            cJSON_AddNumberToObject(bo, "floor_words", b.floor_words);
        cJSON_AddStringToObject(bo, "lower_formula", b.lower_formula);
        cJSON_AddNumberToObject(bo, "lower_words", b.lower_words);
        cJSON_AddNumberToObject(bo, "lower_bytes", 4.0 * b.lower_words);
    }
    double pred = sp_predict_time(p->algo, p->ranks, p->n, rep->k, rep->alpha, rep->beta);
    if (pred >= 0) {
        cJSON *pr = cJSON_AddObjectToObject(root, "prediction");
        cJSON_AddStringToObject(pr, "model", "alpha-beta, uncontended, compute not included");
        cJSON_AddNumberToObject(pr, "time_s", pred);
        cJSON_AddNumberToObject(pr, "measured_over_predicted", pred > 0 ? f.t_mean / pred : 0);
    }
    cJSON *ranks = cJSON_AddObjectToObject(root, "ranks");
    cJSON_AddNumberToObject(ranks, "sent_bytes_mean", f.sent_mean);
    cJSON_AddNumberToObject(ranks, "sent_bytes_max", (double)f.sent_max);
    cJSON_AddNumberToObject(ranks, "recv_bytes_mean", f.recv_mean);
    cJSON_AddNumberToObject(ranks, "recv_bytes_max", (double)f.recv_max);
    cJSON *sa = cJSON_AddArrayToObject(ranks, "sent_bytes");
    cJSON *ra = cJSON_AddArrayToObject(ranks, "recv_bytes");
    for (int r = 0; r < rep->nranks; r++) {
        cJSON_AddItemToArray(sa, cJSON_CreateNumber((double)rep->rank_sent[r]));
        cJSON_AddItemToArray(ra, cJSON_CreateNumber((double)rep->rank_recv[r]));
    }
    cJSON_AddNumberToObject(root, "messages", (double)rep->total_msgs);
    cJSON_AddNumberToObject(root, "bytes", (double)rep->total_bytes);
    cJSON_AddNumberToObject(root, "wall_seconds", rep->wall_seconds);
    cJSON_AddNumberToObject(root, "trace_messages_dropped", (double)rep->trace_dropped);

    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, errlen, "out of memory writing %s", path);
        return -1;
    }
    sp_part_file pf;
    if (sp_part_open(&pf, path, err, errlen) != 0) {
        free(text);
        return -1;
    }
    int ok = fputs(text, pf.f) >= 0 && fputc('\n', pf.f) != EOF;
    free(text);
    if (sp_part_close(&pf, ok, err, errlen) != 0 || !ok) {
        if (!ok)
            snprintf(err, errlen, "error writing %s", path);
        return -1;
    }
    return 0;
}

static const char *human_bytes(double b, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4) {
        b /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.2f %s" : "%.0f %s", b, u[i]);
    return buf;
}

void sp_print_summary(const sp_plan *p, const sp_report *rep)
{
    figures f;
    compute_figures(rep, &f);
    char b1[32], b2[32], b3[32], b4[32];
    printf("%s on %s (%s network, device %s): P = %d, n = %llu, density %g (k = %llu), %d iteration%s, %s "
           "payloads\n",
           p->algo, p->platform, p->network, p->device, p->ranks, (unsigned long long)p->n, p->density,
           (unsigned long long)rep->k, p->iters, p->iters == 1 ? "" : "s", rep->exact ? "exact" : "size-only");
    printf("  %s time per iteration: %.6g s (min %.6g, max %.6g)\n",
           strcmp(sp_backend_name(), "mpi") ? "simulated" : "measured", f.t_mean, f.t_min, f.t_max);
    printf("  %-16s %14s %16s\n", "phase", "time (s)", "volume/rank");
    for (int ph = 0; ph < rep->nphases; ph++) {
        if (!phase_used(rep, ph))
            continue;
        double t = 0, v = 0;
        for (int it = 0; it < rep->niters; it++) {
            t += rep->iters[it].phase_time[ph] / rep->niters;
            v += (double)rep->iters[it].phase_volume[ph] / rep->niters;
        }
        printf("  %-16s %14.6g %16s\n", rep->phase_names[ph], t, human_bytes(v, b1, sizeof b1));
    }
    printf("  bytes per rank (whole run): sent mean %s max %s; received mean %s max %s\n",
           human_bytes(f.sent_mean, b1, sizeof b1), human_bytes((double)f.sent_max, b2, sizeof b2),
           human_bytes(f.recv_mean, b3, sizeof b3), human_bytes((double)f.recv_max, b4, sizeof b4));
    sp_bound b;
    if (sp_bound_volume(p->algo, p->ranks, p->n, rep->k, &b) == 0) {
        printf("  volume per iteration (max over iterations): %llu bytes (%.0f words)\n",
               (unsigned long long)f.vol_max, (double)f.vol_max / 4.0);
        printf("  bound %s = %.0f words (%.0f bytes); measured/bound = %.4f  [%s]\n", b.formula, b.words,
               4.0 * b.words, b.words > 0 ? (double)f.vol_max / (4.0 * b.words) : 0.0, b.source);
    }
    double pred = sp_predict_time(p->algo, p->ranks, p->n, rep->k, rep->alpha, rep->beta);
    if (pred > 0)
        printf("  alpha-beta prediction (alpha %.3g s, %.4g B/s): %.6g s; simulated/predicted = %.4f\n",
               rep->alpha, rep->beta > 0 ? 1.0 / rep->beta : 0.0, pred, f.t_mean / pred);
    for (int i = 0; i < rep->nstats; i++) {
        double mn = 0, mean = 0, mx = 0;
        int its = 0;
        for (int it = 0; it < rep->niters; it++) {
            const sp_iter_stats *st = &rep->iters[it];
            if (!st->stat_count[i])
                continue;
            mn += st->stat_min[i];
            mean += st->stat_sum[i] / st->stat_count[i];
            mx += st->stat_max[i];
            its++;
        }
        if (its)
            printf("  %s over ranks (averaged over %d iteration%s): min %.6g, mean %.6g, max %.6g\n",
                   rep->stat_names[i], its, its == 1 ? "" : "s", mn / its, mean / its, mx / its);
    }
    printf("  messages: %llu; wall time %.3f s\n", (unsigned long long)rep->total_msgs, rep->wall_seconds);
    if (rep->trace_dropped)
        printf("  trace.json: %llu message events left out (raise --trace-msgs to keep them)\n",
               (unsigned long long)rep->trace_dropped);
}
