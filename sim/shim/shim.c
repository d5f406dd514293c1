/* shim.c - the backend-independent half of the shim.
 *
 * Everything that must be the same on every backend lives here: argument
 * checks, one error flow (a send or receive that cannot be posted yields a
 * request whose wait reports the error, never NULL), the rank's phase, and
 * the events (a delivered message, a closed phase span, a recorded figure)
 * that go into the run's sink.  The backend only moves messages.
 */
#include "backend.h"
#include "disturb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The request a failed post returns: its wait reports SP_ERR_COMM. */
static char failed_request;
#define FAILED ((sp_req *)&failed_request)

int sp_rank(const sp_ctx *c) { return c->grp_size ? (c->rank - c->grp_first) / c->grp_stride : c->rank; }
int sp_size(const sp_ctx *c) { return c->grp_size ? c->grp_size : c->size; }
int sp_node_size(const sp_ctx *c) { return c->shim->gpus_per_node > 1 ? c->shim->gpus_per_node : 1; }

int sp_group_enter(sp_ctx *c, int first, int stride, int count)
{
    long long last = (long long)first + (long long)(count - 1) * stride;
    if (first < 0 || stride < 1 || count < 1 || last >= c->size || c->rank < first || c->rank > last ||
        (c->rank - first) % stride)
        return SP_ERR_ARG;
    c->grp_first = first;
    c->grp_stride = stride;
    c->grp_size = count;
    return SP_OK;
}

void sp_group_leave(sp_ctx *c) { c->grp_size = 0; }

/* a rank of the current group as the run's rank; -1 when out of it */
static int world_rank(const sp_ctx *c, int r)
{
    if (r < 0 || r >= sp_size(c))
        return -1;
    return c->grp_size ? c->grp_first + r * c->grp_stride : r;
}
double sp_now(const sp_ctx *c) { return c->be->now(c); }
int sp_iter(const sp_ctx *c) { return c->iter; }

sp_req *sp_isend(sp_ctx *c, int to, int tag, const void *buf, size_t bytes)
{
    int dst = world_rank(c, to);
    if (dst < 0 || tag < 0) {
        sp_fail(c->shim, "rank %d: send to invalid rank %d or tag %d", c->rank, to, tag);
        return FAILED;
    }
    if (c->shim->disturb) { /* a detour holds the rank before it can post */
        double held = sp_disturb_hold(c->shim->disturb, c, c->be->now(c));
        if (held > 0)
            c->be->advance(c, held);
    }
    double t_post = c->shim->want_times ? c->be->now(c) : 0.0; /* only traces need it */
    sp_req *r = c->be->isend(c, dst, tag, buf, bytes, t_post);
    if (!r) {
        sp_fail(c->shim, "rank %d: could not post a send of %zu bytes to rank %d (iteration %d)", c->rank, bytes,
                dst, c->iter);
        return FAILED;
    }
    return r;
}

int sp_node_switch(const sp_ctx *c) { return c->shim->node_switch && c->be->switch_push; }

sp_req *sp_switch_push(sp_ctx *c, int tag, const float *buf, uint64_t count, int pushes, int to)
{
    int G = sp_node_size(c);
    if (!sp_node_switch(c)) {
        sp_fail(c->shim, "rank %d: no switch of its node reduces (NVLS runs on the simulated dgx-*, roce platforms)",
                c->rank);
        return FAILED;
    }
    if (tag < 0 || pushes < 1 || pushes > G || to < SP_SWITCH_ALL || to >= G) {
        sp_fail(c->shim, "rank %d: switch push with tag %d, %d pushes, to %d on nodes of %d", c->rank, tag, pushes,
                to, G);
        return FAILED;
    }
    double t_post = c->shim->want_times ? c->be->now(c) : 0.0;
    sp_req *r = c->be->switch_push(c, tag, buf, count * sizeof(float), pushes, to, t_post);
    if (!r) {
        sp_fail(c->shim, "rank %d: could not push %llu floats to its switch (iteration %d)", c->rank,
                (unsigned long long)count, c->iter);
        return FAILED;
    }
    return r;
}

sp_req *sp_irecv(sp_ctx *c, int from, int tag, void *buf, size_t cap)
{
    int src = from == SP_SWITCH && sp_node_switch(c) ? SP_SWITCH : world_rank(c, from);
    if ((src < 0 && src != SP_SWITCH) || tag < 0) {
        sp_fail(c->shim, "rank %d: receive from invalid rank %d or tag %d", c->rank, from, tag);
        return FAILED;
    }
    sp_req *r = c->be->irecv(c, src, tag, buf, cap);
    if (!r) {
        sp_fail(c->shim, "rank %d: could not post a receive from rank %d (iteration %d)", c->rank, src, c->iter);
        return FAILED;
    }
    return r;
}

int sp_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    int failed = 0;
    for (int i = 0; i < n; i++)
        if (reqs[i] == FAILED) {
            reqs[i] = NULL; /* the others are still waited for: their buffers stay in use until then */
            failed = 1;
        }
    int rc = c->be->waitall(c, reqs, n, sizes);
    if (c->shim->disturb) { /* a detour under way when the wait ends holds the rank until its end */
        double held = sp_disturb_hold(c->shim->disturb, c, c->be->now(c));
        if (held > 0)
            c->be->advance(c, held);
    }
    return failed ? SP_ERR_COMM : rc;
}

