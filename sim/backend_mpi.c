/* backend_mpi.c - the shim on real MPI: one process per rank.
 *
 * The same algorithm code runs unchanged: point to point is MPI_Isend and
 * MPI_Irecv (MPI's own matching and non-overtaking order), the collectives
 * are the shim's own, so the message list equals the simulated one.  Local
 * kernels really run and take real time; sp_compute charges nothing.
 *
 * Time: each rank estimates its clock offset to rank 0 with a few
 * ping-pongs (the one with the shortest round trip wins), and rank 0 fixes a
 * common origin, so the timelines of all ranks line up.  Iterations start
 * after an MPI_Barrier (untraced), as in the reference codes.
 *
 * Records: every rank keeps its sends (iter, phase, dst, tag, bytes, t_post)
 * and its receives (src, tag, bytes, t_done); at the end rank 0 gathers them,
 * pairs the k-th send of each (src, dst, tag) with the k-th receive (MPI
 * does not overtake), recomputes the per-phase volumes from the pairs exactly
 * as the simulator counts them, and writes the outputs.  Phase and statistic
 * names are reconciled by name (ranks may meet them in different orders).
 *
 * A wait that makes no progress for --watchdog seconds ends the job with a
 * message naming the rank, phase and iteration (a receive that can never be
 * matched would otherwise hang it).
 */
#include "internal.h"
#include "../topologies/platform.h"

#include <mpi.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sp_req {
    MPI_Request mpi;
    int is_send, peer, tag;
    size_t cap;
    size_t rec; /* receives: its record in M.recvs */
    struct sp_req *next_free;
};

typedef struct {
    int iter, phase, src, dst, tag;
    uint32_t seq; /* posting order on the rank that recorded it */
    uint64_t bytes;
    double t;
} rec_event;

typedef struct {
    rec_event *e;
    size_t n, cap;
} rec_list;

static struct {
    int rank, size;
    double offset, origin; /* local clock + offset - origin = common time */
    double watchdog;       /* seconds without progress before giving up */
    rec_list sends, recvs;
    uint32_t seq;
    sp_span_event *spans;
    size_t nspans, capspans;
} M;

const char *sp_backend_name(void) { return "mpi"; }

int sp_backend_is_root(void)
{
    int r = 0, init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

void sp_mpi_set_watchdog(double seconds) { M.watchdog = seconds; }

static double mpi_now(const sp_ctx *c)
{
    (void)c;
    return MPI_Wtime() + M.offset - M.origin;
}

static void push(rec_list *l, const rec_event *e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->e = realloc(l->e, l->cap * sizeof *l->e);
    }
    l->e[l->n++] = *e;
}

/* Size-only payloads travel through one zeroed buffer per process, grown as
 * needed: sends only read it, and receives into it discard what arrives
 * (their contents are never looked at). */
static char *scratch;
static size_t scratch_cap;
static char *retired[64]; /* smaller buffers that pending requests may still use */
static int nretired;

static void *scratch_buf(size_t bytes)
{
    if (bytes > scratch_cap) {
        if (scratch && nretired < 64)
            retired[nretired++] = scratch; /* freed at the end of the run */
        scratch_cap = bytes * 2;
        scratch = calloc(1, scratch_cap);
        if (!scratch)
            scratch_cap = 0;
    }
    return scratch;
}

/* The watchdog: a wait that blocks longer than --watchdog seconds ends this
 * process with a message (mpirun then ends the job).  A wait costs no
 * system call: it raises a flag and bumps a counter, and an interval timer
 * ticks four times per watchdog period; the handler gives up when it finds
 * the same wait still blocked, with no completion, for four ticks in a row
 * (so after one to one and a quarter periods).  The handler formats its
 * message with async-signal-safe code from fields the wait left behind. */
static volatile sig_atomic_t wd_waiting;
static volatile unsigned wd_done; /* bumped as waits start and end; wraps */
static volatile int wd_rank, wd_iter;
static const char *volatile wd_phase;

static size_t put_str(char *b, size_t at, size_t cap, const char *s)
{
    while (s && *s && at + 1 < cap)
        b[at++] = *s++;
    return at;
}

static size_t put_int(char *b, size_t at, size_t cap, long v)
{
    char d[24];
    int n = 0;
    unsigned long u = v < 0 ? (unsigned long)(-v) : (unsigned long)v;
    do
        d[n++] = (char)('0' + u % 10);
    while ((u /= 10) && n < 23);
    if (v < 0 && at + 1 < cap)
        b[at++] = '-';
    while (n && at + 1 < cap)
        b[at++] = d[--n];
    return at;
}

