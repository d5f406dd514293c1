/* replay.c - the MPI backend's events: recorded in halves, replayed whole.
 *
 * A receiver does not know when a message was posted, nor in which phase,
 * so during the run every process records halves (its sends with their
 * phase and posting time, its receives with their completion time) and its
 * phase spans and figures.  At the end rank 0 gathers them, pairs the k-th
 * send of each (src, dst, tag) with the k-th receive (MPI does not
 * overtake) and replays the whole messages, spans and figures, iteration
 * by iteration, into the driver's sink: the same accounting as the
 * simulator's.  Phase and statistic names are reconciled by name (ranks may
 * meet them in different orders).
 */
#include "mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spm_recorded spm_recorded;

void *spm_record(rec_list *l, const void *e)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        void *ne = realloc(l->e, cap * l->size);
        if (!ne) {
            spm_recorded.oom = 1;
            return NULL;
        }
        l->e = ne;
        l->cap = cap;
    }
    void *at = (char *)l->e + l->n++ * l->size;
    memcpy(at, e, l->size);
    return at;
}

/* ---- the recording sink ---- */

static void rec_message(void *to, const sp_msg_event *e)
{
    (void)to;
    (void)e; /* this backend records message halves itself */
}
static void rec_span(void *to, const sp_span_event *e)
{
    (void)to;
    spm_record(&spm_recorded.spans, e);
}
static void rec_stat(void *to, const sp_stat_event *e)
{
    (void)to;
    spm_record(&spm_recorded.stats, e);
}
static void rec_done(void *to, int iter)
{
    (void)to;
    (void)iter;
}

sp_sink spm_recording_sink(void) { return (sp_sink){rec_message, rec_span, rec_stat, rec_done, NULL}; }

void spm_recorded_reset(void)
{
    spm_recorded.seq = 0;
    spm_recorded.oom = 0;
    spm_recorded.sends.size = spm_recorded.recvs.size = sizeof(half_event);
    spm_recorded.spans.size = sizeof(sp_span_event);
    spm_recorded.stats.size = sizeof(sp_stat_event);
}

void spm_recorded_free(void)
{
    free(spm_recorded.sends.e);
    free(spm_recorded.recvs.e);
    free(spm_recorded.spans.e);
    free(spm_recorded.stats.e);
    memset(&spm_recorded.sends, 0, sizeof spm_recorded.sends);
    memset(&spm_recorded.recvs, 0, sizeof spm_recorded.recvs);
    memset(&spm_recorded.spans, 0, sizeof spm_recorded.spans);
    memset(&spm_recorded.stats, 0, sizeof spm_recorded.stats);
}

/* ---- end of run: names by name, then every event to rank 0 ---- */

#define GATHERING "gathering the run's events"

/* union of every rank's names, in rank 0's order first; map[i] = global id
 * of local name i.  -1 if memory ran out (on any rank). */
static int reconcile(const char *const *local, int nlocal, char names[][64], int max, int *map)
{
    char buf[SP_MAX_PHASES > SP_MAX_STATS ? SP_MAX_PHASES * 64 : SP_MAX_STATS * 64];
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < nlocal && i < max; i++)
        snprintf(buf + 64 * i, 64, "%s", local[i]);
    int bytes = 64 * max;
    char *all = malloc((size_t)bytes * (size_t)spm_run.size);
    int ok = all != NULL, allok = 0;
    MPI_Request rq;
    MPI_Iallreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    if (!allok) {
        free(all);
        return -1;
    }
    MPI_Iallgather(buf, bytes, MPI_CHAR, all, bytes, MPI_CHAR, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    int n = 0;
    for (int r = 0; r < spm_run.size; r++)
        for (int i = 0; i < max; i++) {
            const char *nm = all + (size_t)bytes * (size_t)r + 64 * i;
            if (!nm[0])
                continue;
            int found = 0;
            for (int j = 0; j < n && !found; j++)
                found = !strcmp(names[j], nm);
            if (!found && n < max)
                snprintf(names[n++], 64, "%s", nm);
        }
    free(all);
    for (int i = 0; i < nlocal; i++)
        for (int j = 0; j < n; j++)
            if (!strcmp(local[i], names[j]))
                map[i] = j;
    return n;
}

static int cmp_half(const void *a, const void *b)
{
    const half_event *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    if (x->iter != y->iter)
        return x->iter < y->iter ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq; /* posting order */
}

/* replay order: by iteration, then delivery time */
static int cmp_msg(const void *a, const void *b)
{
    const sp_msg_event *x = a, *y = b;
    if (x->iter != y->iter)
        return x->iter < y->iter ? -1 : 1;
    if (x->t_done != y->t_done)
        return x->t_done < y->t_done ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return x->src < y->src ? -1 : (x->src > y->src);
}