long long sp_wait(sp_ctx *c, sp_req *r)
{
    size_t sz = 0;
    int rc = sp_waitall(c, &r, 1, &sz);
    return rc ? rc : (long long)sz;
}

void sp_compute(sp_ctx *c, sp_kernel k, double size)
{
    static const sp_device_kernel dev_kernel[SP_K_COUNT] = {
        [SP_K_TOPK] = SP_DEV_TOPK,           [SP_K_THRESHOLD] = SP_DEV_THRESHOLD,
        [SP_K_SCATTER_ADD] = SP_DEV_SCATTER_ADD, [SP_K_MERGE] = SP_DEV_MERGE,
        [SP_K_DENSE_SUM] = SP_DEV_DENSE_SUM, [SP_K_COPY] = SP_DEV_COPY,
        [SP_K_FUSED_SUM] = SP_DEV_FUSED_SUM,
    };
    if ((unsigned)k >= SP_K_COUNT)
        return;
    double t = sp_device_time(c->shim->dev, dev_kernel[k], size);
    if (t > 0 && c->shim->disturb)
        t = sp_disturb_compute(c->shim->disturb, c, t);
    if (t > 0)
        c->be->advance(c, t);
}

void sp_compute_flops(sp_ctx *c, double flops, double bytes)
{
    double t = sp_device_flops_time(c->shim->dev, flops, bytes);
    if (t > 0 && c->shim->disturb)
        t = sp_disturb_compute(c->shim->disturb, c, t);
    if (t > 0)
        c->be->advance(c, t);
}

void sp_shim_compute_seconds(sp_ctx *c, double seconds)
{
    double t = seconds;
    if (t > 0 && c->shim->disturb)
        t = sp_disturb_compute(c->shim->disturb, c, t);
    if (t > 0)
        c->be->advance(c, t);
}

int sp_phase_id(sp_shim *sh, const char *name)
{
    sp_report *rep = sh->rep;
    for (int i = 0; i < rep->nphases; i++)
        if (rep->phase_names[i] == name || strcmp(rep->phase_names[i], name) == 0)
            return i;
    if (rep->nphases == SP_MAX_PHASES) {
        sp_fail(sh, "too many phases (at most %d)", SP_MAX_PHASES);
        return SP_MAX_PHASES - 1;
    }
    rep->phase_names[rep->nphases] = name;
    return rep->nphases++;
}

static void close_phase(sp_ctx *c, double now)
{
    sp_span_event s = {c->iter, c->phase, c->rank, c->phase_t0, now};
    c->shim->sink.span(c->shim->sink.to, &s);
    if (c->shim->disturb)
        sp_disturb_phase_closed(c->shim->disturb, c, c->iter, c->phase, now);
    c->phase_t0 = now;
}

void sp_phase(sp_ctx *c, const char *name)
{
    int id = sp_phase_id(c->shim, name);
    if (id == c->phase)
        return;
    close_phase(c, c->be->now(c));
    c->phase = id;
}

void sp_shim_iteration_begin(sp_ctx *c, int iter, int phase)
{
    c->iter = iter;
    c->phase = phase;
    c->phase_t0 = c->be->now(c);
    if (c->shim->disturb)
        sp_disturb_iteration_begin(c->shim->disturb, c);
}

void sp_shim_iteration_end(sp_ctx *c) { close_phase(c, c->be->now(c)); }

void sp_shim_sync(sp_ctx *c, void (*last)(void *arg), void *arg) { c->be->barrier(c, last, arg); }

void sp_deliver(sp_ctx *c, const sp_msg_event *e) { c->shim->sink.message(c->shim->sink.to, e); }

void *sp_rank_state(sp_ctx *c, size_t bytes)
{
    if (!c->algo_state)
        c->algo_state = calloc(1, bytes ? bytes : 1);
    return c->algo_state;
}

void sp_stat(sp_ctx *c, const char *name, double value)
{
    sp_report *rep = c->shim->rep;
    int id = -1;
    for (int i = 0; i < rep->nstats; i++)
        if (rep->stat_names[i] == name || strcmp(rep->stat_names[i], name) == 0) {
            id = i;
            break;
        }
    if (id < 0) {
        if (rep->nstats == SP_MAX_STATS)
            return; /* capped: statistics are reports, not results */
        id = rep->nstats++;
        rep->stat_names[id] = name;
    }
    sp_stat_event e = {c->iter, c->rank, id, value};
    c->shim->sink.stat(c->shim->sink.to, &e);
}

void sp_fail(sp_shim *sh, const char *fmt, ...)
{
    if (sh->failed)
        return;
    sh->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->errmsg, sizeof sh->errmsg, fmt, ap);
    va_end(ap);
}

double sp_overhead_send(const sp_ctx *c, size_t bytes)
{
    const sp_device *d = c->shim->dev;
    return d ? d->send_o + sp_device_copy_time(d, (double)bytes) : 0.0;
}

double sp_overhead_wait(const sp_ctx *c) { return c->shim->dev ? c->shim->dev->call_o : 0.0; }

double sp_overhead_received(const sp_ctx *c, long long bytes)
{
    const sp_device *d = c->shim->dev;
    return d && bytes >= 0 ? d->recv_o + sp_device_copy_time(d, (double)bytes) : 0.0;
}