static void on_alarm(int sig)
{
    (void)sig;
    static unsigned seen;
    static int idle;
    if (!wd_waiting || wd_done != seen) {
        seen = wd_done;
        idle = 0;
        return;
    }
    if (++idle < 4)
        return;
    char m[512];
    size_t n = put_str(m, 0, sizeof m, "sparsim-mpi: rank ");
    n = put_int(m, n, sizeof m, wd_rank);
    n = put_str(m, n, sizeof m, " waited ");
    n = put_int(m, n, sizeof m, (long)(M.watchdog + 0.5));
    n = put_str(m, n, sizeof m, " s without progress in phase ");
    n = put_str(m, n, sizeof m, wd_phase);
    n = put_str(m, n, sizeof m, " of iteration ");
    n = put_int(m, n, sizeof m, wd_iter);
    n = put_str(m, n, sizeof m, ": a receive that can never be matched, or a send nobody receives\n");
    ssize_t w = write(2, m, n);
    (void)w;
    sp_part_remove_all();
    _exit(1);
}

static void start_watchdog(void)
{
#ifndef SPARSIM_SMPI /* under smpirun every rank shares one process and its timer */
    if (M.watchdog <= 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    double tick = M.watchdog / 4;
    struct itimerval it;
    it.it_interval.tv_sec = (time_t)tick;
    it.it_interval.tv_usec = (suseconds_t)((tick - (double)(time_t)tick) * 1e6);
    if (!it.it_interval.tv_sec && it.it_interval.tv_usec < 1000)
        it.it_interval.tv_usec = 1000;
    it.it_value = it.it_interval;
    setitimer(ITIMER_REAL, &it, NULL);
#endif
}

static void stop_watchdog(void)
{
#ifndef SPARSIM_SMPI
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
#endif
}

/* requests come from a free list; one process runs one rank */
static sp_req *free_reqs;

static sp_req *req_new(void)
{
    sp_req *r = free_reqs;
    if (r) {
        free_reqs = r->next_free;
        memset(r, 0, sizeof *r);
        return r;
    }
    return calloc(1, sizeof *r);
}

static void req_free(sp_req *r)
{
    r->next_free = free_reqs;
    free_reqs = r;
}

static sp_req *mpi_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post)
{
    sp_req *r = req_new();
    if (!r)
        return NULL;
    r->is_send = 1;
    r->peer = dst;
    r->tag = tag;
    r->cap = bytes;
    if (!buf && bytes)
        buf = scratch_buf(bytes);
    if (bytes > (size_t)0x7fffffff) {
        sp_fail(c->run, "rank %d: a message of %zu bytes is more than MPI's int count allows", c->rank, bytes);
        req_free(r);
        return NULL;
    }
    MPI_Isend(buf, (int)bytes, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &r->mpi);
    (void)t_post; /* the shim leaves it 0 on ranks that write no trace; every send is recorded here */
    rec_event e = {c->iter, c->phase, c->rank, dst, tag, M.seq++, bytes, mpi_now(c)};
    push(&M.sends, &e);
    return r;
}

static sp_req *mpi_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    sp_req *r = req_new();
    if (!r)
        return NULL;
    r->peer = src;
    r->tag = tag;
    r->cap = cap;
    if (!buf)
        buf = scratch_buf(cap);
    MPI_Irecv(buf, (int)cap, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r->mpi);
    /* recorded in posting order, which is MPI's matching order for one (src, tag) */
    rec_event e = {c->iter, -1, src, c->rank, tag, M.seq++, 0, 0};
    r->rec = M.recvs.n;
    push(&M.recvs, &e);
    return r;
}

static MPI_Request *mr; /* the requests of a waitall, reused */
static int mrcap;

