/* sweep_pool.c - up to N runs of a sweep at once (see sweep_pool.h).
 *
 * Each run has a worker: a process forked from the sweep that runs it the
 * way every command does (a child of its own, signals passed on, outputs
 * published only while the worker is there) and writes back one record,
 * the run's status and peak memory, on a pipe.  The sweep passes the
 * signals that end a command on to its workers and waits for them before
 * it ends by the same signal; a worker dies with the sweep (a death signal
 * that it passes on to its run), so a sweep killed outright leaves no run
 * behind.  Memory: a run starts only while the estimates of the runs in
 * flight and its own stay under the budget, or when nothing is in flight.
 */
#define _GNU_SOURCE
#include "sweep_pool.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>


typedef struct {
    sp_plan *p;
    double mem;
    int tag;
} queued;

typedef struct {
    pid_t pid; /* 0: a free slot */
    int fd;    /* the pipe's read end */
    int q;     /* the run, an index into the queue */
    double t0;
    unsigned char got[sizeof(int) + sizeof(double)];
    size_t len;
} worker_slot;

struct sp_pool {
    int jobs;
    double budget, used;
    queued *q;
    int nq, cap, next, inflight;
    worker_slot *w;
    void (*interrupted)(const sp_plan *, void *);
    void *arg;
    struct sigaction old[SP_NSIG_END];
};

/* the open pool, for the signal handler */
static sp_pool *volatile open_pool;
static volatile sig_atomic_t stop_sig;

static void pass_on(int sig)
{
    stop_sig = sig;
    sp_pool *pl = open_pool;
    if (!pl)
        return;
    for (int i = 0; i < pl->jobs; i++)
        if (pl->w[i].pid > 0)
            kill(pl->w[i].pid, sig);
}

int sp_pool_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

sp_pool *sp_pool_open(int jobs, double budget, void (*interrupted)(const sp_plan *, void *), void *arg)
{
    sp_pool *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    pl->jobs = jobs < 1 ? 1 : jobs;
    pl->budget = budget;
    pl->interrupted = interrupted;
    pl->arg = arg;
    pl->w = calloc((size_t)pl->jobs, sizeof *pl->w);
    if (!pl->w) {
        free(pl);
        return NULL;
    }
    for (int i = 0; i < pl->jobs; i++)
        pl->w[i].fd = -1;
    stop_sig = 0;
    open_pool = pl;
    for (int i = 0; i < SP_NSIG_END; i++) {
        sigaction(sp_end_signals[i], NULL, &pl->old[i]);
        if (pl->old[i].sa_handler == SIG_IGN) /* ignored by whoever started the sweep: it stays so */
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = pass_on;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(sp_end_signals[i], &sa, NULL);
    }
    return pl;
}

int sp_pool_add(sp_pool *pl, sp_plan *p, double mem, int tag)
{
    if (pl->nq == pl->cap) {
        int cap = pl->cap ? pl->cap * 2 : 64;
        queued *nq = realloc(pl->q, (size_t)cap * sizeof *nq);
        if (!nq)
            return -1;
        pl->q = nq;
        pl->cap = cap;
    }
    pl->q[pl->nq++] = (queued){p, mem, tag};
    return 0;
}

/* in the worker: the run, and its record on the pipe; never returns */
static void worker(sp_pool *pl, int q, int fd, pid_t parent)
{
    /* the sweep's handlers go; SIGTERM is the death signal, never ignored
     * here (the worker passes it on to its run); the others stay ignored
     * where the sweep's starter ignored them */
    for (int i = 0; i < SP_NSIG_END; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = sp_end_signals[i] != SIGTERM && pl->old[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL;
        sigemptyset(&sa.sa_mask);
        sigaction(sp_end_signals[i], &sa, NULL);
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    for (int i = 0; i < pl->jobs; i++)
        if (pl->w[i].fd >= 0)
            close(pl->w[i].fd);
    open_pool = NULL;
    sp_block_end_signals(0);
    double rss = -1;
    int rc = sp_cli_run_in_child_rss(pl->q[q].p, &rss);
    unsigned char rec[sizeof rc + sizeof rss];
    memcpy(rec, &rc, sizeof rc);
    memcpy(rec + sizeof rc, &rss, sizeof rss);
    ssize_t wr;
    do
        wr = write(fd, rec, sizeof rec); /* a few bytes: whole, or not at all */
    while (wr < 0 && errno == EINTR);
    _exit(wr == (ssize_t)sizeof rec ? 0 : 1);
}

/* starts queued run q in slot s; 0, or -1 with a message */
static int start(sp_pool *pl, int s, char *err, size_t errlen)
{
    int q = pl->next, fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "cannot start the run of %s: %s", pl->q[q].p->algo, strerror(errno));
        return -1;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    sp_block_end_signals(1); /* a signal now waits until the worker is known */
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        close(fds[0]);
        worker(pl, q, fds[1], parent);
    }
    close(fds[1]);
    if (pid < 0) {
        sp_block_end_signals(0);
        close(fds[0]);
        snprintf(err, errlen, "cannot start the run of %s: fork failed: %s", pl->q[q].p->algo, strerror(errno));
        return -1;
    }
    worker_slot *w = &pl->w[s];
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = fds[0];
    w->q = q;
    w->t0 = sp_cli_now();
    sp_block_end_signals(0);
    pl->next++;
    pl->inflight++;
    pl->used += pl->q[q].mem;
    return 0;
}

