/* report.c - figures derived from a run's report, shared by its writers. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_report_free(sp_report *rep)
{
    free(rep->iters);
    free(rep->rank_sent);
    free(rep->rank_recv);
    free(rep->rank_sent_off);
    free(rep->rank_recv_off);
    free(rep->result);
    free(rep->result_sum);
    free(rep->residual_sum);
    free(rep->stat_last);
    sp_report_disturb_free(rep->disturb);
    memset(rep, 0, sizeof *rep);
}

void sp_report_disturb_free(sp_report_disturb *d)
{
    if (!d)
        return;
    free(d->slowest_rank);
    free(d->slowest_factor);
    free(d->slowed);
    free(d->base_time);
    free(d->base_phase);
    free(d->crit);
    free(d);
}

double sp_report_base_time(const sp_report *rep)
{
    const sp_report_disturb *d = rep->disturb;
    if (!d || !d->have_baseline || rep->niters < 1)
        return -1;
    double t = 0;
    for (int it = 0; it < rep->niters; it++)
        t += d->base_time[it] / rep->niters;
    return t;
}

double sp_report_phase_mean(const sp_report *rep, int ph, int baseline)
{
    const sp_report_disturb *d = rep->disturb;
    if (ph < 0 || ph >= SP_MAX_PHASES || rep->niters < 1 || (baseline && (!d || !d->have_baseline)))
        return -1;
    double t = 0;
    for (int it = 0; it < rep->niters; it++)
        t += (baseline ? d->base_phase[(size_t)it * SP_MAX_PHASES + (size_t)ph] : rep->iters[it].phase_time[ph]) /
             rep->niters;
    return t;
}

int sp_report_slot(const sp_report *rep, int iter)
{
    if (iter >= 0 && iter < rep->niters && rep->iters[iter].index == iter)
        return iter; /* every iteration simulated: slot = iteration */
    int lo = 0, hi = rep->niters - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, v = rep->iters[mid].index;
        if (v == iter)
            return mid;
        if (v < iter)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

uint64_t sp_report_iter_volume(const sp_report *rep, int it)
{
    uint64_t v = 0;
    for (int ph = 0; ph < rep->nphases; ph++)
        v += rep->iters[it].phase_volume[ph];
    return v;
}

int sp_report_phase_used(const sp_report *rep, int ph)
{
    for (int it = 0; it < rep->niters; it++)
        if (rep->iters[it].phase_time[ph] > 0 || rep->iters[it].phase_volume[ph] > 0)
            return 1;
    return 0;
}

void sp_nccl_figures_of(double n, int ranks, double time_s, sp_nccl_figures *o)
{
    o->size_bytes = 4.0 * n;
    o->time_s = time_s;
    o->bus_factor = ranks > 0 ? 2.0 * (ranks - 1) / ranks : 0;
    o->algbw_Bps = time_s > 0 ? o->size_bytes / time_s : 0;
    o->busbw_Bps = o->algbw_Bps * o->bus_factor;
}

void sp_report_figures_of(const sp_report *rep, sp_report_figures *f)
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
        uint64_t v = sp_report_iter_volume(rep, it);
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

static const char *secs(double t, char *buf, size_t n)
{
    if (t >= 1)
        snprintf(buf, n, "%.4g s", t);
    else if (t >= 1e-3)
        snprintf(buf, n, "%.4g ms", t * 1e3);
    else
        snprintf(buf, n, "%.4g us", t * 1e6);
    return buf;
}

