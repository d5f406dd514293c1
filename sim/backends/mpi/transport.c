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
 * after a synchronisation of all ranks (untraced), as in the reference codes;
 * it also tells every rank whether one has failed.
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
 * The job never hangs, and a failure anywhere ends it with one line that
 * names the rank and what happened (see "the job" below): what all ranks can
 * learn at one point is agreed there; a rank that fails where the others
 * would wait for it ends the job itself; every wait is watched.
 */
#include "sim/shim/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
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

/* Everything one run keeps: one process runs one rank. */
static struct {
    int rank, size;
    double offset, origin; /* local clock + offset - origin = common time */
    rec_list sends, recvs, spans, stats;
    uint32_t seq;
    int oom;               /* a record could not be kept: the run fails at the end */
    int fail_agreed;       /* every rank knows of the failure (agreed at a synchronisation) */
    int stage;             /* of the last run: 0 not started here, 1 ended well, 2 failed, every rank knows */
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

/* ---- the job: every rank's place, and ending the job as one ----------------
 * The ways a job could hang or end without a word, and what ends it instead:
 *
 *  - What every rank can learn at one point is agreed there (sp_mpi_agree):
 *    bad options, a rank that cannot start a run (a folder it cannot create,
 *    a file it cannot read), a failure met before the synchronisation
 *    between iterations.  Every rank learns the first failing rank's reason;
 *    rank 0 prints it and all end normally.
 *  - A rank that fails where the others wait for its messages tells why
 *    itself and aborts the job (fail_now).
 *  - Every wait is watched: one without progress for most of --watchdog
 *    seconds tells where it waited, and for whom, and aborts the job.  The
 *    ranks of one host see each other's processes (their pids are exchanged
 *    at the start), so the line names a rank that is stopped or gone.
 *  - A rank that dies without a word (killed, crashed): mpirun ends the
 *    others with SIGTERM, and a rank of its host that finds its process gone
 *    names it.
 *
 * One line: a rank about to tell takes a lock that the ranks of its host
 * share (an abstract socket name, which dies with its holder) and asks the
 * host's other ranks to end without a word (SIGUSR2 sent with sigqueue);
 * they remove their temporaries at once.
 *
 * The watchdog costs a wait no system call: a wait raises a flag and bumps a
 * counter, and an interval timer ticks TICKS times per period; the handler
 * counts the ticks one wait stays blocked without a completion.  Waits for
 * messages give up first (their line says most), collectives one tick later.
 * Polled waits give up in the loop that polls (the job then ends through
 * MPI_Abort, at once); a blocking call (MPI_Finalize, calibrate's
 * measurements) gives up in the handler, with async-signal-safe code. */

#define TICKS 16          /* per watchdog period */
#define P2P_TICKS 12      /* a wait for messages gives up after 12 to 13 ticks */
#define COLL_TICKS 13     /* a collective one tick later */
#define PATIENT_TICKS 160 /* waiting for rank 0's writing: ten periods, unless a rank is seen stopped or gone */

enum { WAIT_P2P = 1, WAIT_COLL = 2 };

/* where a rank runs: exchanged at the start of the job */
typedef struct {
    int32_t pid;
    uint32_t nonce; /* rank 0's names the job */
    char host[56];
} rank_place;

static struct {
    int rank, size;
    double period;           /* --watchdog */
    rank_place *roster;      /* every rank's place; NULL where unknown */
    char lock_name[64];
    int lock_fd;             /* >= 0: this process holds its host's lock */
    volatile sig_atomic_t quiet;   /* another rank tells: end without a word */
    volatile sig_atomic_t ending;  /* every rank agreed to end: one gone has not died */
    /* the wait under way, read by the handler */
    volatile sig_atomic_t waiting, kind, patient, pollable, expired, idle;
    volatile unsigned done;  /* bumped as waits start and end; wraps */
    const char *volatile where; /* a collective: what it is */
    const char *volatile phase; /* messages: the phase */
    volatile int iter;
    sp_req **volatile reqs;  /* messages: the requests waited for */
    volatile int nreqs;
    char line[640];          /* the line being told */
} J = {.lock_fd = -1};

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

/* what this host sees of rank r's process: 'T' stopped, 'G' gone (or a
 * zombie), 'A' alive, '?' elsewhere or unknown.  Async-signal-safe. */
static char peer_state(int r)
{
    if (!J.roster || r == J.rank || strcmp(J.roster[r].host, J.roster[J.rank].host) != 0)
        return '?';
    pid_t pid = J.roster[r].pid;
    if (kill(pid, 0) != 0)
        return errno == ESRCH ? 'G' : '?';
    char path[48], b[512];
    size_t n = put_str(path, 0, sizeof path, "/proc/");
    n = put_int(path, n, sizeof path, pid);
    n = put_str(path, n, sizeof path, "/stat");
    path[n] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 'G';
    ssize_t got = read(fd, b, sizeof b - 1);
    close(fd);
    if (got <= 0)
        return 'G';
    /* "pid (name) S ...": the name may hold ')' itself, the state follows the last one */
    char *close_paren = NULL;
    for (ssize_t i = 0; i < got; i++)
        if (b[i] == ')')
            close_paren = b + i;
    if (!close_paren || close_paren + 2 >= b + got)
        return '?';
    char s = close_paren[2];
    return s == 'T' || s == 't' ? 'T' : s == 'Z' || s == 'X' ? 'G' : 'A';
}

/* the lowest rank of this host whose process is gone (or, unless
 * gone_only, stopped); -1 if none.  *state gets 'G' or 'T'. */
static int culprit(int gone_only, char *state)
{
    if (!J.roster)
        return -1;
    int stopped = -1;
    for (int r = 0; r < J.size; r++) {
        char s = peer_state(r);
        if (s == 'G') {
            *state = s;
            return r;
        }
        if (s == 'T' && stopped < 0)
            stopped = r;
    }
    if (gone_only || stopped < 0)
        return -1;
    *state = 'T';
    return stopped;
}

/* asks this host's other ranks to end without a word */
static void quiet_host(void)
{
    if (!J.roster)
        return;
    for (int r = 0; r < J.size; r++)
        if (r != J.rank && !strcmp(J.roster[r].host, J.roster[J.rank].host)) {
            union sigval v;
            v.sival_int = J.rank;
            sigqueue(J.roster[r].pid, SIGUSR2, v);
        }
}

/* 1 if this process may tell: it holds its host's lock (or there is none) */
static int take_lock(void)
{
    if (J.lock_fd >= 0 || !J.lock_name[0])
        return 1;
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (fd < 0)
        return 1; /* no lock to be had: better two lines than none */
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t n = strlen(J.lock_name);
    memcpy(a.sun_path + 1, J.lock_name, n); /* sun_path[0] = 0: the abstract namespace */
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0) {
        close(fd);
        return 0;
    }
    J.lock_fd = fd;
    return 1;
}

