/* accounting.c - events into figures (see accounting.h).
 *
 * Volume "as the bounds count it" (DESIGN): per phase, the largest over
 * ranks of max(bytes sent, bytes received); a message counts as sent by its
 * source and received by its destination in the phase its sender was in.
 * Time of a phase: the largest over ranks of the time spent in it.
 * Iteration time: from the earliest span's start to the latest span's end.
 * Counters of the current iteration are folded into the report when the
 * sink hears that every rank has finished it.
 */
#include "accounting.h"
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a phase's counters share a cache line: a message touches one of its
 * sender's and one of its receiver's */
typedef struct {
    struct {
        uint64_t sent, recv;
        double time;
    } ph[SP_MAX_PHASES];
} rank_counters;

struct sp_acct {
    sp_report *rep;
    sp_csv_writer *csv;
    sp_chrome_writer *chrome;
    rank_counters *ranks;      /* P, the iteration in progress */
    double *stat_val;          /* [rank * SP_MAX_STATS + stat] */
    unsigned char *stat_set;
    double t0, t1;             /* the iteration's earliest and latest span times */
};

static void on_message(void *to, const sp_msg_event *e)
{
    sp_acct *a = to;
    sp_report *rep = a->rep;
    /* one end may be a node's switch (SP_SWITCH_END): the rank at the other
     * end sends or receives it all the same, over its port to the switch */
    int src_ok = e->src >= 0 && e->src < rep->nranks, dst_ok = e->dst >= 0 && e->dst < rep->nranks;
    if (e->phase >= 0 && e->phase < SP_MAX_PHASES && (src_ok || dst_ok) && e->src < rep->nranks &&
        e->dst < rep->nranks) {
        if (src_ok) {
            a->ranks[e->src].ph[e->phase].sent += e->bytes;
            rep->rank_sent[e->src] += e->bytes;
        }
        if (dst_ok) {
            a->ranks[e->dst].ph[e->phase].recv += e->bytes;
            rep->rank_recv[e->dst] += e->bytes;
        }
        if (src_ok && dst_ok && rep->gpus_per_node && e->src / rep->gpus_per_node != e->dst / rep->gpus_per_node) {
            rep->rank_sent_off[e->src] += e->bytes;
            rep->rank_recv_off[e->dst] += e->bytes;
        }
    }
    int slot = sp_report_slot(rep, e->iter);
    if (slot >= 0) {
        rep->iters[slot].msgs++;
        rep->iters[slot].bytes += e->bytes;
    }
    rep->total_msgs++;
    rep->total_bytes += e->bytes;
    sp_progress_message(slot, e->phase >= 0 && e->phase < rep->nphases ? rep->phase_names[e->phase] : "", e->t_done);
    if (a->csv)
        sp_csv_write(a->csv, e);
    if (a->chrome)
        sp_chrome_msg(a->chrome, e);
}

static void on_span(void *to, const sp_span_event *e)
{
    sp_acct *a = to;
    if (e->rank < 0 || e->rank >= a->rep->nranks || e->phase < 0 || e->phase >= SP_MAX_PHASES)
        return;
    a->ranks[e->rank].ph[e->phase].time += e->t1 - e->t0;
    if (e->t0 < a->t0)
        a->t0 = e->t0;
    if (e->t1 > a->t1)
        a->t1 = e->t1;
    if (a->chrome)
        sp_chrome_span(a->chrome, e);
}

static void on_stat(void *to, const sp_stat_event *e)
{
    sp_acct *a = to;
    if (e->rank < 0 || e->rank >= a->rep->nranks || e->stat < 0 || e->stat >= SP_MAX_STATS)
        return;
    size_t at = (size_t)e->rank * SP_MAX_STATS + (size_t)e->stat;
    a->stat_val[at] = e->value; /* a later one replaces it */
    a->stat_set[at] = 1;
}

static void on_iteration_done(void *to, int it)
{
    sp_acct *a = to;
    sp_report *rep = a->rep;
    int slot = sp_report_slot(rep, it);
    if (slot < 0)
        return;
    sp_progress_iteration(slot);
    sp_iter_stats *st = &rep->iters[slot];
    st->t_start = isfinite(a->t0) ? a->t0 : 0;
    st->t_end = isfinite(a->t1) ? a->t1 : st->t_start;
    for (int r = 0; r < rep->nranks; r++) {
        rank_counters *rc = &a->ranks[r];
        for (int ph = 0; ph < rep->nphases; ph++) {
            uint64_t s = rc->ph[ph].sent, v = rc->ph[ph].recv;
            if (rc->ph[ph].time > st->phase_time[ph])
                st->phase_time[ph] = rc->ph[ph].time;
            if ((s > v ? s : v) > st->phase_volume[ph])
                st->phase_volume[ph] = s > v ? s : v;
            if (s > st->phase_sent_max[ph])
                st->phase_sent_max[ph] = s;
            if (v > st->phase_recv_max[ph])
                st->phase_recv_max[ph] = v;
        }
        memset(rc, 0, sizeof *rc);
        for (int i = 0; i < rep->nstats; i++) {
            size_t at = (size_t)r * SP_MAX_STATS + (size_t)i;
            if (!a->stat_set[at])
                continue;
            double v = a->stat_val[at];
            if (st->stat_count[i] == 0 || v < st->stat_min[i])
                st->stat_min[i] = v;
            if (st->stat_count[i] == 0 || v > st->stat_max[i])
                st->stat_max[i] = v;
            st->stat_sum[i] += v;
            st->stat_count[i]++;
            rep->stat_last[(size_t)i * (size_t)rep->nranks + (size_t)r] = v;
            a->stat_set[at] = 0;
        }
    }
    a->t0 = INFINITY;
    a->t1 = -INFINITY;
}

sp_acct *sp_acct_open(sp_report *rep, sp_csv_writer *csv, sp_chrome_writer *chrome)
{
    sp_acct *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    size_t P = (size_t)rep->nranks;
    a->rep = rep;
    a->csv = csv;
    a->chrome = chrome;
    a->ranks = calloc(P, sizeof *a->ranks);
    a->stat_val = calloc(P * SP_MAX_STATS, sizeof *a->stat_val);
    a->stat_set = calloc(P * SP_MAX_STATS, 1);
    a->t0 = INFINITY;
    a->t1 = -INFINITY;
    if (!a->ranks || !a->stat_val || !a->stat_set) {
        sp_acct_close(a);
        return NULL;
    }
    return a;
}

sp_sink sp_acct_sink(sp_acct *a) { return (sp_sink){on_message, on_span, on_stat, on_iteration_done, a}; }

void sp_acct_close(sp_acct *a)
{
    if (!a)
        return;
    free(a->ranks);
    free(a->stat_val);
    free(a->stat_set);
    free(a);
}