static int mpi_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    if (n > mrcap) {
        int cap = n > 2 * mrcap ? n : 2 * mrcap;
        MPI_Request *a = realloc(mr, (size_t)cap * sizeof *a);
        if (!a)
            return SP_ERR_MEM;
        mr = a;
        mrcap = cap;
    }
    int left = 0;
    for (int i = 0; i < n; i++) {
        mr[i] = reqs[i] ? reqs[i]->mpi : MPI_REQUEST_NULL;
        left += reqs[i] != NULL;
    }
    wd_rank = c->rank;
    wd_iter = c->iter;
    wd_phase = c->run->rep->phase_names[c->phase];
    while (left > 0) {
        int idx;
        MPI_Status one;
        wd_done++; /* a wait starts: the next tick begins its count afresh */
        wd_waiting = 1;
        MPI_Waitany(n, mr, &idx, &one);
        wd_waiting = 0;
        wd_done++;
        if (idx == MPI_UNDEFINED)
            break;
        left--;
        sp_req *r = reqs[idx];
        if (!r->is_send) {
            int cnt = 0;
            MPI_Get_count(&one, MPI_BYTE, &cnt);
            /* a message larger than the buffer is MPI_ERR_TRUNCATE, fatal under MPI's default handler */
            M.recvs.e[r->rec].bytes = (uint64_t)cnt;
            M.recvs.e[r->rec].t = mpi_now(c);
            if (sizes)
                sizes[idx] = (size_t)cnt;
        } else if (sizes) {
            sizes[idx] = r->cap;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!reqs[i]) {
            if (sizes)
                sizes[i] = 0;
            continue;
        }
        req_free(reqs[i]);
        reqs[i] = NULL;
    }
    return SP_OK;
}

static void mpi_advance(sp_ctx *c, double seconds)
{
    (void)c;
    (void)seconds; /* the kernel really ran: its time has passed already */
}

static void mpi_barrier(sp_ctx *c)
{
    (void)c;
    MPI_Barrier(MPI_COMM_WORLD);
}

static const sp_backend mpi_backend = {"mpi", mpi_isend, mpi_irecv, mpi_waitall, mpi_now, mpi_advance, mpi_barrier};

static void on_span(sp_ctx *c, const sp_span_event *e)
{
    (void)c;
    if (M.nspans == M.capspans) {
        M.capspans = M.capspans ? 2 * M.capspans : 256;
        M.spans = realloc(M.spans, M.capspans * sizeof *M.spans);
    }
    M.spans[M.nspans++] = *e;
}