/* Writes the line if no other rank of this host tells; 1 if it did.  The
 * line then has a moment to travel through mpirun before the job ends
 * (before the ranks know each other's pids, so long that the host's other
 * ranks, which cannot be quieted, find the lock taken).  Async-signal-safe. */
static int tell(const char *line, size_t len)
{
    if (J.quiet || !take_lock()) {
        J.quiet = 1;
        return 0;
    }
    J.quiet = 1; /* this process says nothing more */
    quiet_host();
    ssize_t w = write(2, line, len);
    (void)w;
    double s = J.roster ? 0.1 : 0.1 + 2 * J.period / TICKS;
    struct timespec linger = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&linger, NULL);
    return 1;
}

/* "phase X of iteration I", or the collective's own words */
static size_t put_place(char *b, size_t n, size_t cap)
{
    if (J.kind == WAIT_P2P) {
        n = put_str(b, n, cap, "phase ");
        n = put_str(b, n, cap, J.phase ? J.phase : "?");
        n = put_str(b, n, cap, " of iteration ");
        return put_int(b, n, cap, J.iter);
    }
    n = put_str(b, n, cap, J.where ? J.where : "a collective");
    if (J.iter >= 0) {
        n = put_str(b, n, cap, " at iteration ");
        n = put_int(b, n, cap, J.iter);
    }
    return n;
}

