/* summary_print.c - the human summary of one run, on stdout (sparsim run and
 * sparsim-mpi run print the same). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

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

void sp_cli_print_summary(const sp_plan *p, const sp_report *rep, const char *backend)
{
    sp_report_figures f;
    sp_report_figures_of(rep, &f);
    char b1[32], b2[32], b3[32], b4[32];
    printf("%s on %s (%s network%s, device %s): P = %d, n = %llu, density %g (k = %llu), %d iteration%s, %s "
           "payloads\n",
           p->algo, p->platform, p->network, p->engine == 1 ? " on the flow engine" : "", p->device, p->ranks, (unsigned long long)rep->n, p->density,
           (unsigned long long)rep->k, rep->niters, rep->niters == 1 ? "" : "s", rep->exact ? "exact" : rep->model ? "model" : "size-only");
    printf("  %s time per iteration: %.6g s (min %.6g, max %.6g)\n", strcmp(backend, "mpi") ? "simulated" : "measured",
           f.t_mean, f.t_min, f.t_max);
    printf("  %-16s %14s %16s\n", "phase", "time (s)", "volume/rank");
    for (int ph = 0; ph < rep->nphases; ph++) {
        if (!sp_report_phase_used(rep, ph))
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
    const sp_report_bound *b = &rep->bound;
    if (b->known) {
        printf("  volume per iteration (max over iterations): %llu bytes (%.0f words)\n",
               (unsigned long long)f.vol_max, (double)f.vol_max / 4.0);
        printf("  bound %s = %.0f words (%.0f bytes); measured/bound = %.4f  [%s]\n", b->formula, b->words,
               4.0 * b->words, b->words > 0 ? (double)f.vol_max / (4.0 * b->words) : 0.0, b->source);
    }
    sp_nccl_figures nc;
    sp_nccl_figures_of((double)rep->n, rep->nranks, f.t_mean, &nc);
    printf("  as nccl-tests: size %.0f B%s, time %.2f us, algbw %.3f GB/s, busbw %.3f GB/s (x 2(P-1)/P = %.4g)\n",
           nc.size_bytes, rep->sparse ? " (effective: the dense gradient)" : "", nc.time_s * 1e6, nc.algbw_Bps / 1e9,
           nc.busbw_Bps / 1e9, nc.bus_factor);
    if (rep->predicted_s > 0)
        printf("  alpha-beta prediction (alpha %.3g s, %.4g B/s): %.6g s; simulated/predicted = %.4f\n", rep->alpha,
               rep->beta > 0 ? 1.0 / rep->beta : 0.0, rep->predicted_s, f.t_mean / rep->predicted_s);
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
    if (rep->training.on) {
        const sp_report_training *t = &rep->training;
        printf("  training iteration%s%s: %.6g s %s compute %.6g s (forward %.6g, backward %.6g) %s allreduce %.6g s; "
               "%.6g samples/s (P x batch %d)\n",
               t->model[0] ? " of " : "", t->model, t->iter_s, t->overlapped ? "from" : "=", t->compute_s, t->fwd_s,
               t->bwd_s, t->overlapped ? "overlapped with" : "+", t->comm_s, t->samples_per_s, t->batch);
        printf("    compute: %s\n    overlap: %s\n", t->compute_source, t->overlap_rule);
    }
    sp_report_print_disturbance(stdout, rep);
    printf("  messages: %llu; wall time %.3f s, %.0f messages/s", (unsigned long long)rep->total_msgs,
           rep->wall_seconds, sp_report_message_rate(rep));
    if (rep->wall_profile.samples)
        printf(" (time in the network model %.0f%%, the engine %.0f%%, sparsim %.0f%%, "
               "libraries %.0f%%)",
               100 * sp_report_wall_share(rep, SP_WALL_MODEL), 100 * sp_report_wall_share(rep, SP_WALL_ENGINE),
               100 * sp_report_wall_share(rep, SP_WALL_SPARSIM), 100 * sp_report_wall_share(rep, SP_WALL_LIBS));
    printf("\n");
    if (rep->trace_dropped)
        printf("  trace.json: %llu message events left out (raise --trace-msgs to keep them)\n",
               (unsigned long long)rep->trace_dropped);
}