void sp_report_print_disturbance(FILE *f, const sp_report *rep)
{
    const sp_report_disturb *d = rep->disturb;
    if (!d)
        return;
    char b1[40], b2[40];
    fprintf(f, "  disturbances:\n");
    if (d->stragglers) {
        fprintf(f, "    stragglers: ");
        if (d->nchosen) {
            fprintf(f, "rank%s", d->nchosen > 1 ? "s" : "");
            for (int i = 0; i < d->nchosen; i++)
                fprintf(f, "%s%d", i ? "," : " ", d->chosen[i]);
            fprintf(f, " x%g", d->straggler_factor);
        }
        if (d->straggler_fraction > 0)
            fprintf(f, "%sa fraction %g of the ranks drawn every iteration x%g", d->nchosen ? "; " : "",
                    d->straggler_fraction, d->straggler_factor);
        if (d->straggler_cv > 0)
            fprintf(f, "%severy rank x log-normal (mean 1, cv %g)", d->nchosen || d->straggler_fraction > 0 ? "; " : "",
                    d->straggler_cv);
        fprintf(f, " (local compute%s)\n", d->compute_s > 0 ? ", with the base compute" : "");
    }
    if (d->noise)
        fprintf(f, "    noise: %g of the time in %s detours of %s; %llu held a rank, %s in all\n", d->noise_fraction,
                d->noise_kind, secs(d->noise_length, b1, sizeof b1), (unsigned long long)d->detours,
                secs(d->detour_s, b2, sizeof b2));
    if (d->links) {
        fprintf(f, "    links: %s: %d of %d at %gx bandwidth", d->link_target, d->links_degraded, d->links_in_target,
                d->bw_factor);
        if (d->extra_latency > 0)
            fprintf(f, ", +%s latency", secs(d->extra_latency, b1, sizeof b1));
        if (d->links_degraded >= 1)
            fprintf(f, " (%s%s)", d->link_names[0], d->links_degraded > 1 ? ", ..." : "");
        fprintf(f, "\n");
    }
    if (d->background)
        fprintf(f, "    background: %s flows of %llu bytes at %g of a host's injection bandwidth between %d hosts; %llu "
                   "flows\n",
                d->bg_pattern, (unsigned long long)d->bg_flow, d->bg_load, d->bg_hosts, (unsigned long long)d->bg_flows);
    sp_report_figures fg;
    sp_report_figures_of(rep, &fg);
    double tb = sp_report_base_time(rep);
    if (tb > 0) {
        fprintf(f, "    time per iteration %s, undisturbed (same seed) %s: slowdown %.4gx\n", secs(fg.t_mean, b1, sizeof b1),
                secs(tb, b2, sizeof b2), fg.t_mean / tb);
        fprintf(f, "    phase slowdown:");
        for (int ph = 0; ph < rep->nphases; ph++) {
            double t0 = sp_report_phase_mean(rep, ph, 1), t1 = sp_report_phase_mean(rep, ph, 0);
            if (t0 > 0)
                fprintf(f, " %s %.4gx", rep->phase_names[ph], t1 / t0);
        }
        fprintf(f, "\n");
    }
    /* the slowest iteration: who ended each phase, and who was behind it */
    int worst = 0;
    for (int it = 1; it < rep->niters; it++)
        if (rep->iters[it].t_end - rep->iters[it].t_start > rep->iters[worst].t_end - rep->iters[worst].t_start)
            worst = it;
    if (rep->niters < 1)
        return;
    fprintf(f, "    who held up iteration %d (the slowest), phase by phase:\n", rep->iters[worst].index);
    for (int ph = 0; ph < rep->nphases; ph++) {
        const sp_report_crit *c = &d->crit[(size_t)worst * SP_MAX_PHASES + (size_t)ph];
        if (!(rep->iters[worst].phase_time[ph] > 0) || c->last_rank < 0)
            continue;
        fprintf(f, "      %-16s ended by rank %d", rep->phase_names[ph], c->last_rank);
        if (c->crit_rank >= 0)
            fprintf(f, "; most own work among the ranks it heard from: rank %d, %s", c->crit_rank,
                    secs(c->crit_work, b1, sizeof b1));
        if (c->msg_src >= 0)
            fprintf(f, "; their longest transfer %d->%d, %s", c->msg_src, c->msg_dst, secs(c->msg_secs, b2, sizeof b2));
        fprintf(f, "\n");
    }
}

double sp_report_message_rate(const sp_report *rep)
{
    return rep->wall_seconds > 0 ? (double)rep->total_msgs / rep->wall_seconds : 0;
}

double sp_report_wall_share(const sp_report *rep, int c)
{
    const sp_wall_profile *w = &rep->wall_profile;
    if (!w->samples || c < 0 || c >= SP_WALL_NCLASS)
        return -1;
    return (double)w->in_class[c] / (double)w->samples;
}
