/* child_run.c - what the commands share: one run in a child process, and
 * reading the JSON files runs leave behind.
 *
 * A SimGrid engine runs once per process, so every run of a multi-run
 * command (several algorithms, sweeps, crossover searches) gets a child;
 * a crash inside the engine becomes one clear line instead of a core dump.
 */
#include "cli.h"
#include "../traces/trace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int sp_cli_run_one(const sp_plan *p)
{
    sp_report rep;
    char err[600] = "";
    int rc = sp_run(p, &rep, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "sparsim: %s\n", err);
        sp_report_free(&rep);
        return rc;
    }
    if (!p->quiet)
        sp_print_summary(p, &rep);
    sp_report_free(&rep);
    return 0;
}

double sp_json_num(cJSON *o, const char *a, const char *b)
{
    cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b && x)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

const char *sp_json_str(cJSON *o, const char *a, const char *b)
{
    cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b && x)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : "-";
}

cJSON *sp_json_read(const char *path) { return sp_json_file(path); }

void sp_cli_remove_outputs(const char *dir, const char *suffix)
{
    const char *names[] = {"messages.csv", "trace.json", "summary.json"};
    char path[2200];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, names[i], suffix);
        remove(path);
    }
}

/* Runs one plan in a child process: a SimGrid engine runs once per process,
 * and a crash inside the engine must become one clear line, not a core dump
 * with half-written files. */
int sp_cli_run_in_child(const sp_plan *p) { return sp_cli_run_in_child_rss(p, NULL); }

static void (*on_interrupt)(const sp_plan *, void *);
static void *on_interrupt_arg;

void sp_cli_on_interrupt(void (*fn)(const sp_plan *run, void *arg), void *arg)
{
    on_interrupt = fn;
    on_interrupt_arg = arg;
}

int sp_cli_run_in_child_rss(const sp_plan *p, double *peak_rss_bytes)
{
    if (peak_rss_bytes)
        *peak_rss_bytes = -1;
    fflush(NULL);
    /* signals wait until the child to pass them to is known */
    sp_part_block_signals(1);
    pid_t pid = fork();
    if (pid < 0) {
        sp_part_block_signals(0);
        fprintf(stderr, "sparsim: cannot start a run: fork failed\n");
        return 1;
    }
    if (pid == 0) {
        sp_part_forward_signals_to(0);
        sp_part_block_signals(0);
        int rc = sp_cli_run_one(p);
        fflush(NULL);
        _exit(rc);
    }
    sp_part_forward_signals_to(pid);
    sp_part_block_signals(0);
    /* wait without reaping: the pid stays the child's while signals may be
     * passed to it; then stop passing them, and reap */
    siginfo_t info;
    int wr;
    do
        wr = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
    while (wr < 0 && errno == EINTR);
    sp_part_block_signals(1);
    sp_part_forward_signals_to(0);
    int st = 0;
    struct rusage ru;
    pid_t w = wait4(pid, &st, 0, &ru);
    int sig = sp_part_forwarded_signal();
    if (sig) {
        /* interrupted: the child has removed its temporaries; end as asked */
        sp_cli_remove_outputs(p->out, ".part");
        if (on_interrupt)
            on_interrupt(p, on_interrupt_arg);
        signal(sig, SIG_DFL);
        sp_part_block_signals(0);
        raise(sig);
    }
    sp_part_block_signals(0);
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