/* the watchdog's line into J.line; its length.  Async-signal-safe. */
static size_t watchdog_line(void)
{
    char *b = J.line;
    size_t cap = sizeof J.line, n;
    long tenths = (long)(J.idle * J.period * 10.0 / TICKS + 0.5);
    char st = 0;
    int who = culprit(0, &st);
    n = put_str(b, 0, cap, "sparsim-mpi: ");
    if (who >= 0) {
        n = put_str(b, n, cap, "rank ");
        n = put_int(b, n, cap, who);
        n = put_str(b, n, cap, st == 'T' ? " is stopped (process " : " has died (process ");
        n = put_int(b, n, cap, J.roster[who].pid);
        n = put_str(b, n, cap, st == 'T' ? ", by SIGSTOP or a debugger)" : " is gone: killed or crashed)");
        n = put_str(b, n, cap, ": rank ");
    } else {
        n = put_str(b, n, cap, "rank ");
    }
    n = put_int(b, n, cap, J.rank);
    n = put_str(b, n, cap, " waited ");
    n = put_int(b, n, cap, tenths / 10);
    n = put_str(b, n, cap, ".");
    n = put_int(b, n, cap, tenths % 10);
    n = put_str(b, n, cap, " s without progress in ");
    n = put_place(b, n, cap);
    if (who < 0 && J.kind == WAIT_P2P) {
        sp_req **reqs = J.reqs;
        for (int i = 0; reqs && i < J.nreqs; i++) {
            const sp_req *r = reqs[i];
            if (!r || r->mpi == MPI_REQUEST_NULL)
                continue;
            n = put_str(b, n, cap, r->is_send ? " (sending to rank " : " (for a message from rank ");
            n = put_int(b, n, cap, r->peer);
            n = put_str(b, n, cap, ", tag ");
            n = put_int(b, n, cap, r->tag);
            n = put_str(b, n, cap, ")");
            break;
        }
        n = put_str(b, n, cap, ": a receive that can never be matched, a send nobody receives, or a rank stuck "
                               "elsewhere");
    } else if (who < 0) {
        n = put_str(b, n, cap, ": a rank never came (stuck, or ended without a word on another host)");
    }
    n = put_str(b, n, cap, " (--watchdog ");
    n = put_int(b, n, cap, (long)(J.period + 0.5));
    n = put_str(b, n, cap, " s)\n");
    return n;
}

/* ends the job now, from normal code: the others are ended by mpirun */
static void end_job(int rc)
{
    sp_part_remove_all();
    MPI_Abort(MPI_COMM_WORLD, rc);
    _exit(rc);
}

/* signals that would interrupt the telling */
static void block_signals(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGUSR2);
    sigprocmask(SIG_BLOCK, &s, old);
}

/* a polled wait found the watchdog expired */
static void expire(void)
{
    sigset_t old;
    block_signals(&old);
    J.expired = 0;
    size_t n = watchdog_line();
    if (tell(J.line, n))
        end_job(1);
    sigprocmask(SIG_SETMASK, &old, NULL); /* another rank tells and ends the job; wait for it */
}

/* This rank failed where the others would wait for it: it tells why and
 * ends the job.  Never returns. */
