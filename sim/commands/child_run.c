/* child_run.c - one run in a child process, as every command runs them.
 *
 * A SimGrid engine runs once per process, so every run of a multi-run
 * command (several algorithms, sweeps, crossover searches) gets a child, and
 * `sparsim run` uses one too: a crash inside the engine becomes one clear
 * line instead of a core dump.  While the child runs, the parent passes the
 * signals that end a run (interrupt, termination, hang-up, quit) on to it, so
 * that the child removes its temporaries; the child also dies with its
 * parent (a parent killed outright takes its run along).
 */
#include "cli.h"
#include "../../traces/trace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int end_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NSIG_END ((int)(sizeof end_signals / sizeof end_signals[0]))

static volatile pid_t fwd_child;
static volatile sig_atomic_t fwd_sig;

static void forward(int sig)
{
    fwd_sig = sig;
    if (fwd_child > 0)
        kill(fwd_child, sig);
}

static void block_end_signals(int block)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < NSIG_END; i++)
        sigaddset(&set, end_signals[i]);
    sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* passes the signals to `child` (saving the previous handlers in old);
 * signals the caller ignores stay ignored (nohup, background jobs) */
static void forward_to(pid_t child, struct sigaction *old)
{
    fwd_child = child;
    for (int i = 0; i < NSIG_END; i++) {
        sigaction(end_signals[i], NULL, &old[i]);
        if (old[i].sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = forward;
        sa.sa_flags = SA_RESTART; /* the parent's wait goes on after passing a signal */
        sigemptyset(&sa.sa_mask);
        sigaction(end_signals[i], &sa, NULL);
    }
}

static void stop_forwarding(const struct sigaction *old)
{
    for (int i = 0; i < NSIG_END; i++)
        sigaction(end_signals[i], &old[i], NULL);
    fwd_child = 0;
}

static void (*on_interrupt)(const sp_plan *, void *);
static void *on_interrupt_arg;

void sp_cli_on_interrupt(void (*fn)(const sp_plan *run, void *arg), void *arg)
{
    on_interrupt = fn;
    on_interrupt_arg = arg;
}

void sp_cli_remove_outputs(const char *dir, const char *suffix)
{
    const char *names[] = {"messages.csv", "trace.json", "summary.json"};
    char path[2200];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, names[i], suffix);
        remove(path);
    }
}

int sp_cli_run_in_child(const sp_plan *p) { return sp_cli_run_in_child_rss(p, NULL); }

int sp_cli_run_and_read(const sp_plan *p, cJSON **summary, double *rss)
{
    *summary = NULL;
    int rc = sp_cli_run_in_child_rss(p, rss);
    if (rc != 0)
        return rc;
    char path[1200];
    snprintf(path, sizeof path, "%s/summary.json", p->out);
    *summary = sp_json_file(path);
    return *summary ? 0 : 1;
}

void sp_cli_remove_run_dir(const char *dir)
{
    sp_cli_remove_outputs(dir, "");
    rmdir(dir);
}

int sp_cli_split(const char *text, sp_cli_list *l, const char *name, char *err, size_t errlen)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf) {
        snprintf(err, errlen, "--%s: the list is too long", name);
        return -1;
    }
    l->count = 0;
    char *save = NULL;
    for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        while (*s == ' ')
            s++;
        if (!*s)
            continue;
        if (l->count == SP_CLI_MAX_LIST) {
            snprintf(err, errlen, "--%s: at most %d values", name, SP_CLI_MAX_LIST);
            return -1;
        }
        if (strlen(s) >= sizeof l->items[0]) {
            snprintf(err, errlen, "--%s: a value is too long", name);
            return -1;
        }
        snprintf(l->items[l->count++], sizeof l->items[0], "%s", s);
    }
    if (!l->count) {
        snprintf(err, errlen, "--%s needs at least one value", name);
        return -1;
    }
    return 0;
}

double sp_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sp_cli_run_in_child_rss(const sp_plan *p, double *peak_rss_bytes)
{
    if (peak_rss_bytes)
        *peak_rss_bytes = -1;
    fflush(NULL);
    /* signals wait until the child to pass them to is known */
    block_end_signals(1);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        block_end_signals(0);
        fprintf(stderr, "sparsim: cannot start a run: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        /* dies (cleanly, removing its temporaries) with its parent */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1);
        sp_part_cleanup_on_signals();
        block_end_signals(0);
        int rc = sp_cli_run_one(p);
        fflush(NULL);
        _exit(rc);
    }
    struct sigaction old[NSIG_END];
    fwd_sig = 0;
    forward_to(pid, old);
    block_end_signals(0);
    /* wait without reaping: the pid stays the child's while signals may be
     * passed to it; then stop passing them, and reap */
    siginfo_t info;
    int wr;
    do
        wr = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
    while (wr < 0 && errno == EINTR);
    block_end_signals(1);
    stop_forwarding(old);
    int st = 0;
    struct rusage ru;
    pid_t w = wait4(pid, &st, 0, &ru);
    int sig = fwd_sig;
    if (sig) {
        /* interrupted: the child has removed its temporaries; end as asked */
        sp_cli_remove_outputs(p->out, ".part");
        if (on_interrupt)
            on_interrupt(p, on_interrupt_arg);
        signal(sig, SIG_DFL);
        block_end_signals(0);
        raise(sig);
    }
    block_end_signals(0);
    if (w < 0) {
        fprintf(stderr, "sparsim: lost the run of %s\n", p->algo);
        return 1;
    }
    if (peak_rss_bytes)
        *peak_rss_bytes = (double)ru.ru_maxrss * 1024.0; /* Linux reports KiB */
    if (WIFSIGNALED(st)) {
        sp_cli_remove_outputs(p->out, ".part");
        if (WTERMSIG(st) == SIGKILL)
            fprintf(stderr, "sparsim: the simulation of %s was killed (signal 9: out of memory?); partial outputs "
                            "removed\n",
                    p->algo);
        else
            fprintf(stderr, "sparsim: the simulation of %s crashed (signal %d); partial outputs removed\n", p->algo,
                    WTERMSIG(st));
        return 1;
    }
    return WEXITSTATUS(st);
}