static int cmp_span(const void *a, const void *b)
{
    const sp_span_event *x = a, *y = b;
    if (x->iter != y->iter)
        return x->iter < y->iter ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->t0 < y->t0 ? -1 : (x->t0 > y->t0);
}

/* figures with their place in the gathered list: a later figure of the
 * same (iter, rank, stat) replaces an earlier one, so a rank's recording
 * order must survive the sort */
typedef struct {
    sp_stat_event e;
    size_t at;
} stat_at;

static int cmp_stat(const void *a, const void *b)
{
    const stat_at *x = a, *y = b;
    if (x->e.iter != y->e.iter)
        return x->e.iter < y->e.iter ? -1 : 1;
    if (x->e.rank != y->e.rank)
        return x->e.rank < y->e.rank ? -1 : 1;
    return x->at < y->at ? -1 : (x->at > y->at);
}

/* every rank's list to rank 0 (*total records there); NULL on rank 0 if
 * memory ran out */
static void *gather_list(const rec_list *l, size_t *total, int *ok)
{
    int mine = (int)(l->n * l->size);
    int *counts = NULL, *displs = NULL;
    void *all = NULL;
    *total = 0;
    if (spm_run.rank == 0) {
        counts = malloc((size_t)spm_run.size * sizeof *counts);
        displs = malloc((size_t)spm_run.size * sizeof *displs);
    }
    int have = spm_run.rank != 0 || (counts && displs);
    MPI_Request rq;
    MPI_Ibcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    if (!have) {
        *ok = 0;
        free(counts);
        free(displs);
        return NULL;
    }
    MPI_Igather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    if (spm_run.rank == 0) {
        size_t sum = 0;
        for (int r = 0; r < spm_run.size; r++) {
            displs[r] = (int)sum;
            sum += (size_t)counts[r];
        }
        all = malloc(sum ? sum : 1);
        *total = sum / l->size;
        have = all != NULL;
    }
    MPI_Ibcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    if (have) {
        MPI_Igatherv(l->e, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
        spm_wait_for(&rq, GATHERING, -1, 0);
    } else
        *ok = 0;
    free(counts);
    free(displs);
    return have ? all : NULL;
}

/* the result: every rank's must be the same (one hash each) */
static int results_agree(const sp_report *rep)
{
    uint64_t h = 1469598103934665603ull;
    if (rep->result)
        for (uint64_t i = 0; i < rep->n * sizeof(float); i++)
            h = (h ^ ((const unsigned char *)rep->result)[i]) * 1099511628211ull;
    uint64_t h0 = h;
    MPI_Request rq;
    MPI_Ibcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    int differ = rep->result && h != h0, anydiff = 0;
    MPI_Iallreduce(&differ, &anydiff, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    return !anydiff;
}

/* pairs sends with receives into whole messages (phases in global ids);
 * -1 with a message when the halves do not pair */
static int pair_messages(half_event *sends, size_t ns, half_event *recvs, size_t nr, sp_msg_event *out, char *err,
                         size_t errlen)
{
    qsort(sends, ns, sizeof *sends, cmp_half);
    qsort(recvs, nr, sizeof *recvs, cmp_half);
    if (ns != nr) {
        snprintf(err, errlen, "%zu messages sent but %zu received", ns, nr);
        return -1;
    }
    for (size_t i = 0; i < ns; i++) {
        const half_event *s = &sends[i], *r = &recvs[i];
        if (s->src != r->src || s->dst != r->dst || s->tag != r->tag || s->bytes != r->bytes) {
            snprintf(err, errlen, "message %d -> %d tag %d: sent %llu bytes, received %llu", s->src, s->dst, s->tag,
                     (unsigned long long)s->bytes, (unsigned long long)r->bytes);
            return -1;
        }
        /* the two times come from two clocks joined by an estimated offset,
         * whose error (a fraction of a microsecond on one machine) can put a
         * short message's completion before its posting; it cannot, so the
         * completion is held at the posting then */
        out[i] = (sp_msg_event){s->iter, s->phase, s->src, s->dst, s->tag, s->bytes, s->t, r->t < s->t ? s->t : r->t};
    }
    return 0;
}

/* rank 0: every event, iteration by iteration, into the driver's sink */
static int replay(const sp_sink *sink, const sp_report *rep, sp_msg_event *msgs, size_t nm, sp_span_event *spans, size_t nsp,
                  sp_stat_event *stats, size_t nst)
{
    stat_at *sa = malloc((nst ? nst : 1) * sizeof *sa);
    if (!sa)
        return -1;
    for (size_t i = 0; i < nst; i++)
        sa[i] = (stat_at){stats[i], i};
    qsort(sa, nst, sizeof *sa, cmp_stat);
    for (size_t i = 0; i < nst; i++)
        stats[i] = sa[i].e;
    free(sa);
    qsort(msgs, nm, sizeof *msgs, cmp_msg);
    qsort(spans, nsp, sizeof *spans, cmp_span);
    size_t im = 0, isp = 0, ist = 0;
    for (int slot = 0; slot < rep->niters; slot++) {
        int it = rep->iters[slot].index; /* events carry training iterations */
        for (; isp < nsp && spans[isp].iter == it; isp++)
            sink->span(sink->to, &spans[isp]);
        for (; im < nm && msgs[im].iter == it; im++)
            sink->message(sink->to, &msgs[im]);
        for (; ist < nst && stats[ist].iter == it; ist++)
            sink->stat(sink->to, &stats[ist]);
        sink->iteration_done(sink->to, it);
    }
    return 0;
}

int spm_gather_and_replay(sp_shim *sh, const sp_sink *driver_sink, char *err, size_t errlen)
{
    sp_report *rep = sh->rep;
    static char pnames[SP_MAX_PHASES][64], snames[SP_MAX_STATS][64];
    int pmap[SP_MAX_PHASES], smap[SP_MAX_STATS];
    int np = reconcile(rep->phase_names, rep->nphases, pnames, SP_MAX_PHASES, pmap);
    int ns = np < 0 ? -1 : reconcile(rep->stat_names, rep->nstats, snames, SP_MAX_STATS, smap);
    int ok = np >= 0 && ns >= 0 && !spm_recorded.oom, allok = 0;
    MPI_Request rq;
    MPI_Iallreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, GATHERING, -1, 0);
    if (!allok) {
        snprintf(err, errlen, "out of memory keeping the run's events");
        return 1;
    }
    for (size_t i = 0; i < spm_recorded.sends.n; i++)
        ((half_event *)spm_recorded.sends.e)[i].phase = pmap[((half_event *)spm_recorded.sends.e)[i].phase];
    for (size_t i = 0; i < spm_recorded.spans.n; i++)
        ((sp_span_event *)spm_recorded.spans.e)[i].phase = pmap[((sp_span_event *)spm_recorded.spans.e)[i].phase];
    for (size_t i = 0; i < spm_recorded.stats.n; i++)
        ((sp_stat_event *)spm_recorded.stats.e)[i].stat = smap[((sp_stat_event *)spm_recorded.stats.e)[i].stat];
    int agree = results_agree(rep);
    if (rep->residual_sum) {
        MPI_Ireduce(spm_run.rank == 0 ? MPI_IN_PLACE : rep->residual_sum, rep->residual_sum, (int)rep->n, MPI_DOUBLE,
                    MPI_SUM, 0, MPI_COMM_WORLD, &rq);
        spm_wait_for(&rq, GATHERING, -1, 0);
    }
    size_t nsend = 0, nrecv = 0, nsp = 0, nst = 0;
    half_event *sends = gather_list(&spm_recorded.sends, &nsend, &ok);
    half_event *recvs = gather_list(&spm_recorded.recvs, &nrecv, &ok);
    sp_span_event *spans = gather_list(&spm_recorded.spans, &nsp, &ok);
    sp_stat_event *stats = gather_list(&spm_recorded.stats, &nst, &ok);
    int rc = 0;
    if (!ok) {
        snprintf(err, errlen, "out of memory gathering the run's events");
        rc = 1;
    } else if (!agree) {
        snprintf(err, errlen, "ranks disagree on the global result");
        rc = 1;
    }
    if (spm_run.rank == 0 && rc == 0) {
        /* the report in global ids */
        rep->nphases = np;
        for (int p = 0; p < np; p++)
            rep->phase_names[p] = pnames[p];
        rep->nstats = ns;
        for (int s = 0; s < ns; s++)
            rep->stat_names[s] = snames[s];
        sp_msg_event *msgs = malloc((nsend ? nsend : 1) * sizeof *msgs);
        if (!msgs) {
            snprintf(err, errlen, "out of memory pairing the run's messages");
            rc = 1;
        } else if (pair_messages(sends, nsend, recvs, nrecv, msgs, err, errlen) != 0) {
            rc = 1;
        } else if (replay(driver_sink, rep, msgs, nsend, spans, nsp, stats, nst) != 0) {
            snprintf(err, errlen, "out of memory replaying the run's events");
            rc = 1;
        }
        free(msgs);
    }
    /* the others wait here while rank 0 writes messages.csv and trace.json */
    MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, "the writing of the outputs by rank 0", -1, 1);
    free(sends);
    free(recvs);
    free(spans);
    free(stats);
    return rc;
}
