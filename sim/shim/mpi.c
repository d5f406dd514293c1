/* mpi.c - the shim on real MPI: one process per rank.
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
 * Events: a receiver does not know when a message was posted, nor in which
 * phase, so during the run every process records halves (its sends with
 * their phase and posting time, its receives with their completion time) and
 * its phase spans and figures.  At the end rank 0 gathers them, pairs the
 * k-th send of each (src, dst, tag) with the k-th receive (MPI does not
 * overtake) and replays the whole messages, spans and figures, iteration by
 * iteration, into the driver's sink: the same accounting as the simulator's.
 * Phase and statistic names are reconciled by name (ranks may meet them in
 * different orders).
 *
 * A wait that makes no progress for --watchdog seconds ends the job with a
 * message naming the rank, phase and iteration (a receive that can never be
 * matched would otherwise hang it).
 */
#include "backend.h"

#include <mpi.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>
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

/* half a message, as one side saw it */
typedef struct {
    int iter, phase, src, dst, tag;
    uint32_t seq; /* posting order on the rank that recorded it */
    uint64_t bytes;
    double t;
} half_event;

/* a growable array of fixed-size records */
typedef struct {
    void *e;
    size_t n, cap, size;
} rec_list;

#define RETIRED_MAX 64

/* Everything this backend keeps: one process runs one rank. */
static struct {
    int rank, size;
    double offset, origin; /* local clock + offset - origin = common time */
    double watchdog;       /* seconds without progress before giving up */
    rec_list sends, recvs, spans, stats;
    uint32_t seq;
    int oom;               /* a record could not be kept: the run fails at the end */
    /* size-only payloads travel through one zeroed buffer, grown as needed:
     * sends only read it, and receives into it discard what arrives; smaller
     * ones that pending requests may still use are freed at the end */
    char *scratch;
    size_t scratch_cap;
    char *retired[RETIRED_MAX];
    int nretired;
    sp_req *free_reqs;     /* requests are recycled */
    MPI_Request *mr;       /* the requests of a waitall, reused */
    int mrcap;
    /* the watchdog, read by its signal handler */
    volatile sig_atomic_t wd_waiting;
    volatile unsigned wd_done; /* bumped as waits start and end; wraps */
    volatile int wd_rank, wd_iter;
    const char *volatile wd_phase;
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

static double mpi_now(const sp_ctx *c)
{
    (void)c;
    return MPI_Wtime() + M.offset - M.origin;
}

static void *push(rec_list *l, const void *e)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        void *ne = realloc(l->e, cap * l->size);
        if (!ne) {
            M.oom = 1;
            return NULL;
        }
        l->e = ne;
        l->cap = cap;
    }
    void *at = (char *)l->e + l->n++ * l->size;
    memcpy(at, e, l->size);
    return at;
}

static void *scratch_buf(size_t bytes)
{
    if (bytes > M.scratch_cap) {
        /* the buffer at least doubles each time, so 64 slots outlast any size */
        if (M.scratch && M.nretired < RETIRED_MAX)
            M.retired[M.nretired++] = M.scratch;
        M.scratch_cap = bytes * 2;
        M.scratch = calloc(1, M.scratch_cap);
        if (!M.scratch)
            M.scratch_cap = 0;
    }
    return M.scratch;
}

/* ---- the watchdog ---------------------------------------------------------
 * A wait that blocks longer than --watchdog seconds ends this process with a
 * message (mpirun then ends the job).  A wait costs no system call: it raises
 * a flag and bumps a counter, and an interval timer ticks four times per
 * watchdog period; the handler gives up when it finds the same wait still
 * blocked, with no completion, for four ticks in a row (so after one to one
 * and a quarter periods).  It formats its message with async-signal-safe code
 * from fields the wait left behind. */

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
    if (!M.wd_waiting || M.wd_done != seen) {
        seen = M.wd_done;
        idle = 0;
        return;
    }
    if (++idle < 4)
        return;
    char m[512];
    size_t n = put_str(m, 0, sizeof m, "sparsim-mpi: rank ");
    n = put_int(m, n, sizeof m, M.wd_rank);
    n = put_str(m, n, sizeof m, " waited ");
    n = put_int(m, n, sizeof m, (long)(M.watchdog + 0.5));
    n = put_str(m, n, sizeof m, " s without progress in phase ");
    n = put_str(m, n, sizeof m, M.wd_phase);
    n = put_str(m, n, sizeof m, " of iteration ");
    n = put_int(m, n, sizeof m, M.wd_iter);
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

