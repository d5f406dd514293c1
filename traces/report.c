/* report.c - figures derived from a run's report, shared by its writers. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

void sp_report_free(sp_report *rep)
{
    free(rep->iters);
    free(rep->rank_sent);
    free(rep->rank_recv);
    free(rep->result);
    free(rep->result_sum);
    free(rep->residual_sum);
    free(rep->stat_last);
    memset(rep, 0, sizeof *rep);
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
