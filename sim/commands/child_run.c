/* child_run.c - one run in a child process, as every command runs them.
 *
 * A SimGrid engine runs once per process, so every run of a multi-run
 * command (several algorithms, sweeps, crossover searches) gets a child, and
 * `sparsim run` uses one too: a crash inside the engine becomes one clear
 * line instead of a core dump.  While the child runs, the parent passes the
 * signals that end a run (interrupt, termination, hang-up, quit) on to it, so
 * that the child removes its temporaries.
 *
 * The child dies with its parent: a parent killed outright (SIGKILL, which
 * it cannot pass on) takes the run along by a death signal of the child's
 * own, which no inherited disposition ignores; and the child publishes its
 * outputs (renames them from NAME.part, all at once) only while its parent
 * is still there, so a run whose command has ended never appears complete.
 *
 * The child's stderr goes through the parent: a run that succeeds shows
 * what the child said (SimGrid's warnings); one that fails shows one line,
 * the child's own or, for a crash, one the parent makes from what SimGrid
 * said last.  A sanitizer's report passes whole.
 */
#include "cli.h"
#include "traces/trace.h"
#include "sim/driver/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const int sp_end_signals[SP_NSIG_END] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static volatile pid_t fwd_child;
static volatile sig_atomic_t fwd_sig;

static void forward(int sig)
{
    fwd_sig = sig;
    if (fwd_child > 0)
        kill(fwd_child, sig);
}

void sp_block_end_signals(int block)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < SP_NSIG_END; i++)
        sigaddset(&set, sp_end_signals[i]);
    sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* passes the signals to `child` (saving the previous handlers in old);
 * signals the caller ignores stay ignored (nohup, background jobs) */