/* ---- point to point ------------------------------------------------------ */

static sp_req *req_new(void)
{
    sp_req *r = M.free_reqs;
    if (r) {
        M.free_reqs = r->next_free;
        memset(r, 0, sizeof *r);
        return r;
    }
    return calloc(1, sizeof *r);
}

static void req_free(sp_req *r)
{
    r->next_free = M.free_reqs;
    M.free_reqs = r;
}

static sp_req *mpi_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post)
{
    (void)t_post; /* the shim leaves it 0 on ranks that write no trace; every send is timed here */
    if (bytes > (size_t)0x7fffffff) {
        sp_fail(c->shim, "rank %d: a message of %zu bytes is more than MPI's int count allows", c->rank, bytes);
        return NULL;
    }
    if (!buf && bytes && !(buf = scratch_buf(bytes)))
        return NULL;
    sp_req *r = req_new();
    if (!r)
        return NULL;
    r->is_send = 1;
    r->peer = dst;
    r->tag = tag;
    r->cap = bytes;
    MPI_Isend(buf, (int)bytes, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &r->mpi);
    half_event e = {c->iter, c->phase, c->rank, dst, tag, M.seq++, bytes, mpi_now(c)};
    push(&M.sends, &e);
    return r;
}

static sp_req *mpi_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    if (cap > (size_t)0x7fffffff) {
        sp_fail(c->shim, "rank %d: a receive of %zu bytes is more than MPI's int count allows", c->rank, cap);
        return NULL;
    }
    if (!buf && cap && !(buf = scratch_buf(cap)))
        return NULL;
    sp_req *r = req_new();
    if (!r)
        return NULL;
    r->peer = src;
    r->tag = tag;
    r->cap = cap;
    MPI_Irecv(buf, (int)cap, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r->mpi);
    /* recorded in posting order, which is MPI's matching order for one (src, tag) */
    half_event e = {c->iter, -1, src, c->rank, tag, M.seq++, 0, 0};
    r->rec = M.recvs.n;
    if (!push(&M.recvs, &e))
        r->rec = (size_t)-1;
    return r;
}