/* offset to rank 0's clock: the ping-pong with the shortest round trip */
static void align_clocks(void)
{
    const int rounds = 8;
    M.offset = 0;
    for (int r = 1; r < M.size; r++) {
        if (M.rank == 0) {
            for (int i = 0; i < rounds; i++) {
                double t;
                MPI_Recv(&t, 1, MPI_DOUBLE, r, 7001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t = MPI_Wtime();
                MPI_Send(&t, 1, MPI_DOUBLE, r, 7002, MPI_COMM_WORLD);
            }
        } else if (M.rank == r) {
            double best = 1e30;
            for (int i = 0; i < rounds; i++) {
                double t1 = MPI_Wtime(), t2;
                MPI_Send(&t1, 1, MPI_DOUBLE, 0, 7001, MPI_COMM_WORLD);
                MPI_Recv(&t2, 1, MPI_DOUBLE, 0, 7002, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t3 = MPI_Wtime();
                if (t3 - t1 < best) {
                    best = t3 - t1;
                    M.offset = t2 - (t1 + t3) / 2;
                }
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double origin = MPI_Wtime() + M.offset;
    MPI_Bcast(&origin, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    M.origin = origin;
}

/* ---- end of run: names by name, then everything to rank 0 -------------- */

/* union of every rank's names, in rank 0's order first; map[i] = global id
 * of local name i */
static int reconcile(const char *const *local, int nlocal, char names[][64], int max, int *map)
{
    char buf[SP_MAX_PHASES > SP_MAX_STATS ? SP_MAX_PHASES * 64 : SP_MAX_STATS * 64];
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < nlocal && i < max; i++)
        snprintf(buf + 64 * i, 64, "%s", local[i]);
    int bytes = 64 * max;
    char *all = malloc((size_t)bytes * (size_t)M.size);
    MPI_Allgather(buf, bytes, MPI_CHAR, all, bytes, MPI_CHAR, MPI_COMM_WORLD);
    int n = 0;
    for (int r = 0; r < M.size; r++)
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

static int cmp_send(const void *a, const void *b)
{
    const rec_event *x = a, *y = b;
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

static int cmp_done(const void *a, const void *b)
{
    const sp_msg_event *x = a, *y = b;
    if (x->t_done != y->t_done)
        return x->t_done < y->t_done ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return x->src < y->src ? -1 : (x->src > y->src);
}

static rec_event *gather_list(const rec_list *l, size_t *total)
{
    int mine = (int)(l->n * sizeof(rec_event));
    int *counts = M.rank == 0 ? malloc((size_t)M.size * sizeof *counts) : NULL;
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int *displs = NULL;
    rec_event *all = NULL;
    if (M.rank == 0) {
        displs = malloc((size_t)M.size * sizeof *displs);
        size_t sum = 0;
        for (int r = 0; r < M.size; r++) {
            displs[r] = (int)sum;
            sum += (size_t)counts[r];
        }
        all = malloc(sum ? sum : 1);
        *total = sum / sizeof(rec_event);
    }
    MPI_Gatherv(l->e, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    return all;
}

static void reduce_doubles(double *v, int n, MPI_Op op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, MPI_COMM_WORLD);
}

static int finish(sp_runstate *rs, sp_ctx *c, char *err, size_t errlen)
{
    sp_report *rep = rs->rep;
    int I = rep->niters, P = M.size;
    /* phases and statistics by name */
    static char pnames[SP_MAX_PHASES][64], snames[SP_MAX_STATS][64];
    int pmap[SP_MAX_PHASES], smap[SP_MAX_STATS];
    int np = reconcile(rep->phase_names, rep->nphases, pnames, SP_MAX_PHASES, pmap);
    int ns = reconcile(rep->stat_names, rep->nstats, snames, SP_MAX_STATS, smap);
    for (size_t i = 0; i < M.sends.n; i++)
        M.sends.e[i].phase = pmap[M.sends.e[i].phase];
    for (size_t i = 0; i < M.nspans; i++)
        M.spans[i].phase = pmap[M.spans[i].phase];
    /* per-iteration figures: remap to global ids, then reduce */
    size_t per = 2 + SP_MAX_PHASES + 2 * SP_MAX_STATS;
    double *v = calloc((size_t)I * per, sizeof *v);
    for (size_t i = 0; i < (size_t)I * per; i++) /* statistics a rank did not record must not win */
        if ((i % per) >= 2 + SP_MAX_PHASES)
            v[i] = -1e300;
    for (int it = 0; it < I; it++) {
        sp_iter_stats *st = &rep->iters[it];
        double *x = v + (size_t)it * per;
        x[0] = -st->t_start; /* max of -start = -min start */
        x[1] = st->t_end;
        for (int p = 0; p < rep->nphases; p++)
            x[2 + pmap[p]] = st->phase_time[p];
        for (int s = 0; s < rep->nstats; s++) {
            if (!st->stat_count[s])
                continue;
            x[2 + SP_MAX_PHASES + smap[s]] = -st->stat_min[s];
            x[2 + SP_MAX_PHASES + SP_MAX_STATS + smap[s]] = st->stat_max[s];
        }
    }
    reduce_doubles(v, I * (int)per, MPI_MAX);
    double *sums = calloc((size_t)I * 2 * SP_MAX_STATS, sizeof *sums);
    for (int it = 0; it < I; it++)
        for (int s = 0; s < rep->nstats; s++) {
            sums[(size_t)it * 2 * SP_MAX_STATS + smap[s]] = rep->iters[it].stat_sum[s];
            sums[(size_t)it * 2 * SP_MAX_STATS + SP_MAX_STATS + smap[s]] = rep->iters[it].stat_count[s];
        }
    reduce_doubles(sums, I * 2 * SP_MAX_STATS, MPI_SUM);
    /* stat_last: every rank's last values, by global id */
    double *last = calloc((size_t)SP_MAX_STATS * (size_t)P, sizeof *last);
    for (int s = 0; s < rep->nstats; s++)
        last[(size_t)smap[s] * (size_t)P + (size_t)M.rank] = rep->stat_last[(size_t)s * (size_t)P + (size_t)M.rank];
    reduce_doubles(last, SP_MAX_STATS * P, MPI_SUM);
    /* the result: every rank's must be the same */
    uint64_t h = 1469598103934665603ull;
    if (rep->result)
        for (uint64_t i = 0; i < rep->n * sizeof(float); i++)
            h = (h ^ ((unsigned char *)rep->result)[i]) * 1099511628211ull;
    uint64_t h0 = h;
    MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int differ = rep->result && h != h0, anydiff = 0;
    MPI_Allreduce(&differ, &anydiff, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rep->residual_sum)
        MPI_Reduce(M.rank == 0 ? MPI_IN_PLACE : rep->residual_sum, rep->residual_sum, (int)rep->n, MPI_DOUBLE,
                   MPI_SUM, 0, MPI_COMM_WORLD);
    size_t nsend = 0, nrecv = 0;
    rec_event *sends = gather_list(&M.sends, &nsend);
    rec_event *recvs = gather_list(&M.recvs, &nrecv);
    /* spans: gathered as bytes */
    int mine = (int)(M.nspans * sizeof(sp_span_event));
    int *counts = M.rank == 0 ? malloc((size_t)P * sizeof *counts) : NULL, *displs = NULL;
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    sp_span_event *spans = NULL;
    size_t nsp = 0;
    if (M.rank == 0) {
        displs = malloc((size_t)P * sizeof *displs);
        size_t sum = 0;
        for (int r = 0; r < P; r++) {
            displs[r] = (int)sum;
            sum += (size_t)counts[r];
        }
        spans = malloc(sum ? sum : 1);
        nsp = sum / sizeof(sp_span_event);
    }
    MPI_Gatherv(M.spans, mine, MPI_BYTE, spans, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    int rc = 0;
    if (anydiff) {
        snprintf(err, errlen, "ranks disagree on the global result");
        rc = 1;
    }
    if (M.rank == 0 && rc == 0) {
        /* the report in global ids */
        rep->nphases = np;
        for (int p = 0; p < np; p++)
            rep->phase_names[p] = pnames[p];
        rep->nstats = ns;
        for (int s = 0; s < ns; s++)
            rep->stat_names[s] = snames[s];
        for (int it = 0; it < I; it++) {
            sp_iter_stats *st = &rep->iters[it];
            double *x = v + (size_t)it * per;
            uint64_t msgs = st->msgs, bytes = st->bytes;
            memset(st, 0, sizeof *st);
            st->msgs = msgs;
            st->bytes = bytes;
            st->t_start = -x[0];
            st->t_end = x[1];
            for (int p = 0; p < np; p++)
                st->phase_time[p] = x[2 + p];
            for (int s = 0; s < ns; s++) {
                st->stat_count[s] = (int)sums[(size_t)it * 2 * SP_MAX_STATS + SP_MAX_STATS + s];
                st->stat_sum[s] = sums[(size_t)it * 2 * SP_MAX_STATS + s];
                st->stat_min[s] = st->stat_count[s] ? -x[2 + SP_MAX_PHASES + s] : 0;
                st->stat_max[s] = st->stat_count[s] ? x[2 + SP_MAX_PHASES + SP_MAX_STATS + s] : 0;
            }
        }
        memcpy(rep->stat_last, last, (size_t)SP_MAX_STATS * (size_t)P * sizeof *last);
        /* pair the k-th send of (src, dst, tag, iter) with the k-th receive */
        qsort(sends, nsend, sizeof *sends, cmp_send);
        qsort(recvs, nrecv, sizeof *recvs, cmp_send);
        if (nsend != nrecv) {
            snprintf(err, errlen, "%zu messages sent but %zu received", nsend, nrecv);
            rc = 1;
        }
        sp_msg_event *ev = malloc((nsend ? nsend : 1) * sizeof *ev);
        uint64_t *ph = calloc((size_t)I * (size_t)P * SP_MAX_PHASES * 2, sizeof *ph); /* [it][rank][phase][sent,recv] */
        memset(rep->rank_sent, 0, (size_t)P * sizeof *rep->rank_sent);
        memset(rep->rank_recv, 0, (size_t)P * sizeof *rep->rank_recv);
        rep->total_msgs = rep->total_bytes = 0;
        for (int it = 0; it < I; it++)
            rep->iters[it].msgs = rep->iters[it].bytes = 0;
        for (size_t i = 0; i < nsend && rc == 0; i++) {
            const rec_event *s = &sends[i], *r = &recvs[i];
            if (s->src != r->src || s->dst != r->dst || s->tag != r->tag || s->bytes != r->bytes) {
                snprintf(err, errlen, "message %d -> %d tag %d: sent %llu bytes, received %llu", s->src, s->dst,
                         s->tag, (unsigned long long)s->bytes, (unsigned long long)r->bytes);
                rc = 1;
                break;
            }
            ev[i] = (sp_msg_event){s->iter, s->phase, s->src, s->dst, s->tag, s->bytes, s->t, r->t};
            size_t base = ((size_t)s->iter * (size_t)P) * SP_MAX_PHASES * 2;
            ph[base + ((size_t)s->src * SP_MAX_PHASES + (size_t)s->phase) * 2] += s->bytes;
            ph[base + ((size_t)s->dst * SP_MAX_PHASES + (size_t)s->phase) * 2 + 1] += s->bytes;
            rep->rank_sent[s->src] += s->bytes;
            rep->rank_recv[s->dst] += s->bytes;
            rep->iters[s->iter].msgs++;
            rep->iters[s->iter].bytes += s->bytes;
            rep->total_msgs++;
            rep->total_bytes += s->bytes;
        }
        for (int it = 0; it < I && rc == 0; it++)
            for (int r = 0; r < P; r++)
                for (int p = 0; p < np; p++) {
                    size_t at = (((size_t)it * (size_t)P + (size_t)r) * SP_MAX_PHASES + (size_t)p) * 2;
                    uint64_t sent = ph[at], recv = ph[at + 1], vol = sent > recv ? sent : recv;
                    sp_iter_stats *st = &rep->iters[it];
                    if (vol > st->phase_volume[p])
                        st->phase_volume[p] = vol;
                    if (sent > st->phase_sent_max[p])
                        st->phase_sent_max[p] = sent;
                    if (recv > st->phase_recv_max[p])
                        st->phase_recv_max[p] = recv;
                }
        if (rc == 0) {
            qsort(ev, nsend, sizeof *ev, cmp_done);
            for (size_t i = 0; i < nsend; i++) {
                if (rs->csv)
                    sp_csv_write(rs->csv, &ev[i]);
                if (rs->chrome)
                    sp_chrome_msg(rs->chrome, &ev[i]);
            }
            for (size_t i = 0; rs->chrome && i < nsp; i++)
                sp_chrome_span(rs->chrome, &spans[i]);
        }
        free(ev);
        free(ph);
    }
    int anyfail = rc;
    MPI_Bcast(&anyfail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(sends);
    free(recvs);
    free(spans);
    free(v);
    free(sums);
    free(last);
    (void)c;
    return anyfail ? 1 : 0;
}

int sp_backend_run(sp_runstate *rs, char *err, size_t errlen)
{
    const sp_plan *plan = rs->plan;
    MPI_Comm_rank(MPI_COMM_WORLD, &M.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &M.size);
    if (M.size != plan->ranks) {
        snprintf(err, errlen, "--ranks is %d but the job has %d processes (mpirun -np)", plan->ranks, M.size);
        return 2;
    }
    if (M.watchdog == 0)
        M.watchdog = 60;
    M.seq = 0;
    start_watchdog();
    /* mpirun ends the other ranks with SIGTERM when one fails */
    sp_part_cleanup_on_signals();
    align_clocks();
    int anytrace = rs->chrome != NULL;
    MPI_Bcast(&anytrace, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (anytrace)
        rs->on_span = on_span; /* every rank keeps its spans for rank 0 */
    /* the routing facts of the network are unknown here */
    rs->rep->alpha = rs->rep->beta = 0;
    sp_ctx *c = calloc(1, sizeof *c);
    c->rank = M.rank;
    c->size = M.size;
    c->be = &mpi_backend;
    c->run = rs;
    sp_rank_main(c);
    stop_watchdog();
    int failed = rs->failed, anyfailed = 0;
    MPI_Allreduce(&failed, &anyfailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rc = 0;
    if (anyfailed) {
        /* the first failing rank's message, through rank 0 */
        char msg[256];
        snprintf(msg, sizeof msg, "%s", failed ? rs->errmsg : "");
        int who = failed ? M.rank : M.size, first = 0;
        MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
        snprintf(err, errlen, "%s", msg);
        rs->failed = 1;
        rc = 1;
    } else {
        rc = finish(rs, c, err, errlen);
    }
    free(c);
    while (free_reqs) {
        sp_req *r = free_reqs;
        free_reqs = r->next_free;
        free(r);
    }
    free(mr);
    mr = NULL;
    mrcap = 0;
    for (int i = 0; i < nretired; i++)
        free(retired[i]);
    nretired = 0;
    free(M.sends.e);
    free(M.recvs.e);
    free(M.spans);
    memset(&M.sends, 0, sizeof M.sends);
    memset(&M.recvs, 0, sizeof M.recvs);
    M.spans = NULL;
    M.nspans = M.capspans = 0;
    return rc;
}
