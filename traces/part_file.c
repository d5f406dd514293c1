/* part_file.c - outputs that appear only when complete.
 *
 * Every output is written as NAME.part and renamed to NAME when the run has
 * succeeded (rename is atomic within a folder), so a crashed or failed run
 * never leaves a file that looks complete.  The temporaries still open are
 * listed, so that a run ended by a signal (Ctrl-C, mpirun ending a job, the
 * MPI watchdog) removes them instead of leaving NAME.part behind.  (A
 * command that runs simulations in child processes passes such signals on
 * to them: sim/commands/child_run.c.)
 *
 * A process that writes several outputs can hold them (sp_part_hold): each
 * then stays NAME.part when closed, still listed, until sp_part_publish
 * renames them all at once, or sp_part_discard removes them, so that a run
 * whose last step fails publishes none of its outputs.
 *
 * The temporary is created afresh (O_EXCL, O_NOFOLLOW): a file or a link
 * already at NAME.part is removed first, never followed or written through,
 * and rename() replaces whatever is at NAME (a link included) without
 * following it.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the temporaries not yet renamed or removed; a signal handler reads them */
#define LIVE_MAX 32
static char *volatile live[LIVE_MAX];
/* held ones, closed and waiting to be published, with their final names */
static char *held_part[LIVE_MAX], *held_path[LIVE_MAX];
static int holding;

static int live_add(char *part)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (!live[i]) {
            live[i] = part;
            return 0;
        }
    return -1;
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
    /* listed before it exists, so that no signal can leave it behind */
    if (live_add(pf->part) != 0) {
        snprintf(err, errlen, "cannot write %s: too many outputs open at once", pf->part);
        free(pf->path);
        free(pf->part);
        return -1;
    }
    int fd = -1;
    if (unlink(pf->part) == 0 || errno == ENOENT)
        fd = open(pf->part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 || !(pf->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", pf->part, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(pf->part);
        }
        live_drop(pf->part);
        free(pf->path);
        free(pf->part);
        memset(pf, 0, sizeof *pf);
        return -1;
    }
    return 0;
}

int sp_part_close(sp_part_file *pf, int ok, char *err, size_t errlen)
{
    int rc = 0;
    /* written out and on the disk: a full disk shows here, not after the rename */
    int bad = fflush(pf->f) != 0 || ferror(pf->f) || (ok && fsync(fileno(pf->f)) != 0 && errno != EINVAL);
    int e = errno;
    if (fclose(pf->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        if (ok)
            snprintf(err, errlen, "error writing %s: %s", pf->part, strerror(e));
        rc = ok ? -1 : 0;
        ok = 0;
    }
    if (ok && holding) {
        for (int i = 0; i < LIVE_MAX; i++)
            if (!held_part[i]) {
                held_part[i] = pf->part;
                held_path[i] = pf->path;
                memset(pf, 0, sizeof *pf);
                return 0;
            }
        snprintf(err, errlen, "cannot keep %s: too many outputs", pf->part);
        rc = -1;
        ok = 0;
    }
    if (ok && rename(pf->part, pf->path) != 0) {
        snprintf(err, errlen, "cannot rename %s: %s", pf->part, strerror(errno));
        rc = -1;
        ok = 0;
    }
    if (!ok)
        unlink(pf->part);
    live_drop(pf->part);
    free(pf->path);
    free(pf->part);
    memset(pf, 0, sizeof *pf);
    return rc;
}

/* another temporary the signal handlers remove (a generated platform file),
 * kept by name until untracked */
static char *tracked[4];

int sp_part_track(const char *path)
{
    for (int i = 0; i < 4; i++)
        if (!tracked[i]) {
            if (!(tracked[i] = strdup(path)))
                return -1;
            if (live_add(tracked[i]) != 0) {
                free(tracked[i]);
                tracked[i] = NULL;
                return -1;
            }
            return 0;
        }
    return -1;
}

void sp_part_untrack(const char *path)
{
    for (int i = 0; i < 4; i++)
        if (tracked[i] && strcmp(tracked[i], path) == 0) {
            live_drop(tracked[i]);
            free(tracked[i]);
            tracked[i] = NULL;
        }
}

void sp_part_hold(void) { holding = 1; }

/* removes the held temporaries from index `from` on */
static void drop_held(int from)
{
    for (int i = from; i < LIVE_MAX; i++)
        if (held_part[i]) {
            unlink(held_part[i]);
            live_drop(held_part[i]);
            free(held_part[i]);
            free(held_path[i]);
            held_part[i] = held_path[i] = NULL;
        }
}

int sp_part_publish(char *err, size_t errlen)
{
    holding = 0;
    for (int i = 0; i < LIVE_MAX; i++) {
        if (!held_part[i])
            continue;
        if (rename(held_part[i], held_path[i]) != 0) {
            snprintf(err, errlen, "cannot rename %s: %s", held_part[i], strerror(errno));
            /* none or all: what was renamed already goes too */
            for (int j = 0; j < i; j++)
                if (held_path[j]) {
                    unlink(held_path[j]);
                    free(held_path[j]);
                    held_path[j] = NULL;
                }
            drop_held(i);
            return -1;
        }
        live_drop(held_part[i]);
        free(held_part[i]);
        held_part[i] = NULL;
    }
    for (int i = 0; i < LIVE_MAX; i++) {
        free(held_path[i]);
        held_path[i] = NULL;
    }
    return 0;
}

void sp_part_discard(void)
{
    holding = 0;
    drop_held(0);
}