static int mpi_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    if (n > M.mrcap) {
        int cap = n > 2 * M.mrcap ? n : 2 * M.mrcap;
        MPI_Request *a = realloc(M.mr, (size_t)cap * sizeof *a);
        if (!a)
            return SP_ERR_MEM;
        M.mr = a;
        M.mrcap = cap;
    }
    int left = 0;
    for (int i = 0; i < n; i++) {
        M.mr[i] = reqs[i] ? reqs[i]->mpi : MPI_REQUEST_NULL;
        left += reqs[i] != NULL;
    }
    M.wd_rank = c->rank;
    M.wd_iter = c->iter;
    M.wd_phase = c->shim->rep->phase_names[c->phase];
    while (left > 0) {
        int idx;
        MPI_Status one;
        M.wd_done++; /* a wait starts: the next tick begins its count afresh */
        M.wd_waiting = 1;
        MPI_Waitany(n, M.mr, &idx, &one);
        M.wd_waiting = 0;
        M.wd_done++;
        if (idx == MPI_UNDEFINED)
            break;
        left--;
        sp_req *r = reqs[idx];
        if (!r->is_send) {
            int cnt = 0;
            MPI_Get_count(&one, MPI_BYTE, &cnt);
            /* a message larger than the buffer is MPI_ERR_TRUNCATE, fatal under MPI's default handler */
            if (r->rec != (size_t)-1) {
                half_event *e = (half_event *)M.recvs.e + r->rec;
                e->bytes = (uint64_t)cnt;
                e->t = mpi_now(c);
            }
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

static void mpi_barrier(sp_ctx *c, void (*last)(void *), void *arg)
{
    (void)c;
    MPI_Barrier(MPI_COMM_WORLD);
    if (last)
        last(arg); /* each process acts for its own rank (its events are recorded, not live) */
}

static const sp_backend mpi_backend = {"mpi", mpi_isend, mpi_irecv, mpi_waitall, mpi_now, mpi_advance, mpi_barrier};

/* ---- the recording sink -------------------------------------------------- */

static void rec_message(void *to, const sp_msg_event *e)
{
    (void)to;
    (void)e; /* this backend records message halves itself */
}
static void rec_span(void *to, const sp_span_event *e)
{
    (void)to;
    push(&M.spans, e);
}
static void rec_stat(void *to, const sp_stat_event *e)
{
    (void)to;
    push(&M.stats, e);
}
static void rec_done(void *to, int iter)
{
    (void)to;
    (void)iter;
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

/* ---- end of run: names by name, then every event to rank 0 ---------------- */

/* union of every rank's names, in rank 0's order first; map[i] = global id
 * of local name i.  -1 if memory ran out (on any rank). */
static int reconcile(const char *const *local, int nlocal, char names[][64], int max, int *map)
{
    char buf[SP_MAX_PHASES > SP_MAX_STATS ? SP_MAX_PHASES * 64 : SP_MAX_STATS * 64];
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < nlocal && i < max; i++)
        snprintf(buf + 64 * i, 64, "%s", local[i]);
    int bytes = 64 * max;
    char *all = malloc((size_t)bytes * (size_t)M.size);
    int ok = all != NULL, allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allok) {
        free(all);
        return -1;
    }
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
    if (M.rank == 0) {
        counts = malloc((size_t)M.size * sizeof *counts);
        displs = malloc((size_t)M.size * sizeof *displs);
    }
    int have = M.rank != 0 || (counts && displs);
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!have) {
        *ok = 0;
        free(counts);
        free(displs);
        return NULL;
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (M.rank == 0) {
        size_t sum = 0;
        for (int r = 0; r < M.size; r++) {
            displs[r] = (int)sum;
            sum += (size_t)counts[r];
        }
        all = malloc(sum ? sum : 1);
        *total = sum / l->size;
        have = all != NULL;
    }
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (have)
        MPI_Gatherv(l->e, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    else
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
    MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int differ = rep->result && h != h0, anydiff = 0;
    MPI_Allreduce(&differ, &anydiff, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
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
        out[i] = (sp_msg_event){s->iter, s->phase, s->src, s->dst, s->tag, s->bytes, s->t, r->t};
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

static int finish(sp_shim *sh, const sp_sink *driver_sink, char *err, size_t errlen)
{
    sp_report *rep = sh->rep;
    static char pnames[SP_MAX_PHASES][64], snames[SP_MAX_STATS][64];
    int pmap[SP_MAX_PHASES], smap[SP_MAX_STATS];
    int np = reconcile(rep->phase_names, rep->nphases, pnames, SP_MAX_PHASES, pmap);
    int ns = np < 0 ? -1 : reconcile(rep->stat_names, rep->nstats, snames, SP_MAX_STATS, smap);
    int ok = np >= 0 && ns >= 0 && !M.oom, allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allok) {
        snprintf(err, errlen, "out of memory keeping the run's events");
        return 1;
    }
    for (size_t i = 0; i < M.sends.n; i++)
        ((half_event *)M.sends.e)[i].phase = pmap[((half_event *)M.sends.e)[i].phase];
    for (size_t i = 0; i < M.spans.n; i++)
        ((sp_span_event *)M.spans.e)[i].phase = pmap[((sp_span_event *)M.spans.e)[i].phase];
    for (size_t i = 0; i < M.stats.n; i++)
        ((sp_stat_event *)M.stats.e)[i].stat = smap[((sp_stat_event *)M.stats.e)[i].stat];
    int agree = results_agree(rep);
    if (rep->residual_sum)
        MPI_Reduce(M.rank == 0 ? MPI_IN_PLACE : rep->residual_sum, rep->residual_sum, (int)rep->n, MPI_DOUBLE,
                   MPI_SUM, 0, MPI_COMM_WORLD);
    size_t nsend = 0, nrecv = 0, nsp = 0, nst = 0;
    half_event *sends = gather_list(&M.sends, &nsend, &ok);
    half_event *recvs = gather_list(&M.recvs, &nrecv, &ok);
    sp_span_event *spans = gather_list(&M.spans, &nsp, &ok);
    sp_stat_event *stats = gather_list(&M.stats, &nst, &ok);
    int rc = 0;
    if (!ok) {
        snprintf(err, errlen, "out of memory gathering the run's events");
        rc = 1;
    } else if (!agree) {
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
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(sends);
    free(recvs);
    free(spans);
    free(stats);
    return rc;
}

static void release_all(void)
{
    while (M.free_reqs) {
        sp_req *r = M.free_reqs;
        M.free_reqs = r->next_free;
        free(r);
    }
    free(M.mr);
    for (int i = 0; i < M.nretired; i++)
        free(M.retired[i]);
    free(M.scratch);
    free(M.sends.e);
    free(M.recvs.e);
    free(M.spans.e);
    free(M.stats.e);
    M.mr = NULL;
    M.mrcap = 0;
    M.nretired = 0;
    M.scratch = NULL;
    M.scratch_cap = 0;
    memset(&M.sends, 0, sizeof M.sends);
    memset(&M.recvs, 0, sizeof M.recvs);
    memset(&M.spans, 0, sizeof M.spans);
    memset(&M.stats, 0, sizeof M.stats);
}

int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, char *err, size_t errlen)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &M.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &M.size);
    if (M.size != cfg->ranks) {
        snprintf(err, errlen, "--ranks is %d but the job has %d processes (mpirun -np)", cfg->ranks, M.size);
        return 2;
    }
    M.watchdog = cfg->watchdog > 0 ? cfg->watchdog : 60;
    M.seq = 0;
    M.oom = 0;
    M.sends.size = M.recvs.size = sizeof(half_event);
    M.spans.size = sizeof(sp_span_event);
    M.stats.size = sizeof(sp_stat_event);
    start_watchdog();
    /* mpirun ends the other ranks with SIGTERM when one fails */
    sp_part_cleanup_on_signals();
    align_clocks();
    /* every process records its events; rank 0 replays them into the driver's sink at the end */
    sp_sink driver_sink = sh->sink;
    sh->sink = (sp_sink){rec_message, rec_span, rec_stat, rec_done, NULL};
    sh->want_times = 1;
    /* the routing facts of the network are unknown here */
    sh->rep->alpha = sh->rep->beta = 0;
    int rc = 1;
    sp_ctx *c = calloc(1, sizeof *c);
    int ok = c != NULL, allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allok) {
        snprintf(err, errlen, "out of memory starting rank %d", M.rank);
        goto out;
    }
    c->rank = M.rank;
    c->size = M.size;
    c->be = &mpi_backend;
    c->shim = sh;
    sh->rank_main(c, sh->rank_arg);
    stop_watchdog();
    int failed = sh->failed, anyfailed = 0;
    MPI_Allreduce(&failed, &anyfailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anyfailed) {
        /* the first failing rank's message, through rank 0 */
        char msg[256];
        snprintf(msg, sizeof msg, "%s", failed ? sh->errmsg : "");
        int who = failed ? M.rank : M.size, first = 0;
        MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
        snprintf(err, errlen, "%s", msg);
        sh->failed = 1;
    } else {
        rc = finish(sh, &driver_sink, err, errlen);
    }
out:
    stop_watchdog();
    sh->sink = driver_sink;
    free(c);
    release_all();
    return rc;
}