static void fail_now(int rc, const char *why)
{
    sigset_t old;
    block_signals(&old);
    int n = snprintf(J.line, sizeof J.line, "sparsim-mpi: %s\n", why);
    if (n >= (int)sizeof J.line)
        n = (int)sizeof J.line - 1;
    if (tell(J.line, (size_t)n))
        end_job(rc);
    /* another rank of this host tells and ends the job: give it a period */
    sigprocmask(SIG_SETMASK, &old, NULL);
    for (double t = 0; t < J.period + 1; t += 0.05) {
        struct timespec d = {0, 50 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    sp_part_remove_all();
    _exit(rc);
}

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    static unsigned seen;
    static int idle;
    if (!J.waiting || J.done != seen) {
        seen = J.done;
        idle = 0;
        errno = saved;
        return;
    }
    idle++;
    int limit = J.kind == WAIT_P2P ? P2P_TICKS : COLL_TICKS;
    char st;
    if (idle >= limit && J.quiet) {
        /* another rank tells and ends the job; if it has not in a period, go */
        if (idle >= limit + TICKS) {
            sp_part_remove_all();
            _exit(1);
        }
    } else if (idle >= limit && (!J.patient || idle >= PATIENT_TICKS || culprit(0, &st) >= 0)) {
        J.idle = idle;
        if (J.pollable) {
            J.expired = 1; /* the polling loop tells, and aborts the job */
        } else if (tell(J.line, watchdog_line())) {
            sp_part_remove_all();
            _exit(1);
        }
    }
    errno = saved;
}

/* mpirun ends the job: a rank whose process is gone is named, by one rank
 * of its host (unless a rank already told) */
static void on_term(int sig)
{
    if (!J.quiet && !J.ending) {
        char st;
        int who = culprit(1, &st);
        if (who >= 0) {
            char *b = J.line;
            size_t cap = sizeof J.line;
            size_t n = put_str(b, 0, cap, "sparsim-mpi: rank ");
            n = put_int(b, n, cap, who);
            n = put_str(b, n, cap, " died (process ");
            n = put_int(b, n, cap, J.roster[who].pid);
            n = put_str(b, n, cap, " is gone: killed or crashed); the job ends");
            if (J.waiting) {
                n = put_str(b, n, cap, " (rank ");
                n = put_int(b, n, cap, J.rank);
                n = put_str(b, n, cap, " was waiting in ");
                n = put_place(b, n, cap);
                n = put_str(b, n, cap, ")");
            }
            n = put_str(b, n, cap, "\n");
            tell(b, n);
        } else {
            quiet_host(); /* nothing this host can name: its ranks end without a word */
        }
        J.quiet = 1;
    }
    sp_part_remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* a rank of this host tells: end without a word */
static void on_quiet(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int ours = 0;
    for (int r = 0; J.roster && r < J.size && !ours; r++)
        ours = si->si_code == SI_QUEUE && J.roster[r].pid == si->si_pid;
    if (ours) {
        J.quiet = 1;
        /* the job ends: its temporaries go now, as mpirun's SIGKILL may
         * follow its SIGTERM too soon for the handler to run */
        sp_part_remove_all();
        /* nothing more from this rank: not even the MPI library's complaints
         * about peers that go away as the job ends */
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
        return;
    }
    signal(sig, SIG_DFL); /* not from this job: as if nobody had caught it */
    raise(sig);
}

static void start_timer(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    double tick = J.period / TICKS;
    struct itimerval it;
    it.it_interval.tv_sec = (time_t)tick;
    it.it_interval.tv_usec = (suseconds_t)((tick - (double)(time_t)tick) * 1e6);
    if (!it.it_interval.tv_sec && it.it_interval.tv_usec < 1000)
        it.it_interval.tv_usec = 1000;
    it.it_value = it.it_interval;
    setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_timer(void)
{
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
}

static void catch_signals(void)
{
    /* temporaries go when the job is ended (SIGINT, SIGHUP, SIGQUIT, SIGTERM) */
    sp_part_cleanup_on_signals();
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGALRM);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sa.sa_handler = on_term;
    /* a SIGTERM the caller ignores stays ignored */
    if (sigaction(SIGTERM, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGTERM, &sa, NULL);
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGALRM);
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_sigaction = on_quiet;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);
}

/* ---- watched waits ---------------------------------------------------------- */

static void wait_begin(int kind, const char *where, int iter, int patient, int pollable)
{
    J.kind = kind;
    J.where = where;
    J.iter = iter;
    J.patient = patient;
    J.pollable = pollable;
    J.expired = 0; /* what the watchdog found of an earlier wait, which has ended */
    J.done++;      /* a wait starts: the next tick begins its count afresh */
    J.waiting = 1;
}

static void wait_end(void)
{
    J.waiting = 0;
    J.done++;
}

/* Waits for one request (a collective, or a message of clock alignment)
 * under the watchdog; `where` names it, at iteration `iter` (-1: none).
 * `patient`: the wait is for rank 0's writing of the outputs. */
static void wait_for(MPI_Request *rq, const char *where, int iter, int patient)
{
#ifdef SPARSIM_SMPI /* simulated ranks: no watchdog, and a polling loop would only burn simulated time */
    (void)where;
    (void)iter;
    (void)patient;
    MPI_Wait(rq, MPI_STATUS_IGNORE);
#else
    wait_begin(WAIT_COLL, where, iter, patient, 1);
    int flag = 0;
    for (;;) {
        MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
        if (flag)
            break;
        if (J.expired)
            expire();
    }
    wait_end();
#endif
}

/* ---- what the commands use (sparsim-mpi's main and calibrate) ---------------- */

/* the message of a failure every rank must know: "rank R: why" unless why
 * names rank R already */
static void name_failure(char *out, size_t len, int rank, const char *why)
{
    char name[32];
    snprintf(name, sizeof name, "rank %d", rank);
    const char *at = strstr(why, name);
    if (at && (at[strlen(name)] < '0' || at[strlen(name)] > '9'))
        snprintf(out, len, "%s", why);
    else
        snprintf(out, len, "%s: %s", name, why);
}

/* Every rank says how it stands: rc 0, 1 (a failure) or 2 (bad input), err
 * why.  All learn the lowest failing rank's code and reason (msg: naming
 * that rank, unless every rank failed for the same reason); rank 0 prints
 * it.  `where` names the point for the watchdog; `patient`: the others may
 * wait there for rank 0's writing. */
int sp_mpi_agree(int rc, const char *err, const char *where, int patient, char *msg, size_t msglen)
{
    int me = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint32_t h = 2166136261u;
    for (const char *s = err; rc && s && *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    /* one maximum: the first failing rank, whether all failed, and the range of their reasons */
    long long mine[4] = {rc ? size - me : 0, rc ? 0 : 1, rc ? (long long)h : -1, rc ? -(long long)h : -(1ll << 40)};
    long long all[4];
    MPI_Request rq;
    MPI_Iallreduce(mine, all, 4, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &rq);
    wait_for(&rq, where, -1, patient);
    msg[0] = '\0';
    if (!all[0])
        return 0;
    int first = size - (int)all[0];
    struct {
        int rc;
        char why[500];
    } b;
    memset(&b, 0, sizeof b);
    if (me == first) {
        b.rc = rc;
        snprintf(b.why, sizeof b.why, "%s", err ? err : "");
    }
    MPI_Ibcast(&b, (int)sizeof b, MPI_BYTE, first, MPI_COMM_WORLD, &rq);
    wait_for(&rq, where, -1, patient);
    b.why[sizeof b.why - 1] = '\0';
    /* a reason every rank gave (bad options) needs no rank */
    if ((all[1] == 0 && all[2] == -all[3]) || size == 1)
        snprintf(msg, msglen, "%s", b.why);
    else
        name_failure(msg, msglen, first, b.why);
    return b.rc ? b.rc : 1;
}

/* MPI_Init under the watchdog (a rank that never comes would hold the
 * others in it): its period from --watchdog on the command line (60 s
 * without), the rank and the job's name from the launcher's environment. */
void sp_mpi_job_init(int *argc, char ***argv)
{
#ifndef SPARSIM_SMPI /* under smpirun every rank shares one process, its signals and its timer */
    J.period = 60;
    for (int i = 1; i + 1 < *argc; i++)
        if (!strcmp((*argv)[i], "--watchdog")) {
            double w = strtod((*argv)[i + 1], NULL);
            if (w > 0 && w <= 1e9)
                J.period = w;
        }
    const char *r = getenv("PMIX_RANK"), *ns = getenv("PMIX_NAMESPACE");
    if (!r)
        r = getenv("OMPI_COMM_WORLD_RANK");
    J.rank = r ? atoi(r) : 0;
    if (ns)
        snprintf(J.lock_name, sizeof J.lock_name, "sparsim-mpi.%.40s", ns);
    catch_signals();
    start_timer();
    wait_begin(WAIT_COLL, "the start of MPI (MPI_Init)", -1, 0, 0);
#endif
    MPI_Init(argc, argv);
#ifndef SPARSIM_SMPI
    wait_end();
#endif
}

/* The start of the job: every rank's place (pid, host) to every rank, the
 * watchdog on its period (`watchdog`; <= 0: as it is), and the first
 * agreement (rc, err: this rank's options).  The rest as sp_mpi_agree. */
int sp_mpi_job_start(double watchdog, int rc, const char *err, char *msg, size_t msglen)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &J.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &J.size);
    if (watchdog > 0 || J.period <= 0)
        J.period = watchdog > 0 ? watchdog : 60;
#ifndef SPARSIM_SMPI
    start_timer();
    rank_place me;
    memset(&me, 0, sizeof me);
    me.pid = (int32_t)getpid();
    me.nonce = (uint32_t)(MPI_Wtime() * 1e6) ^ ((uint32_t)getpid() << 16);
    gethostname(me.host, sizeof me.host - 1);
    J.roster = calloc((size_t)J.size, sizeof *J.roster);
    if (!J.roster)
        fail_now(1, "out of memory at the start of the job");
    MPI_Request rq;
    MPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, J.roster, (int)sizeof me, MPI_BYTE, MPI_COMM_WORLD, &rq);
    wait_for(&rq, "the start of the job", -1, 0);
    /* one lock per host and job: the launcher's name of the job, or rank 0's pid and nonce */
    if (!J.lock_name[0])
        snprintf(J.lock_name, sizeof J.lock_name, "sparsim-mpi.%ld.%lu", (long)J.roster[0].pid,
                 (unsigned long)J.roster[0].nonce);
