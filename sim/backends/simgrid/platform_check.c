/* platform_check.c - a user platform file tried before the run loads it.
 *
 * SimGrid 3.32 ends some parse errors with abort(), and crashes on traffic
 * over a dragonfly it accepted but cannot route; either would take the run
 * down without a clear message.  So a user file is read for the dragonfly
 * it cannot route, then loaded once in a child process whose death is
 * reported as one line naming the file and SimGrid's complaint.
 */
#include "simgrid_internal.h"

#include <simgrid/engine.h>
#include <xbt/log.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* SimGrid 3.32 silently needs groups <= routers per chassis in a dragonfly
 * and crashes on traffic otherwise: refuse such a file up front. */
static int check_dragonfly_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int rc = 0;
    while (fgets(line, sizeof line, f) && rc == 0) {
        const char *t = strstr(line, "topo_parameters=\"");
        if (!t || !strstr(line, "DRAGONFLY"))
            continue;
        int g, bl, c, k, r, gl, nodes;
        if (sscanf(t + 17, "%d,%d;%d,%d;%d,%d;%d", &g, &bl, &c, &k, &r, &gl, &nodes) == 7 && g > r) {
            snprintf(err, errlen,
                     "invalid platform file '%s': dragonfly with %d groups but %d routers per chassis (SimGrid "
                     "3.32 needs groups <= routers per chassis)",
                     path, g, r);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

/* Loads a user platform in a child process first: SimGrid ends some parse
 * errors with abort(), which must not take the run down without a clear
 * message.  Returns 0 if it loads. */
static int check_platform_in_child(const char *path, char *err, size_t errlen)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0; /* cannot check; the real load still reports exceptions */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        dup2(fds[1], 1);
        int argc = 1;
        char *argv[] = {"sparsim", NULL};
        xbt_log_control_set("root.thresh:critical");
        /* the trial holds nothing to clean up: it dies with the run, and an
         * interrupt ends it outright, never in SimGrid's handler (which
         * calls exit() from inside the handler) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigset_t ends, before;
        sigemptyset(&ends);
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        for (int i = 0; i < 4; i++)
            sigaddset(&ends, sigs[i]);
        sigprocmask(SIG_BLOCK, &ends, &before);
        simgrid_init(&argc, argv);
        for (int i = 0; i < 4; i++) {
            struct sigaction old;
            if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
                signal(sigs[i], SIG_DFL);
        }
        sigprocmask(SIG_SETMASK, &before, NULL);
        char e[512] = "";
        if (spg_load_platform(path, e, sizeof e) != 0) {
            fprintf(stderr, "[root/CRITICAL] %s\n", e);
            fflush(stderr);
            _exit(3);
        }
        _exit(0);
    }
    close(fds[1]);
    char buf[8192];
    size_t len = 0;
    ssize_t got;
    while ((got = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0 && len < sizeof buf - 1)
        len += (size_t)got;
    buf[len] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    const char *msg = strstr(buf, "CRITICAL] ");
    char line[400] = "SimGrid could not load it";
    if (msg) {
        msg += 10;
        size_t n = strcspn(msg, "\n");
        if (n >= sizeof line)
            n = sizeof line - 1;
        memcpy(line, msg, n);
        line[n] = '\0';
    }
    snprintf(err, errlen, "invalid platform file '%s': %s", path, line);
    return -1;
}

int spg_check_platform_file(const char *path, char *err, size_t errlen)
{
    return check_dragonfly_text(path, err, errlen) != 0 || check_platform_in_child(path, err, errlen) != 0 ? -1 : 0;
}
