/* part_file.c - outputs that appear only when complete.
 *
 * Every output is written as NAME.part and renamed to NAME when the run has
 * succeeded (rename is atomic within a folder), so a crashed or failed run
 * never leaves a file that looks complete.  The temporaries still open are
 * listed, so that a run ended by a signal (Ctrl-C, mpirun ending a job, the
 * MPI watchdog) removes them instead of leaving NAME.part behind.  (A
 * command that runs simulations in child processes passes such signals on
 * to them: sim/commands/child_run.c.)
 */
#include "trace.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the open temporaries' names; a signal handler reads them */
#define LIVE_MAX 32
static char *volatile live[LIVE_MAX];

static void live_add(char *part)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (!live[i]) {
            live[i] = part;
            return;
        }
}

static void live_drop(const char *part)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live[i] == part)
            live[i] = NULL;
}

void sp_part_remove_all(void)
{
    for (int i = 0; i < LIVE_MAX; i++) {
        char *p = live[i];
        if (p)
            unlink(p);
    }
}

static void on_fatal_signal(int sig)
{
    sp_part_remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

void sp_part_cleanup_on_signals(void)
{
    static int at_exit;
    if (!at_exit) /* for handlers that call exit(), as SimGrid's SIGINT handler does */
        at_exit = atexit(sp_part_remove_all) == 0;
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (int i = 0; i < 4; i++) {
        struct sigaction old;
        /* a signal the caller ignores stays ignored (nohup, background jobs) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

int sp_part_open(sp_part_file *pf, const char *path, char *err, size_t errlen)
{
    memset(pf, 0, sizeof *pf);
    size_t pl = strlen(path) + 6;
    pf->path = strdup(path);
    pf->part = malloc(pl);
    if (!pf->path || !pf->part) {
        free(pf->path);
        free(pf->part);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(pf->part, pl, "%s.part", path);
    pf->f = fopen(pf->part, "w");
    if (!pf->f) {
        snprintf(err, errlen, "cannot write %s: %s", pf->part, strerror(errno));
        free(pf->path);
        free(pf->part);
        return -1;
    }
    live_add(pf->part);
    return 0;
}

int sp_part_close(sp_part_file *pf, int ok, char *err, size_t errlen)
{
    int rc = 0;
    if (ferror(pf->f) | (fclose(pf->f) != 0)) {
        if (ok)
            snprintf(err, errlen, "error writing %s", pf->part);
        rc = ok ? -1 : 0;
        ok = 0;
    }
    if (ok && rename(pf->part, pf->path) != 0) {
        snprintf(err, errlen, "cannot rename %s: %s", pf->part, strerror(errno));
        rc = -1;
    }
    if (!ok)
        remove(pf->part);
    live_drop(pf->part);
    free(pf->path);
    free(pf->part);
    memset(pf, 0, sizeof *pf);
    return rc;
}