#endif
    return sp_mpi_agree(rc, err, "the start of the job", 0, msg, msglen);
}

/* Blocking MPI calls of a command follow (`where` names them), under the
 * watchdog; NULL: they are over.  sp_mpi_progress: one step of them is done. */
void sp_mpi_watch(const char *where)
{
    if (where)
        wait_begin(WAIT_COLL, where, -1, 0, 0);
    else
        wait_end();
}

void sp_mpi_progress(void) { J.done++; }

/* Before each run: sp_mpi_run_stage then says how it went on this rank: 0
 * it did not start here, 1 it ended well, 2 it failed and every rank knows. */
void sp_mpi_run_begin(void) { M.stage = 0; }
int sp_mpi_run_stage(void) { return M.stage; }

/* The end of the job: MPI_Finalize (watched), then the watchdog stops.
 * Returns rc. */
int sp_mpi_job_end(int rc)
{
    /* a rank that has gone from here on ended as agreed (mpirun ends the
     * others when one ends with a failure's code) */
    J.ending = 1;
    sp_mpi_watch("the end of the job");
    MPI_Finalize();
    sp_mpi_watch(NULL);
#ifndef SPARSIM_SMPI
    stop_timer();
    sigset_t old;
    block_signals(&old);
    if (J.lock_fd >= 0)
        close(J.lock_fd);
    J.lock_fd = -1;
    free(J.roster);
    J.roster = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
#endif
    return rc;
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

/* the next request of M.mr[0..n) to complete, under the watchdog */
static void wait_any(int n, int *idx, MPI_Status *st)
{
#ifdef SPARSIM_SMPI
    MPI_Waitany(n, M.mr, idx, st);
#else
    int flag = 0;
    for (;;) {
        MPI_Testany(n, M.mr, idx, &flag, st);
        if (flag)
            return;
        if (J.expired)
            expire();
    }
#endif
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
    /* what the watchdog's line says of this wait */
    J.phase = c->shim->rep->phase_names[c->phase];
    J.reqs = reqs;
    J.nreqs = n;
    while (left > 0) {
        int idx;
        MPI_Status one;
        wait_begin(WAIT_P2P, NULL, c->iter, 0, 1);
        wait_any(n, &idx, &one);
        wait_end();
        if (idx == MPI_UNDEFINED)
            break;
        left--;
        sp_req *r = reqs[idx];
        r->mpi = MPI_REQUEST_NULL; /* done: the watchdog's line looks for those still pending */
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
    J.reqs = NULL;
    J.nreqs = 0;
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

/* The synchronisation between iterations: every rank arrives, and all learn
 * whether one has failed (then every rank stops, with its reason). */
static void mpi_barrier(sp_ctx *c, void (*last)(void *), void *arg)
{
    sp_shim *sh = c->shim;
    int mine = sh->failed ? M.size - M.rank : 0, first = 0;
    MPI_Request rq;
    MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    wait_for(&rq, "the synchronisation between iterations", c->iter, 0);
    if (first) {
        int who = M.size - first;
        char why[sizeof sh->errmsg];
        snprintf(why, sizeof why, "%s", sh->errmsg);
        MPI_Ibcast(why, (int)sizeof why, MPI_CHAR, who, MPI_COMM_WORLD, &rq);
        wait_for(&rq, "the synchronisation between iterations", c->iter, 0);
        why[sizeof why - 1] = '\0';
        name_failure(sh->errmsg, sizeof sh->errmsg, who, why);
        sh->failed = 1;
        M.fail_agreed = 1;
    }
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
    const char *where = "clock alignment";
    MPI_Request rq;
    for (int r = 1; r < M.size; r++) {
        if (M.rank == 0) {
            for (int i = 0; i < rounds; i++) {
                double t;
                MPI_Irecv(&t, 1, MPI_DOUBLE, r, 7001, MPI_COMM_WORLD, &rq);
                wait_for(&rq, where, -1, 0);
                t = MPI_Wtime();
                MPI_Isend(&t, 1, MPI_DOUBLE, r, 7002, MPI_COMM_WORLD, &rq);
                wait_for(&rq, where, -1, 0);
            }
        } else if (M.rank == r) {
            double best = 1e30;
            for (int i = 0; i < rounds; i++) {
                double t1 = MPI_Wtime(), t2;
                MPI_Isend(&t1, 1, MPI_DOUBLE, 0, 7001, MPI_COMM_WORLD, &rq);
                wait_for(&rq, where, -1, 0);
                MPI_Irecv(&t2, 1, MPI_DOUBLE, 0, 7002, MPI_COMM_WORLD, &rq);
                wait_for(&rq, where, -1, 0);
                double t3 = MPI_Wtime();
                if (t3 - t1 < best) {
                    best = t3 - t1;
                    M.offset = t2 - (t1 + t3) / 2;
                }
            }
        }
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    wait_for(&rq, where, -1, 0);
    double origin = MPI_Wtime() + M.offset;
    MPI_Ibcast(&origin, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq);
    wait_for(&rq, where, -1, 0);
    M.origin = origin;
}

/* ---- end of run: names by name, then every event to rank 0 ---------------- */

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
    char *all = malloc((size_t)bytes * (size_t)M.size);
    int ok = all != NULL, allok = 0;
    MPI_Request rq;
    MPI_Iallreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
    if (!allok) {
        free(all);
        return -1;
    }
    MPI_Iallgather(buf, bytes, MPI_CHAR, all, bytes, MPI_CHAR, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
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
    MPI_Request rq;
    MPI_Ibcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
    if (!have) {
        *ok = 0;
        free(counts);
        free(displs);
        return NULL;
    }
    MPI_Igather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
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
    MPI_Ibcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
    if (have) {
        MPI_Igatherv(l->e, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
        wait_for(&rq, GATHERING, -1, 0);
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
    wait_for(&rq, GATHERING, -1, 0);
    int differ = rep->result && h != h0, anydiff = 0;
    MPI_Iallreduce(&differ, &anydiff, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
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

static int finish(sp_shim *sh, const sp_sink *driver_sink, char *err, size_t errlen)
{
    sp_report *rep = sh->rep;
    static char pnames[SP_MAX_PHASES][64], snames[SP_MAX_STATS][64];
    int pmap[SP_MAX_PHASES], smap[SP_MAX_STATS];
    int np = reconcile(rep->phase_names, rep->nphases, pnames, SP_MAX_PHASES, pmap);
    int ns = np < 0 ? -1 : reconcile(rep->stat_names, rep->nstats, snames, SP_MAX_STATS, smap);
    int ok = np >= 0 && ns >= 0 && !M.oom, allok = 0;
    MPI_Request rq;
    MPI_Iallreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq);
    wait_for(&rq, GATHERING, -1, 0);
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
    if (rep->residual_sum) {
        MPI_Ireduce(M.rank == 0 ? MPI_IN_PLACE : rep->residual_sum, rep->residual_sum, (int)rep->n, MPI_DOUBLE,
                    MPI_SUM, 0, MPI_COMM_WORLD, &rq);
        wait_for(&rq, GATHERING, -1, 0);
    }
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
    /* the others wait here while rank 0 writes messages.csv and trace.json */
    MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    wait_for(&rq, "the writing of the outputs by rank 0", -1, 1);
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
    /* every rank that starts the run meets here the ranks that could not
     * (they come from sp_mpi_agree in the command): all learn why */
    char why[300] = "", msg[600];
    if (M.size != cfg->ranks)
        snprintf(why, sizeof why, "--ranks is %d but the job has %d processes (mpirun -np)", cfg->ranks, M.size);
    int rc = sp_mpi_agree(why[0] ? 2 : 0, why, "the start of the run", 0, msg, sizeof msg);
    if (rc != 0) {
        snprintf(err, errlen, "%s", msg);
        M.stage = 2;
        return rc;
    }
    M.seq = 0;
    M.oom = 0;
    M.fail_agreed = 0;
    M.sends.size = M.recvs.size = sizeof(half_event);
    M.spans.size = sizeof(sp_span_event);
    M.stats.size = sizeof(sp_stat_event);
    align_clocks();
    /* every process records its events; rank 0 replays them into the driver's sink at the end */
    sp_sink driver_sink = sh->sink;
    sh->sink = (sp_sink){rec_message, rec_span, rec_stat, rec_done, NULL};
    sh->want_times = 1;
    /* the routing facts of the network are unknown here */
    sh->rep->alpha = sh->rep->beta = 0;
    rc = 1;
    sp_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        sh->failed = 1;
        snprintf(sh->errmsg, sizeof sh->errmsg, "out of memory starting the run");
    } else {
        c->rank = M.rank;
        c->size = M.size;
        c->be = &mpi_backend;
        c->shim = sh;
        sh->rank_main(c, sh->rank_arg);
    }
    if (sh->failed && !M.fail_agreed) {
        /* the others may be waiting for this rank's messages: end the job */
        name_failure(msg, sizeof msg, M.rank, sh->errmsg);
        fail_now(1, msg);
    }
    if (sh->failed) {
        snprintf(err, errlen, "%s", sh->errmsg); /* the same on every rank */
        rc = 1;
    } else {
        rc = finish(sh, &driver_sink, err, errlen);
    }
    M.stage = rc ? 2 : 1;
    sh->sink = driver_sink;
    free(c);
    release_all();
    return rc;
}
