/* watchdog.c - the MPI job never hangs, and ends with one line.
 *
 * The ways a job could hang or end without a word, and what ends it instead:
 *
 *  - What every rank can learn at one point is agreed there (sp_mpi_agree):
 *    bad options, a rank that cannot start a run (a folder it cannot create,
 *    a file it cannot read), a failure met before the synchronisation
 *    between iterations.  Every rank learns the first failing rank's reason;
 *    rank 0 prints it and all end normally.
 *  - A rank that fails where the others wait for its messages tells why
 *    itself and aborts the job (spm_fail_now).
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

#include "mpi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct spm_job spm_job = {.lock_fd = -1};


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
    if (!spm_job.roster || r == spm_job.rank || strcmp(spm_job.roster[r].host, spm_job.roster[spm_job.rank].host) != 0)
        return '?';
    pid_t pid = spm_job.roster[r].pid;
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
    if (!spm_job.roster)
        return -1;
    int stopped = -1;
    for (int r = 0; r < spm_job.size; r++) {
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
    if (!spm_job.roster)
        return;
    for (int r = 0; r < spm_job.size; r++)
        if (r != spm_job.rank && !strcmp(spm_job.roster[r].host, spm_job.roster[spm_job.rank].host)) {
            union sigval v;
            v.sival_int = spm_job.rank;
            sigqueue(spm_job.roster[r].pid, SIGUSR2, v);
        }
}

/* 1 if this process may tell: it holds its host's lock (or there is none) */
static int take_lock(void)
{
    if (spm_job.lock_fd >= 0 || !spm_job.lock_name[0])
        return 1;
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (fd < 0)
        return 1; /* no lock to be had: better two lines than none */
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t n = strlen(spm_job.lock_name);
    memcpy(a.sun_path + 1, spm_job.lock_name, n); /* sun_path[0] = 0: the abstract namespace */
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0) {
        close(fd);
        return 0;
    }
    spm_job.lock_fd = fd;
    return 1;
}

/* Writes the line if no other rank of this host tells; 1 if it did.  The
 * line then has a moment to travel through mpirun before the job ends
 * (before the ranks know each other's pids, so long that the host's other
 * ranks, which cannot be quieted, find the lock taken).  Async-signal-safe. */
static int tell(const char *line, size_t len)
{
    if (spm_job.quiet || !take_lock()) {
        spm_job.quiet = 1;
        return 0;
    }
    spm_job.quiet = 1; /* this process says nothing more */
    quiet_host();
    ssize_t w = write(2, line, len);
    (void)w;
    double s = spm_job.roster ? 0.1 : 0.1 + 2 * spm_job.period / TICKS;
    struct timespec linger = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&linger, NULL);
    return 1;
}

/* "phase X of iteration I", or the collective's own words */
static size_t put_place(char *b, size_t n, size_t cap)
{
    if (spm_job.kind == WAIT_P2P) {
        n = put_str(b, n, cap, "phase ");
        n = put_str(b, n, cap, spm_job.phase ? spm_job.phase : "?");
        n = put_str(b, n, cap, " of iteration ");
        return put_int(b, n, cap, spm_job.iter);
    }
    n = put_str(b, n, cap, spm_job.where ? spm_job.where : "a collective");
    if (spm_job.iter >= 0) {
        n = put_str(b, n, cap, " at iteration ");
        n = put_int(b, n, cap, spm_job.iter);
    }
    return n;
}