static void read_some(worker_slot *w)
{
    while (w->fd >= 0 && w->len < sizeof w->got) {
        ssize_t got = read(w->fd, w->got + w->len, sizeof w->got - w->len);
        if (got > 0) {
            w->len += (size_t)got;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN)
            return;
        close(w->fd); /* the end, or an error: nothing more comes */
        w->fd = -1;
    }
}

/* a signal came: the workers have it; wait for them, clean up, end by it */
static void end_by_signal(sp_pool *pl)
{
    int sig = stop_sig;
    for (int i = 0; i < pl->jobs; i++) {
        worker_slot *w = &pl->w[i];
        if (w->pid <= 0)
            continue;
        int st;
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (pl->interrupted)
            pl->interrupted(pl->q[w->q].p, pl->arg);
        w->pid = 0;
    }
    open_pool = NULL;
    for (int i = 0; i < SP_NSIG_END; i++)
        sigaction(sp_end_signals[i], &pl->old[i], NULL);
    signal(sig, SIG_DFL);
    sp_block_end_signals(0);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

int sp_pool_next(sp_pool *pl, int *tag, int *status, double *rss, double *wall, void (*tick)(void *), void *arg,
                 char *err, size_t errlen)
{
    for (;;) {
        if (stop_sig)
            end_by_signal(pl);
        /* start what may start: a free slot, and room in the budget (or nothing in flight) */
        while (pl->next < pl->nq && pl->inflight < pl->jobs &&
               (pl->inflight == 0 || pl->budget <= 0 || pl->used + pl->q[pl->next].mem <= pl->budget)) {
            int s = 0;
            while (pl->w[s].pid > 0)
                s++;
            if (start(pl, s, err, errlen) != 0)
                return -1;
        }
        if (pl->inflight == 0)
            return 0;
        /* a worker that has ended, its record read */
        for (int i = 0; i < pl->jobs; i++) {
            worker_slot *w = &pl->w[i];
            int st;
            if (w->pid <= 0 || waitpid(w->pid, &st, WNOHANG) != w->pid)
                continue;
            if (w->fd >= 0) {
                fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) | O_NONBLOCK);
                read_some(w);
                if (w->fd >= 0)
                    close(w->fd);
                w->fd = -1;
            }
            queued *q = &pl->q[w->q];
            *tag = q->tag;
            *wall = sp_cli_now() - w->t0;
            if (w->len == sizeof w->got) {
                memcpy(status, w->got, sizeof *status);
                memcpy(rss, w->got + sizeof *status, sizeof *rss);
            } else { /* the worker itself was lost */
                char msg[600];
                snprintf(msg, sizeof msg, "lost the run of %s at P = %d: its worker ended (%s %d) without a result",
                         q->p->algo, q->p->ranks, WIFSIGNALED(st) ? "signal" : "exit status",
                         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                sp_opts_print_error(msg);
                sp_cli_remove_run_dir(q->p->out);
                *status = 1;
                *rss = -1;
            }
            w->pid = 0;
            pl->inflight--;
            pl->used -= q->mem;
            return 1;
        }
        /* wait: a record, a worker's end, or half a second */
        struct pollfd pfd[64];
        int n = 0;
        for (int i = 0; i < pl->jobs && n < 64; i++)
            if (pl->w[i].pid > 0 && pl->w[i].fd >= 0)
                pfd[n++] = (struct pollfd){pl->w[i].fd, POLLIN, 0};
        int pr = poll(pfd, (nfds_t)n, n ? 100 : 50);
        if (pr > 0)
            for (int i = 0; i < pl->jobs; i++)
                for (int k = 0; k < n; k++)
                    if (pl->w[i].pid > 0 && pl->w[i].fd == pfd[k].fd && pfd[k].revents)
                        read_some(&pl->w[i]);
        if (tick)
            tick(arg);
    }
}

int sp_pool_running(const sp_pool *pl, char *buf, size_t n)
{
    size_t w = 0;
    int count = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < pl->jobs; i++) {
        if (pl->w[i].pid <= 0)
            continue;
        const sp_plan *p = pl->q[pl->w[i].q].p;
        if (w < n)
            w += (size_t)snprintf(buf + w, n - w, "%s%.20s P=%d", count ? ", " : "", p->algo, p->ranks);
        count++;
    }
    return count;
}

void sp_pool_close(sp_pool *pl)
{
    if (!pl)
        return;
    sp_block_end_signals(1);
    for (int i = 0; i < pl->jobs; i++)
        if (pl->w[i].pid > 0)
            kill(pl->w[i].pid, SIGTERM);
    for (int i = 0; i < pl->jobs; i++) {
        worker_slot *w = &pl->w[i];
        if (w->pid <= 0)
            continue;
        int st;
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (w->fd >= 0)
            close(w->fd);
        sp_cli_remove_run_dir(pl->q[w->q].p->out); /* it did not finish: nothing of it stays */
    }
    open_pool = NULL;
    for (int i = 0; i < SP_NSIG_END; i++)
        sigaction(sp_end_signals[i], &pl->old[i], NULL);
    int sig = stop_sig;
    sp_block_end_signals(0);
    free(pl->w);
    free(pl->q);
    free(pl);
    if (sig) { /* a signal came while the pool closed: end by it */
        signal(sig, SIG_DFL);
        raise(sig);
    }
}