static void forward_to(pid_t child, struct sigaction *old)
{
    fwd_child = child;
    for (int i = 0; i < SP_NSIG_END; i++) {
        sigaction(sp_end_signals[i], NULL, &old[i]);
        if (old[i].sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = forward;
        sa.sa_flags = SA_RESTART; /* the parent's wait goes on after passing a signal */
        sigemptyset(&sa.sa_mask);
        sigaction(sp_end_signals[i], &sa, NULL);
    }
}

static void stop_forwarding(const struct sigaction *old)
{
    for (int i = 0; i < SP_NSIG_END; i++)
        sigaction(sp_end_signals[i], &old[i], NULL);
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
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/summary.json", p->out);
    *summary = sp_json_file_checked(path, (size_t)1 << 30, err, sizeof err);
    if (!*summary) {
        sp_opts_print_error(err);
        return 1;
    }
    return 0;
}

cJSON *sp_cli_read_summary(const sp_plan *p)
{
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/summary.json", p->out);
    cJSON *s = sp_json_file_checked(path, (size_t)1 << 30, err, sizeof err);
    if (!s)
        sp_opts_print_error(err);
    return s;
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

/* ---- in the child ---------------------------------------------------------- */

/* the parent a run's child must outlive to publish; 0 outside such a child */
static pid_t child_of;

/* the parent has died: the run goes with it, leaving nothing */
static void parent_gone(int sig)
{
    (void)sig;
    sp_part_remove_all();
    _exit(1);
}

/* its own signal, not one a user sends or a shell ignores for background jobs */
static int death_signal(void) { return SIGRTMIN + 3; }

int sp_cli_run_one(const sp_plan *p)
{
    sp_report rep;
    char err[600] = "";
    sp_part_hold(); /* every output stays NAME.part until the run has succeeded */
    sp_progress_start(p->iters);
    sp_error e;
    int rc = sp_run(p, &rep, &e);
    if (rc != 0)
        snprintf(err, sizeof err, "%s", e.msg);
    sp_progress_end();
    if (rc == 0 && !p->quiet) {
        /* the summary is part of what was asked: a stdout that cannot take
         * it fails the run before anything is published */
        sp_cli_print_summary(p, &rep, "simgrid");
        if (fflush(stdout) != 0 || ferror(stdout)) {
            snprintf(err, sizeof err, "cannot write the summary on stdout: %s", strerror(errno));
            rc = 1;
        }
    }
    if (rc == 0) {
        /* no signal between the check and the renames: all or nothing */
        sigset_t set, old;
        sigemptyset(&set);
        for (int i = 0; i < SP_NSIG_END; i++)
            sigaddset(&set, sp_end_signals[i]);
        sigaddset(&set, death_signal());
        sigprocmask(SIG_BLOCK, &set, &old);
        if (child_of && getppid() != child_of) {
            sp_part_discard();
            snprintf(err, sizeof err, "the command that started the run of %s has ended; nothing published", p->algo);
            rc = 1;
        } else if (sp_part_publish(err, sizeof err) != 0) {
            rc = 1;
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
    } else {
        sp_part_discard();
    }
    if (rc != 0)
        sp_opts_print_error(err);
    sp_report_free(&rep);
    return rc;
}

/* ---- in the parent: what the child says on stderr --------------------------- */

#define KEEP_BYTES (64 * 1024) /* of a successful run's messages, passed on */
#define LINE_MAX_KEPT 2048

typedef struct {
    char *text; /* the first KEEP_BYTES bytes */
    size_t len, dropped;
    char line[LINE_MAX_KEPT]; /* the line being read */
    size_t line_len;
    char own[LINE_MAX_KEPT];   /* the child's last "sparsim: " line */
    char simgrid[LINE_MAX_KEPT]; /* SimGrid's first critical message */
    int sanitizer;             /* a sanitizer's report: passed on whole */
} said_t;

static void end_line(said_t *s)
{
    s->line[s->line_len] = '\0';
    const char *l = s->line, *c;
    if (strncmp(l, "sparsim: ", 9) == 0)
        snprintf(s->own, sizeof s->own, "%s", l);
    else if (!s->simgrid[0] && (c = strstr(l, "CRITICAL] ")))
        snprintf(s->simgrid, sizeof s->simgrid, "%s", c + 10);
    if (strstr(l, "Sanitizer") || strstr(l, "runtime error:"))
        s->sanitizer = 1;
    s->line_len = 0;
}

static void heard(said_t *s, const char *buf, size_t n)
{
    size_t keep = n < KEEP_BYTES - s->len ? n : KEEP_BYTES - s->len;
    if (s->text && keep) {
        memcpy(s->text + s->len, buf, keep);
        s->len += keep;
    }
    s->dropped += n - keep;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n')
            end_line(s);
        else if (s->line_len < sizeof s->line - 1)
            s->line[s->line_len++] = buf[i];
    }
}

/* reads what the child says until it ends (the pipe closes, or the child has
 * exited and nothing more is there: a grandchild may hold the pipe open);
 * the child is not reaped */
static void listen_to(pid_t pid, int fd, said_t *s)
{
    char buf[4096];
    while (fd >= 0) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, 250);
        if (pr > 0) {
            ssize_t got = read(fd, buf, sizeof buf);
            if (got > 0) {
                heard(s, buf, (size_t)got);
                continue;
            }
            if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(fd);
                fd = -1;
                break;
            }
        }
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
            ssize_t got;
            while ((got = read(fd, buf, sizeof buf)) > 0)
                heard(s, buf, (size_t)got);
            close(fd);
            fd = -1;
        }
    }
    if (s->line_len)
        end_line(s);
    /* wait without reaping: the pid stays the child's while signals may be
     * passed to it */
    siginfo_t info;
    int wr;
    do
        wr = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
    while (wr < 0 && errno == EINTR);
}

/* removes what a run that did not finish may have left: its temporaries
 * (a child killed outright cannot remove them itself) */
static void remove_partials(const sp_plan *p)
{
    sp_cli_remove_outputs(p->out, ".part");
    const char *dumps[] = {p->dump_result, p->dump_grads};
    char path[1100];
    for (int i = 0; i < 2; i++)
        if (dumps[i][0] && (size_t)snprintf(path, sizeof path, "%s.part", dumps[i]) < sizeof path)
            unlink(path);
}