/* the watchdog's line into spm_job.line; its length.  Async-signal-safe. */
static size_t watchdog_line(void)
{
    char *b = spm_job.line;
    size_t cap = sizeof spm_job.line, n;
    long tenths = (long)(spm_job.idle * spm_job.period * 10.0 / TICKS + 0.5);
    char st = 0;
    int who = culprit(0, &st);
    n = put_str(b, 0, cap, "sparsim-mpi: ");
    if (who >= 0) {
        n = put_str(b, n, cap, "rank ");
        n = put_int(b, n, cap, who);
        n = put_str(b, n, cap, st == 'T' ? " is stopped (process " : " has died (process ");
        n = put_int(b, n, cap, spm_job.roster[who].pid);
        n = put_str(b, n, cap, st == 'T' ? ", by SIGSTOP or a debugger)" : " is gone: killed or crashed)");
        n = put_str(b, n, cap, ": rank ");
    } else {
        n = put_str(b, n, cap, "rank ");
    }
    n = put_int(b, n, cap, spm_job.rank);
    n = put_str(b, n, cap, " waited ");
    n = put_int(b, n, cap, tenths / 10);
    n = put_str(b, n, cap, ".");
    n = put_int(b, n, cap, tenths % 10);
    n = put_str(b, n, cap, " s without progress in ");
    n = put_place(b, n, cap);
    if (who < 0 && spm_job.kind == WAIT_P2P) {
        sp_req **reqs = spm_job.reqs;
        for (int i = 0; reqs && i < spm_job.nreqs; i++) {
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
    n = put_int(b, n, cap, (long)(spm_job.period + 0.5));
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
void spm_block_signals(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGUSR2);
    sigprocmask(SIG_BLOCK, &s, old);
}

/* a polled wait found the watchdog expired */
void spm_expire(void)
{
    sigset_t old;
    spm_block_signals(&old);
    spm_job.expired = 0;
    size_t n = watchdog_line();
    if (tell(spm_job.line, n))
        end_job(1);
    sigprocmask(SIG_SETMASK, &old, NULL); /* another rank tells and ends the job; wait for it */
}

/* This rank failed where the others would wait for it: it tells why and
 * ends the job.  Never returns. */
void spm_fail_now(int rc, const char *why)
{
    sigset_t old;
    spm_block_signals(&old);
    int n = snprintf(spm_job.line, sizeof spm_job.line, "sparsim-mpi: %s\n", why);
    if (n >= (int)sizeof spm_job.line)
        n = (int)sizeof spm_job.line - 1;
    if (tell(spm_job.line, (size_t)n))
        end_job(rc);
    /* another rank of this host tells and ends the job: give it a period */
    sigprocmask(SIG_SETMASK, &old, NULL);
    for (double t = 0; t < spm_job.period + 1; t += 0.05) {
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
    if (!spm_job.waiting || spm_job.done != seen) {
        seen = spm_job.done;
        idle = 0;
        errno = saved;
        return;
    }
    idle++;
    int limit = spm_job.kind == WAIT_P2P ? P2P_TICKS : COLL_TICKS;
    char st;
    if (idle >= limit && spm_job.quiet) {
        /* another rank tells and ends the job; if it has not in a period, go */
        if (idle >= limit + TICKS) {
            sp_part_remove_all();
            _exit(1);
        }
    } else if (idle >= limit && (!spm_job.patient || idle >= PATIENT_TICKS || culprit(0, &st) >= 0)) {
        spm_job.idle = idle;
        if (spm_job.pollable) {
            spm_job.expired = 1; /* the polling loop tells, and aborts the job */
        } else if (tell(spm_job.line, watchdog_line())) {
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
    if (!spm_job.quiet && !spm_job.ending) {
        char st;
        int who = culprit(1, &st);
        if (who >= 0) {
            char *b = spm_job.line;
            size_t cap = sizeof spm_job.line;
            size_t n = put_str(b, 0, cap, "sparsim-mpi: rank ");
            n = put_int(b, n, cap, who);
            n = put_str(b, n, cap, " died (process ");
            n = put_int(b, n, cap, spm_job.roster[who].pid);
            n = put_str(b, n, cap, " is gone: killed or crashed); the job ends");
            if (spm_job.waiting) {
                n = put_str(b, n, cap, " (rank ");
                n = put_int(b, n, cap, spm_job.rank);
                n = put_str(b, n, cap, " was waiting in ");
                n = put_place(b, n, cap);
                n = put_str(b, n, cap, ")");
            }
            n = put_str(b, n, cap, "\n");
            tell(b, n);
        } else {
            quiet_host(); /* nothing this host can name: its ranks end without a word */
        }
        spm_job.quiet = 1;
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
    for (int r = 0; spm_job.roster && r < spm_job.size && !ours; r++)
        ours = si->si_code == SI_QUEUE && spm_job.roster[r].pid == si->si_pid;
    if (ours) {
        spm_job.quiet = 1;
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

void spm_start_timer(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    double tick = spm_job.period / TICKS;
    struct itimerval it;
    it.it_interval.tv_sec = (time_t)tick;
    it.it_interval.tv_usec = (suseconds_t)((tick - (double)(time_t)tick) * 1e6);
    if (!it.it_interval.tv_sec && it.it_interval.tv_usec < 1000)
        it.it_interval.tv_usec = 1000;
    it.it_value = it.it_interval;
    setitimer(ITIMER_REAL, &it, NULL);
}

void spm_stop_timer(void)
{
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
}

void spm_catch_signals(void)
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

/* ---- watched waits ---- */

void spm_wait_begin(int kind, const char *where, int iter, int patient, int pollable)
{
    spm_job.kind = kind;
    spm_job.where = where;
    spm_job.iter = iter;
    spm_job.patient = patient;
    spm_job.pollable = pollable;
    spm_job.expired = 0; /* what the watchdog found of an earlier wait, which has ended */
    spm_job.done++;      /* a wait starts: the next tick begins its count afresh */
    spm_job.waiting = 1;
}

void spm_wait_end(void)
{
    spm_job.waiting = 0;
    spm_job.done++;
}

/* Waits for one request (a collective, or a message of clock alignment)
 * under the watchdog; `where` names it, at iteration `iter` (-1: none).
 * `patient`: the wait is for rank 0's writing of the outputs. */
void spm_wait_for(MPI_Request *rq, const char *where, int iter, int patient)
{
#ifdef SPARSIM_SMPI /* simulated ranks: no watchdog, and a polling loop would only burn simulated time */
    (void)where;
    (void)iter;
    (void)patient;
    MPI_Wait(rq, MPI_STATUS_IGNORE);
#else
    spm_wait_begin(WAIT_COLL, where, iter, patient, 1);
    int flag = 0;
    for (;;) {
        MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
        if (flag)
            break;
        if (spm_job.expired)
            spm_expire();
    }
    spm_wait_end();
#endif
}
