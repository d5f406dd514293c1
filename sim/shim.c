/* shim.c - the backend-independent half of the shim.
 *
 * Everything that must be the same on every backend lives here: argument
 * checks, bytes per phase, one trace event per delivered message, phase spans
 * and modelled compute time.  The backend only moves messages.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sp_rank(const sp_ctx *c) { return c->rank; }
int sp_size(const sp_ctx *c) { return c->size; }
double sp_now(const sp_ctx *c) { return c->be->now(c); }

sp_req *sp_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes)
{
    if (dst < 0 || dst >= c->size || tag < 0) {
        sp_fail(c->run, "rank %d: send to invalid rank %d or tag %d", c->rank, dst, tag);
        return NULL;
    }
    c->ph[c->phase].sent += bytes;
    c->it_msgs++;
    c->it_bytes += bytes;
    double t_post = c->run->csv || c->run->chrome ? c->be->now(c) : 0.0; /* only traces need it */
    return c->be->isend(c, dst, tag, buf, bytes, t_post);
}

sp_req *sp_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    if (src < 0 || src >= c->size || tag < 0) {
        sp_fail(c->run, "rank %d: receive from invalid rank %d or tag %d", c->rank, src, tag);
        return NULL;
    }
    return c->be->irecv(c, src, tag, buf, cap);
}

long long sp_wait(sp_ctx *c, sp_req *r)
{
    size_t sz = 0;
    int rc = c->be->waitall(c, &r, 1, &sz);
    return rc ? rc : (long long)sz;
}

int sp_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    return c->be->waitall(c, reqs, n, sizes);
}

void sp_compute(sp_ctx *c, sp_kernel k, double size)
{
    double t = sp_device_time(c->run->dev, k, size);
    if (t > 0)
        c->be->advance(c, t);
}

int sp_phase_id(sp_runstate *rs, const char *name)
{
    sp_report *rep = rs->rep;
    for (int i = 0; i < rep->nphases; i++)
        if (rep->phase_names[i] == name || strcmp(rep->phase_names[i], name) == 0)
            return i;
    if (rep->nphases == SP_MAX_PHASES) {
        sp_fail(rs, "too many phases (at most %d)", SP_MAX_PHASES);
        return SP_MAX_PHASES - 1;
    }
    rep->phase_names[rep->nphases] = name;
    return rep->nphases++;
}

static void close_phase(sp_ctx *c, double now)
{
    double dt = now - c->phase_t0;
    c->ph[c->phase].time += dt;
    if (dt > 0 && (c->run->chrome || c->run->on_span)) {
        sp_span_event s = {c->iter, c->phase, c->rank, c->phase_t0, now};
        if (c->run->on_span)
            c->run->on_span(c, &s);
        else
            sp_chrome_span(c->run->chrome, &s);
    }
    c->phase_t0 = now;
}

void sp_phase(sp_ctx *c, const char *name)
{
    int id = sp_phase_id(c->run, name);
    if (id == c->phase)
        return;
    close_phase(c, c->be->now(c));
    c->phase = id;
}

/* used by the driver at the end of an iteration */
void sp_phase_close(sp_ctx *c)
{
    close_phase(c, c->be->now(c));
}

void sp_deliver(sp_ctx *c, const sp_msg_event *e)
{
    c->ph[e->phase].recv += e->bytes;
    if (c->run->csv)
        sp_csv_write(c->run->csv, e);
    if (c->run->chrome)
        sp_chrome_msg(c->run->chrome, e);
}

int sp_iter(const sp_ctx *c) { return c->iter; }

void *sp_rank_state(sp_ctx *c, size_t bytes)
{
    if (!c->algo_state)
        c->algo_state = calloc(1, bytes ? bytes : 1);
    return c->algo_state;
}

void sp_stat(sp_ctx *c, const char *name, double value)
{
    sp_report *rep = c->run->rep;
    int id = -1;
    for (int i = 0; i < rep->nstats; i++)
        if (rep->stat_names[i] == name || strcmp(rep->stat_names[i], name) == 0) {
            id = i;
            break;
        }
    if (id < 0) {
        if (rep->nstats == SP_MAX_STATS)
            return; /* silently capped: statistics are reports, not results */
        id = rep->nstats++;
        rep->stat_names[id] = name;
    }
    c->stat_val[id] = value;
    c->stat_set[id] = 1;
}

void sp_fail(sp_runstate *rs, const char *fmt, ...)
{
    if (rs->failed)
        return;
    rs->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rs->errmsg, sizeof rs->errmsg, fmt, ap);
    va_end(ap);
}