int sp_cli_run_in_child_rss(const sp_plan *p, double *peak_rss_bytes)
{
    if (peak_rss_bytes)
        *peak_rss_bytes = -1;
    fflush(NULL);
    int fds[2] = {-1, -1};
    if (pipe(fds) != 0)
        fds[0] = fds[1] = -1; /* the child then speaks on stderr itself */
    for (int i = 0; i < 2; i++) /* later children must not hold this one's pipe */
        if (fds[i] >= 0)
            fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    /* signals wait until the child to pass them to is known */
    sp_block_end_signals(1);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        sp_block_end_signals(0);
        if (fds[0] >= 0) {
            close(fds[0]);
            close(fds[1]);
        }
        char msg[300];
        snprintf(msg, sizeof msg, "cannot start the run of %s: fork failed: %s", p->algo, strerror(errno));
        sp_opts_print_error(msg);
        return 1;
    }
    if (pid == 0) {
        /* dies with its parent, removing its temporaries */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = parent_gone;
        sigemptyset(&sa.sa_mask);
        sigaction(death_signal(), &sa, NULL);
        prctl(PR_SET_PDEATHSIG, death_signal());
        if (getppid() != parent)
            _exit(1);
        child_of = parent;
        if (fds[1] >= 0) {
            dup2(fds[1], 2);
            close(fds[0]);
            close(fds[1]);
            signal(SIGPIPE, SIG_IGN); /* a parent gone mid-line: the death signal ends the run, not this */
        }
        sp_part_cleanup_on_signals();
        sp_block_end_signals(0);
        int rc = sp_cli_run_one(p);
        fflush(NULL);
        _exit(rc);
    }
    said_t *said = calloc(1, sizeof *said);
    if (said)
        said->text = malloc(KEEP_BYTES);
    struct sigaction old[SP_NSIG_END];
    fwd_sig = 0;
    forward_to(pid, old);
    sp_block_end_signals(0);
    if (fds[1] >= 0)
        close(fds[1]);
    if (said && fds[0] >= 0) {
        listen_to(pid, fds[0], said);
    } else {
        if (fds[0] >= 0)
            close(fds[0]); /* no memory to listen: the child's stderr goes nowhere, its status still counts */
        siginfo_t info;
        int wr;
        do
            wr = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
        while (wr < 0 && errno == EINTR);
    }
    sp_block_end_signals(1);
    stop_forwarding(old);
    int st = 0;
    struct rusage ru;
    pid_t w = wait4(pid, &st, 0, &ru);
    int sig = fwd_sig;
    if (sig) {
        /* interrupted: the child has removed its temporaries; end as asked */
        if (said && said->sanitizer)
            fwrite(said->text, 1, said->len, stderr);
        remove_partials(p);
        if (on_interrupt)
            on_interrupt(p, on_interrupt_arg);
        signal(sig, SIG_DFL);
        sp_block_end_signals(0);
        raise(sig);
    }
    sp_block_end_signals(0);
    int rc;
    char msg[LINE_MAX_KEPT + 600];
    if (w < 0) {
        snprintf(msg, sizeof msg, "lost the run of %s: %s", p->algo, strerror(errno));
        sp_opts_print_error(msg);
        rc = 1;
    } else if (said && said->sanitizer) {
        fwrite(said->text, 1, said->len, stderr); /* a report is read whole */
        rc = WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1;
    } else if (WIFSIGNALED(st)) {
        remove_partials(p);
        int s = WTERMSIG(st);
        const char *why = s == SIGKILL ? " (killed: out of memory?)" : "";
        if (said && said->simgrid[0])
            snprintf(msg, sizeof msg, "the simulation of %s crashed (signal %d, %s%s) after SimGrid said: %s; partial "
                                      "outputs removed",
                     p->algo, s, strsignal(s), why, said->simgrid);
        else
            snprintf(msg, sizeof msg, "the simulation of %s crashed (signal %d, %s%s); partial outputs removed",
                     p->algo, s, strsignal(s), why);
        sp_opts_print_error(msg);
        rc = 1;
    } else if (WEXITSTATUS(st) != 0) {
        rc = WEXITSTATUS(st);
        if (said && said->own[0]) {
            fprintf(stderr, "%s\n", said->own); /* the child's line, escaped already */
        } else {
            if (said && said->simgrid[0])
                snprintf(msg, sizeof msg, "the simulation of %s failed (exit status %d) after SimGrid said: %s",
                         p->algo, rc, said->simgrid);
            else
                snprintf(msg, sizeof msg, "the simulation of %s failed (exit status %d)", p->algo, rc);
            sp_opts_print_error(msg);
        }
        if (rc != 2)
            rc = 1;
        remove_partials(p);
    } else {
        rc = 0;
        if (said && said->len) {
            fwrite(said->text, 1, said->len, stderr);
            if (said->dropped)
                fprintf(stderr, "sparsim: (%zu more bytes of the run's messages not shown)\n", said->dropped);
        }
    }
    if (peak_rss_bytes && w >= 0)
        *peak_rss_bytes = (double)ru.ru_maxrss * 1024.0; /* Linux reports KiB */
    if (said)
        free(said->text);
    free(said);
    return rc;
}
