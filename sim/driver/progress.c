/* progress.c - one line on a terminal while a long run goes (progress.h).
 *
 * The hot path (a message) costs a counter and a compare; the clock is read
 * every 1024 messages and the line redrawn at most five times a second,
 * after the run has gone on for one second.  Time left: from the wall time
 * of the iterations done, the one in progress counted by its messages
 * against the previous iteration's; none before an iteration has ended.
 */
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SHOW_AFTER_S 1.0
#define REDRAW_S 0.2

static struct {
    int fd;       /* the terminal, or -1 */
    int on;       /* a run is going */
    int shown;    /* the line is on the terminal */
    int iters, done;
    uint64_t msgs, at_check, iter_msgs, last_iter_msgs;
    double t_wall0, t_drawn, t_sim, t_iter_wall;
    const char *phase;
    int iter;
} pg = {.fd = -1};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *sp_progress_duration(char *buf, unsigned long n, double s)
{
    if (!(s >= 0) || s > 1e9)
        snprintf(buf, n, "?");
    else if (s < 90)
        snprintf(buf, n, "%.0fs", s);
    else if (s < 5400)
        snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(floor(s), 60));
    else
        snprintf(buf, n, "%.0fh%02.0fm", floor(s / 3600), fmod(floor(s / 60), 60));
    return buf;
}

void sp_progress_enable(int fd) { pg.fd = fd; }

void sp_progress_disable(void)
{
    pg.fd = -1;
    pg.on = 0;
}

void sp_progress_start(int iters)
{
    if (pg.fd < 0)
        return;
    int fd = pg.fd;
    memset(&pg, 0, sizeof pg);
    pg.fd = fd;
    pg.on = 1;
    pg.iters = iters;
    pg.phase = "";
    pg.t_wall0 = pg.t_iter_wall = now();
}

static void draw(double t)
{
    char line[256], left[32] = "", rate[32];
    double el = t - pg.t_wall0;
    double mps = el > 0 ? (double)pg.msgs / el : 0;
    if (mps >= 1e6)
        snprintf(rate, sizeof rate, "%.1fM", mps / 1e6);
    else if (mps >= 1e3)
        snprintf(rate, sizeof rate, "%.1fk", mps / 1e3);
    else
        snprintf(rate, sizeof rate, "%.0f", mps);
    if (pg.done > 0 && pg.iters > 0) {
        double part = pg.last_iter_msgs ? (double)pg.iter_msgs / (double)pg.last_iter_msgs : 0;
        double frac = ((double)pg.done + (part < 0.99 ? part : 0.99)) / pg.iters;
        char d[16];
        if (frac > 0 && frac < 1)
            snprintf(left, sizeof left, ", ~%s left", sp_progress_duration(d, sizeof d, el / frac * (1 - frac)));
    }
    int len = snprintf(line, sizeof line, "\rrun: iteration %d/%d, phase %.40s, simulated %.6g s, %s msgs/s%s\033[K",
                       pg.iter + 1, pg.iters, pg.phase, pg.t_sim, rate, left);
    if (len > 0 && write(pg.fd, line, (size_t)(len < (int)sizeof line ? len : (int)sizeof line - 1)) > 0)
        pg.shown = 1;
    pg.t_drawn = t;
}

static void maybe_draw(void)
{
    double t = now();
    if (t - pg.t_wall0 >= SHOW_AFTER_S && t - pg.t_drawn >= REDRAW_S)
        draw(t);
}

void sp_progress_message(int iter, const char *phase, double t)
{
    if (!pg.on)
        return;
    pg.msgs++;
    pg.iter_msgs++;
    pg.iter = iter;
    pg.phase = phase ? phase : "";
    if (t > pg.t_sim)
        pg.t_sim = t;
    if (pg.msgs - pg.at_check >= 1024) {
        pg.at_check = pg.msgs;
        maybe_draw();
    }
}

void sp_progress_iteration(int iter)
{
    if (!pg.on)
        return;
    pg.done = iter + 1;
    pg.iter = iter + 1 < pg.iters ? iter + 1 : iter;
    pg.last_iter_msgs = pg.iter_msgs;
    pg.iter_msgs = 0;
    maybe_draw();
}

void sp_progress_end(void)
{
    if (pg.on && pg.shown && write(pg.fd, "\r\033[K", 4) < 0)
        pg.shown = 0;
    pg.on = 0;
    pg.shown = 0;
}
