/* flow_engine.c - `--engine flow`: the ranks and their messages on sparsim's
 * own discrete-event loop, the sharing of the links by fluid.c, the platform
 * and its routes from SimGrid.
 *
 * Why it exists: on SimGrid every message is an activity, a mailbox
 * match, a pair of simcalls, lmm variables and an action in the network
 * model's heap; at thousands of ranks that per-message machinery, not the
 * network's physics, is the run (bench/README.md, sections 18 and 28).
 * Here a message is one record and one flow, a rank is a coroutine
 * (coro.h), and the loop below is the whole scheduler.
 *
 * It keeps the SimGrid backend's semantics (transport.c), so that the two
 * give the same simulated times:
 *  - a receiver holds as many receive slots ("gets") open as it has
 *    receives posted and unmatched; a message starts moving when it meets a
 *    free slot of its destination, oldest first, and waits in the
 *    destination's queue while there is none (SimGrid's mailbox rendezvous);
 *  - a send completes when its message is through, with the receive;
 *  - a completed slot is looked at when its rank next waits (a rank busy
 *    computing opens no new slot), and held back while an earlier slot still
 *    carries a message of the same sender (non-overtaking);
 *  - host overheads and the device's copies as transport.c prices them.
 * The loop: run every ready rank until it blocks; re-solve the sharing once
 * for everything they posted; jump to the next event (a flow's latency over,
 * a flow through, a rank's sleep over); repeat until nothing is left.
 *
 * --unshared-below as the SimGrid backend's postbox.c has it: a small
 * message skips the sharing, its send completes at once and it is due at
 * its receiver when spg_unshared_arrival says.
 * Not here (the plan refuses them with --engine flow): degraded links,
 * other jobs' traffic and a failed rank (disturbances that live in the
 * network), the nodes' reducing switches (NVLS).
 */
#include "coro.h"
#include "sections.h"
#include "fluid.h"
#include "routes.h"
#include "flow_engine.h"
#include "sim/shim/disturb.h"
#include "sim/backends/simgrid/simgrid_glue.h"

#include <simgrid/host.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each rank's stack.  The deepest a rank's frames reach is about 9.5 KB
 * (every scheme at P = 64 to 1024, exact and model payloads, the node-aware
 * forms; measured from the stacks' untouched bytes), so 32 KiB less its
 * guard page leaves room twice over, and an overflow still meets the guard
 * (coro.c says so in one line).  Small stacks pay at thousands of ranks:
 * the ring at P = 8192 ran 1.17-1.21x faster alone than on 1 MiB stacks
 * (bench/README.md, section 32; section 33: what a switch still costs is
 * the cold lines of the stack's top, huge pages or not).
 * (coro.c gives 1 MiB under AddressSanitizer.) */
#define SPF_RANK_STACK ((size_t)32 << 10)

enum { R_READY, R_RUN, R_WAIT, R_SLEEP, R_BARRIER, R_DONE };

typedef struct fmsg {
    int src, dst, tag, iter, phase;
    uint64_t bytes;
    double t_post, t_done;
    sp_path path;
    int has_data;
    struct fmsg *next;  /* the destination's queue of unmatched sends, or its unexpected messages */
    struct sp_req *sreq; /* the sender's request */
    struct fget *get;    /* the slot it met */
    unsigned char data[];
} fmsg;

typedef struct fget {
    fmsg *m;       /* its message, NULL while free */
    int through;   /* the message's flow has ended */
    int done;      /* looked at by its rank */
    struct fget *prev, *next;
    struct fget *next_done; /* the rank's queue of slots through and not looked at */
} fget;

struct sp_req {
    unsigned char is_send, done, waited;
    int peer, tag;
    void *buf;
    size_t cap;
    long long result;
    struct sp_req *next;
    double t_posted;
    struct sp_req *next_free;
    struct sp_req *out_prev, *out_next; /* the rank's shared sends under way */
    unsigned char out;
};

typedef struct {
    sp_ctx ctx;
    int state;
    int heap; /* place in the timer heap while asleep */
    double wake;
    uint64_t seq;
    fget *gets_head, *gets_tail, *first_free;
    int ngets_pending, nheld;
    sp_req *posted_head, *posted_tail;
    int nposted;
    fmsg *unexp_head, *unexp_tail;
    fmsg *mbox_head, *mbox_tail; /* sends to this rank waiting for a slot */
    fget *done_head, *done_tail;
    int waiting_remaining, waiting_recvs;
    unsigned char in_wait;  /* blocked in fe_waitall */
    unsigned char look_err; /* what the scheduler looked at for it failed (out of memory) */
    sp_req *free_req;
    fget *free_get;
    sp_req *out_head; /* shared sends under way, and how many */
    int nout;
    /* --unshared-below: messages due here that skipped the sharing, in the order they are due */
    fmsg *box_head, *box_tail;
    double in_free;
} frank;

/* a bypassing message falls due at a rank */
typedef struct {
    double t;
    uint64_t seq;
    int rank;
} due_ev;

static struct {
    sp_shim *sh;
    int P;
    double now;
    frank *r;
    sg_host_t *hosts;
    spf_coro *coro;
    spf_net *net;
    spf_routes *routes;
    int *ready;
    int nready, ready_head; /* a ring of P */
    int *timers;
    int ntimers;
    uint64_t seq;
    int arrived, *barrier_order;
    int nfinished;
    uint64_t switches, looked; /* turns run on a rank's stack, wakes settled without one */
    int oom;
    double below; /* --unshared-below in bytes, 0: none */
    due_ev *dues;
    int ndues, capdues;
} E;

SPF_ENGINE static inline frank *rank_of(sp_ctx *c) { return (frank *)c; }

/* ---- scheduling ---- */

SPF_ENGINE static void make_ready(int r)
{
    E.r[r].state = R_READY;
    E.ready[(E.ready_head + E.nready) % E.P] = r;
    E.nready++;
}

SPF_ENGINE static void block(frank *f, int state)
{
    f->state = state;
    spf_coro_yield(E.coro, f->ctx.rank);
}

SPF_ENGINE static int timer_less(int a, int b)
{
    return E.r[a].wake < E.r[b].wake || (E.r[a].wake == E.r[b].wake && E.r[a].seq < E.r[b].seq);
}

SPF_ENGINE static void timer_set(int i, int r)
{
    E.timers[i] = r;
    E.r[r].heap = i;
}

SPF_ENGINE static void timer_push(int r)
{
    int i = E.ntimers++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!timer_less(r, E.timers[p]))
            break;
        timer_set(i, E.timers[p]);
        i = p;
    }
    timer_set(i, r);
}

SPF_ENGINE static int timer_pop(void)
{
    int top = E.timers[0];
    int last = E.timers[--E.ntimers];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= E.ntimers)
            break;
        if (c + 1 < E.ntimers && timer_less(E.timers[c + 1], E.timers[c]))
            c++;
        if (!timer_less(E.timers[c], last))
            break;
        timer_set(i, E.timers[c]);
        i = c;
    }
    if (E.ntimers > 0)
        timer_set(i, last);
    return top;
}

SPF_ENGINE static void sleep_until(frank *f, double t)
{
    if (t <= E.now)
        return;
    f->wake = t;
    f->seq = E.seq++;
    timer_push(f->ctx.rank);
    block(f, R_SLEEP);
}

SPF_ENGINE static int due_less(const due_ev *a, const due_ev *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }

SPF_ENGINE static int due_push(double t, int rank)
{
    if (E.ndues == E.capdues) {
        int nc = E.capdues ? 2 * E.capdues : 1024;
        due_ev *d = realloc(E.dues, (size_t)nc * sizeof *d);
        if (!d)
            return -1;
        E.dues = d;
        E.capdues = nc;
    }
    due_ev ev = {t, E.seq++, rank};
    int i = E.ndues++;
    while (i > 0 && due_less(&ev, &E.dues[(i - 1) / 2])) {
        E.dues[i] = E.dues[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    E.dues[i] = ev;
    return 0;
}

SPF_ENGINE static int due_pop(void)
{
    int r = E.dues[0].rank;
    due_ev last = E.dues[--E.ndues];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= E.ndues)
            break;
        if (c + 1 < E.ndues && due_less(&E.dues[c + 1], &E.dues[c]))
            c++;
        if (!due_less(&E.dues[c], &last))
            break;
        E.dues[i] = E.dues[c];
        i = c;
    }
    if (E.ndues > 0)
        E.dues[i] = last;
    return r;
}

/* ---- messages ---- */

static void *alloc0(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        E.oom = 1;
    return p;
}

SPF_ENGINE static void start_flow(fmsg *m, fget *g)
{
    m->get = g;
    g->m = m;
    spf_route_info ri;
    if (spf_route(E.routes, E.hosts[m->src], m->src, E.hosts[m->dst], m->dst, (double)m->bytes, &ri) != 0) {
        sp_fail(E.sh, "no route from rank %d to rank %d", m->src, m->dst);
        return;
    }
    if (spf_flow_start(E.net, E.now, (double)m->bytes, ri.latency, ri.bound, ri.penalty, ri.rf, ri.links,
                       ri.coefs, ri.nlinks, m) != 0) {
        E.oom = 1;
        sp_fail(E.sh, "out of memory for a message of rank %d", m->src);
    }
}

/* a slot opened at rank f: the oldest waiting send takes it, or it waits */
SPF_ENGINE static int post_get(frank *f)
{
    fget *g = f->free_get;
    if (g)
        f->free_get = g->next;
    else if (!(g = alloc0(sizeof *g)))
        return -1;
    memset(g, 0, sizeof *g);
    g->prev = f->gets_tail;
    if (f->gets_tail)
        f->gets_tail->next = g;
    else
        f->gets_head = g;
    f->gets_tail = g;
    f->ngets_pending++;
    if (f->mbox_head) {
        fmsg *m = f->mbox_head;
        f->mbox_head = m->next;
        if (!f->mbox_head)
            f->mbox_tail = NULL;
        m->next = NULL;
        start_flow(m, g);
    } else if (!f->first_free) {
        f->first_free = g;
    }
    return 0;
}

SPF_ENGINE static int ensure_gets(frank *f)
{
    while (f->ngets_pending < f->nposted - f->nheld)
        if (post_get(f) != 0)
            return -1;
    return 0;
}

SPF_ENGINE static void complete_req(frank *f, sp_req *r, long long result)
{
    r->done = 1;
    r->result = result;
    if (r->waited) {
        f->waiting_remaining--;
        if (!r->is_send)
            f->waiting_recvs--;
    }
}

SPF_ENGINE static void copy_into(sp_req *r, const fmsg *m)
{
    if (m->bytes > r->cap) {
        r->result = SP_ERR_TRUNC;
        return;
    }
    if (r->buf && m->has_data && m->bytes)
        memcpy(r->buf, m->data, m->bytes);
    r->result = (long long)m->bytes;
}

/* a message whose order is settled: to a posted receive, or queued */
SPF_ENGINE static void deliver(frank *f, fmsg *m)
{
    sp_ctx *c = &f->ctx;
    sp_msg_event ev = {m->iter, m->phase, m->src, c->rank, m->tag, m->bytes, m->t_post, m->t_done};
    sp_deliver(c, &ev);
    sp_req *prev = NULL;
    for (sp_req *r = f->posted_head; r; prev = r, r = r->next) {
        if (r->peer == m->src && r->tag == m->tag) {
            if (prev)
                prev->next = r->next;
            else
                f->posted_head = r->next;
            if (f->posted_tail == r)
                f->posted_tail = prev;
            f->nposted--;
            if (c->shim->disturb)
                sp_disturb_heard(c->shim->disturb, c, &m->path, m->src, r->t_posted > m->t_post ? r->t_posted : m->t_post,
                                 m->t_done);
            copy_into(r, m);
            complete_req(f, r, r->result);
            free(m);
            return;
        }
    }
    m->next = NULL;
    if (c->shim->disturb)
        sp_disturb_heard(c->shim->disturb, c, &m->path, m->src, m->t_post, m->t_done);
    if (f->unexp_tail)
        f->unexp_tail->next = m;
    else
        f->unexp_head = m;
    f->unexp_tail = m;
}

SPF_ENGINE static int order_settled(const fget *g)
{
    for (const fget *h = g->prev; h; h = h->prev)
        if (!h->done && h->m && h->m->src == g->m->src)
            return 0;
    return 1;
}

SPF_ENGINE static void unlink_get(frank *f, fget *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else
        f->gets_head = g->next;
    if (g->next)
        g->next->prev = g->prev;
    else
        f->gets_tail = g->prev;
    g->next = f->free_get;
    f->free_get = g;
}

/* the rank looks at a slot whose message is through (transport.c's on_get_done) */
SPF_ENGINE static void get_done(frank *f, fget *g)
{
    g->done = 1;
    f->ngets_pending--;
    if (!order_settled(g)) {
        f->nheld++;
        return;
    }
    fmsg *m = g->m;
    unlink_get(f, g);
    deliver(f, m);
    for (fget *h = f->gets_head; h;) {
        fget *next = h->next;
        if (h->done && h->m && order_settled(h)) {
            fmsg *hm = h->m;
            f->nheld--;
            unlink_get(f, h);
            deliver(f, hm);
            next = f->gets_head;
        }
        h = next;
    }
}

/* the scheduler: a message's flow has ended at t */
SPF_ENGINE static void flow_done(void *ctx, void *owner, double t)
{
    (void)ctx;
    fmsg *m = owner;
    m->t_done = t;
    sp_req *s = m->sreq;
    frank *fs = &E.r[m->src];
    if (s) {
        if (s->out) {
            if (s->out_prev)
                s->out_prev->out_next = s->out_next;
            else
                fs->out_head = s->out_next;
            if (s->out_next)
                s->out_next->out_prev = s->out_prev;
            s->out = 0;
            fs->nout--;
        }
        complete_req(fs, s, s->result);
        if (fs->state == R_WAIT && fs->waiting_remaining <= 0)
            make_ready(m->src);
    }
    frank *fd = &E.r[m->dst];
    fget *g = m->get;
    g->through = 1;
    g->next_done = NULL;
    if (fd->done_tail)
        fd->done_tail->next_done = g;
    else
        fd->done_head = g;
    fd->done_tail = g;
    if (fd->state == R_WAIT)
        make_ready(m->dst);
}

/* ---- the backend's operations ---- */

SPF_ENGINE static sp_req *new_req(frank *f)
{
    sp_req *r = f->free_req;
    if (r)
        f->free_req = r->next_free;
    else if (!(r = malloc(sizeof *r)))
        return NULL;
    memset(r, 0, sizeof *r);
    return r;
}

SPF_ENGINE static void req_free(frank *f, sp_req *r)
{
    r->next_free = f->free_req;
    f->free_req = r;
}

/* --unshared-below, as the SimGrid backend's postbox.c has it: may a message
 * to dst skip the sharing without overtaking one of the same pair that
 * shares (a bounded scan: past a few shared sends under way, share) */
SPF_ENGINE static int may_bypass(const frank *f, int dst)
{
    if (f->nout == 0)
        return 1;
    if (f->nout > 16)
        return 0;
    for (const sp_req *r = f->out_head; r; r = r->out_next)
        if (r->peer == dst)
            return 0;
    return 1;
}

/* a message that skips the sharing: due when each link of its route has
 * served the bypassing messages posted before it (spg_unshared_arrival),
 * and after the one due before it at its destination */
SPF_ENGINE static int post_unshared(fmsg *m)
{
    frank *d = &E.r[m->dst];
    double due = spg_unshared_arrival(E.hosts[m->src], E.hosts[m->dst], (double)m->bytes, E.now);
    if (due < 0) {
        sp_fail(E.sh, "no route from rank %d to rank %d", m->src, m->dst);
        return -1;
    }
    if (due < d->in_free)
        due = d->in_free;
    d->in_free = due;
    m->t_done = due;
    m->next = NULL;
    if (d->box_tail)
        d->box_tail->next = m;
    else
        d->box_head = m;
    d->box_tail = m;
    if (due_push(due, m->dst) != 0) {
        E.oom = 1;
        return -1;
    }
    return 0;
}

/* the bypassing messages due by now, delivered; how many */
SPF_ENGINE static int take_box(frank *f)
{
    int n = 0;
    while (f->box_head && f->box_head->t_done <= E.now) {
        fmsg *m = f->box_head;
        if (!(f->box_head = m->next))
            f->box_tail = NULL;
        deliver(f, m);
        n++;
    }
    return n;
}

SPF_ENGINE static sp_req *fe_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post)
{
    frank *f = rank_of(c);
    double o = sp_overhead_send(c, bytes);
    if (o > 0) {
        sleep_until(f, E.now + o);
        if (t_post > 0 || c->shim->want_times)
            t_post = E.now;
    }
    size_t datasz = buf ? bytes : 0;
    fmsg *m = malloc(sizeof *m + datasz);
    sp_req *r = m ? new_req(f) : NULL;
    if (!r) {
        free(m);
        return NULL;
    }
    memset(m, 0, sizeof *m);
    m->src = c->rank;
    m->dst = dst;
    m->tag = tag;
    m->iter = c->iter;
    m->phase = c->phase;
    m->bytes = bytes;
    m->t_post = t_post;
    m->has_data = buf != NULL;
    if (datasz)
        memcpy(m->data, buf, datasz);
    if (c->shim->disturb)
        m->path = sp_disturb_path_out(c->shim->disturb, c);
    r->is_send = 1;
    r->peer = dst;
    r->tag = tag;
    r->result = (long long)bytes;
    if (E.below > 0 && (double)bytes < E.below && may_bypass(f, dst)) {
        if (post_unshared(m) != 0) {
            free(m);
            req_free(f, r);
            return NULL;
        }
        r->done = 1;
        return r;
    }
    m->sreq = r;
    r->out = 1;
    r->out_prev = NULL;
    r->out_next = f->out_head;
    if (f->out_head)
        f->out_head->out_prev = r;
    f->out_head = r;
    f->nout++;
    frank *d = &E.r[dst];
    if (d->first_free) {
        fget *g = d->first_free;
        d->first_free = g->next; /* the free slots are the newest: every later one is free too */
        start_flow(m, g);
    } else {
        if (d->mbox_tail)
            d->mbox_tail->next = m;
        else
            d->mbox_head = m;
        d->mbox_tail = m;
    }
    return r;
}

SPF_ENGINE static sp_req *fe_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    frank *f = rank_of(c);
    sp_req *r = new_req(f);
    if (!r)
        return NULL;
    r->peer = src;
    r->tag = tag;
    r->buf = buf;
    r->cap = cap;
    r->t_posted = E.now;
    fmsg *prev = NULL;
    for (fmsg *m = f->unexp_head; m; prev = m, m = m->next) {
        if (m->src == src && m->tag == tag) {
            if (prev)
                prev->next = m->next;
            else
                f->unexp_head = m->next;
            if (f->unexp_tail == m)
                f->unexp_tail = prev;
            copy_into(r, m);
            r->done = 1;
            free(m);
            return r;
        }
    }
    if (f->posted_tail)
        f->posted_tail->next = r;
    else
        f->posted_head = r;
    f->posted_tail = r;
    f->nposted++;
    if (ensure_gets(f) != 0) {
        sp_req *p = NULL;
        for (sp_req *q = f->posted_head; q != r; q = q->next)
            p = q;
        if (p)
            p->next = NULL;
        else
            f->posted_head = NULL;
        f->posted_tail = p;
        f->nposted--;
        req_free(f, r);
        return NULL;
    }
    return r;
}

/* the slots through since the rank last looked */
SPF_ENGINE static int take_done(frank *f)
{
    int n = 0;
    while (f->done_head) {
        fget *g = f->done_head;
        f->done_head = g->next_done;
        if (!f->done_head)
            f->done_tail = NULL;
        get_done(f, g);
        if (ensure_gets(f) != 0)
            return -1;
        n++;
    }
    return n;
}

/* what a rank in a wait looks at first: the messages come and the slots
 * through; 1 when its wait is over, 0 when not, -1 (memory).  The rank does
 * it (fe_waitall), or the scheduler for it at its turn (spf_run). */
SPF_ENGINE static int look(frank *f)
{
    take_box(f);
    if (take_done(f) < 0)
        return -1;
    return f->waiting_remaining <= 0;
}

SPF_ENGINE static int fe_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    frank *f = rank_of(c);
    f->waiting_remaining = 0;
    f->waiting_recvs = 0;
    for (int i = 0; i < n; i++)
        if (reqs[i] && !reqs[i]->done) {
            reqs[i]->waited = 1;
            f->waiting_remaining++;
            f->waiting_recvs += !reqs[i]->is_send;
        }
    for (;;) {
        int over = look(f);
        if (over < 0)
            return SP_ERR_MEM;
        if (over)
            break;
        f->in_wait = 1;
        block(f, R_WAIT);
        f->in_wait = 0;
        if (c->shim->failed && f->state == R_DONE) /* woken to end: the run is over (deadlock) */
            return SP_ERR_COMM;
        if (f->look_err) {
            f->look_err = 0;
            return SP_ERR_MEM;
        }
    }
    int rc = 0;
    double o = sp_overhead_wait(c);
    for (int i = 0; i < n; i++) {
        if (!reqs[i]) {
            if (sizes)
                sizes[i] = 0;
            continue;
        }
        long long res = reqs[i]->result;
        if (!reqs[i]->is_send)
            o += sp_overhead_received(c, res);
        if (res < 0 && rc == 0)
            rc = (int)res;
        if (sizes)
            sizes[i] = res < 0 ? 0 : (size_t)res;
        req_free(f, reqs[i]);
        reqs[i] = NULL;
    }
    if (o > 0)
        sleep_until(f, E.now + o);
    return rc;
}

SPF_ENGINE static double fe_now(const sp_ctx *c)
{
    (void)c;
    return E.now;
}

SPF_ENGINE static void fe_advance(sp_ctx *c, double seconds)
{
    if (seconds > 0)
        sleep_until(rank_of(c), E.now + seconds);
}

SPF_ENGINE static void fe_barrier(sp_ctx *c, void (*last)(void *), void *arg)
{
    frank *f = rank_of(c);
    if (E.arrived + 1 == E.P) {
        if (last)
            last(arg);
        for (int i = 0; i < E.arrived; i++)
            make_ready(E.barrier_order[i]);
        E.arrived = 0;
        return;
    }
    E.barrier_order[E.arrived++] = c->rank;
    block(f, R_BARRIER);
}

static const sp_backend flow_transport = {"flow", fe_isend, fe_irecv, fe_waitall, fe_now, fe_advance, fe_barrier,
                                          NULL};

SPF_ENGINE static void rank_body(void *arg)
{
    frank *f = arg;
    spf_coro_started(E.coro);
    f->ctx.shim->rank_main(&f->ctx, f->ctx.shim->rank_arg);
    char why[160];
    if (!spf_coro_fits(E.coro, f->ctx.rank, why, sizeof why))
        sp_fail(E.sh, "%s", why);
    f->state = R_DONE;
    E.nfinished++;
    spf_coro_exit(E.coro, f->ctx.rank);
}

/* ---- the run ---- */

SPF_ENGINE static void free_rank(frank *f)
{
    while (f->unexp_head) {
        fmsg *m = f->unexp_head;
        f->unexp_head = m->next;
        free(m);
    }
    while (f->mbox_head) {
        fmsg *m = f->mbox_head;
        f->mbox_head = m->next;
        free(m);
    }
    while (f->box_head) {
        fmsg *m = f->box_head;
        f->box_head = m->next;
        free(m);
    }
    while (f->posted_head) {
        sp_req *r = f->posted_head;
        f->posted_head = r->next;
        free(r);
    }
    while (f->free_req) {
        sp_req *r = f->free_req;
        f->free_req = r->next_free;
        free(r);
    }
    while (f->gets_head) {
        fget *g = f->gets_head;
        f->gets_head = g->next;
        free(g->m); /* still under way, through and not looked at, or held back (delivered ones left the list) */
        free(g);
    }
    while (f->free_get) {
        fget *g = f->free_get;
        f->free_get = g->next;
        free(g);
    }
}

SPF_ENGINE static void free_all(void)
{
    if (E.r)
        for (int i = 0; i < E.P; i++)
            free_rank(&E.r[i]);
    spf_routes_free(E.routes);
    spf_net_free(E.net);
    spf_coros_free(E.coro);
    free(E.r);
    free(E.ready);
    free(E.timers);
    free(E.barrier_order);
    free(E.dues);
    memset(&E, 0, sizeof E);
}

SPF_ENGINE static void drop_flow(void *ctx, void *owner, double t)
{
    (void)ctx;
    (void)owner;
    (void)t;
}

SPF_ENGINE int spf_run(sp_shim *sh, int P, sg_host_t *hosts, double below, double slack, char *err, size_t errlen)
{
    memset(&E, 0, sizeof E);
    E.below = below;
    E.sh = sh;
    E.P = P;
    E.hosts = hosts;
    E.r = calloc((size_t)P, sizeof *E.r);
    E.ready = calloc((size_t)P, sizeof *E.ready);
    E.timers = calloc((size_t)P, sizeof *E.timers);
    E.barrier_order = calloc((size_t)P, sizeof *E.barrier_order);
    void **args = calloc((size_t)P, sizeof *args);
    E.net = spf_net_new();
    if (E.net)
        spf_net_slack(E.net, slack);
    if (!E.r || !E.ready || !E.timers || !E.barrier_order || !args || !E.net) {
        free(args);
        free_all();
        snprintf(err, errlen, "out of memory for %d ranks", P);
        return 1;
    }
    E.routes = spf_routes_new(E.net, err, errlen); /* it reads the model's factors (spg_uncontended_init) */
    if (!E.routes) {
        free(args);
        free_all();
        return 1;
    }
    if (below > 0)
        spg_unshared_reset();
    for (int i = 0; i < P; i++) {
        frank *f = &E.r[i];
        f->ctx.rank = i;
        f->ctx.size = P;
        f->ctx.be = &flow_transport;
        f->ctx.be_state = f;
        f->ctx.shim = sh;
        f->heap = -1;
        args[i] = f;
    }
    E.coro = spf_coros_new(P, SPF_RANK_STACK, rank_body, args, err, errlen);
    free(args);
    if (!E.coro) {
        free_all();
        return 1;
    }
    for (int i = 0; i < P; i++)
        make_ready(i);
    for (;;) {
        while (E.nready > 0) {
            int r = E.ready[E.ready_head];
            E.ready_head = (E.ready_head + 1) % P;
            E.nready--;
            /* at thousands of ranks the next one's stack is cold by its
             * turn: its top is asked for while this one runs, unless it
             * waits for a send of its own (below: no switch is likely) */
            if (E.nready > 0) {
                const frank *g = &E.r[E.ready[E.ready_head]];
                if (!g->in_wait || g->waiting_remaining <= g->waiting_recvs)
                    spf_coro_prefetch(E.coro, E.ready[E.ready_head]);
            }
            frank *f = &E.r[r];
            /* A rank woken in a wait looks first at what came (look): that
             * is done here, at the same turn and in the same order, and a
             * rank whose wait is not over stays blocked without a switch to
             * its stack (a receive through before its send: a third of the
             * ring's wakes). */
            if (f->in_wait && !f->look_err) {
                int over = look(f);
                if (over < 0)
                    f->look_err = 1;
                else if (!over) {
                    f->state = R_WAIT;
                    E.looked++;
                    continue;
                }
            }
            f->state = R_RUN;
            E.switches++;
            spf_coro_resume(E.coro, r);
        }
        if (E.oom) /* a failed rank's run goes on: the ranks stop at the next iteration, as on SimGrid */
            break;
        spf_net_solve(E.net, E.now);
        double tn = spf_net_next(E.net);
        double tt = E.ntimers ? E.r[E.timers[0]].wake : INFINITY;
        double td = E.ndues ? E.dues[0].t : INFINITY;
        double t = tn < tt ? tn : tt;
        if (td < t)
            t = td;
        if (!isfinite(t))
            break;
        if (t > E.now)
            E.now = t;
        if (tn <= t)
            spf_net_advance(E.net, t, flow_done, NULL);
        while (E.ntimers && E.r[E.timers[0]].wake <= t)
            make_ready(timer_pop());
        while (E.ndues && E.dues[0].t <= t) {
            int r = due_pop();
            if (E.r[r].state == R_WAIT)
                make_ready(r);
        }
    }
    int unfinished = 0, first = -1;
    for (int i = 0; i < P; i++)
        if (E.r[i].state != R_DONE) {
            if (first < 0)
                first = i;
            unfinished++;
        }
    int rc = 0;
    if (E.oom) {
        snprintf(err, errlen, "out of memory during the simulation");
        rc = 1;
    } else if (sh->failed) {
        snprintf(err, errlen, "%s", sh->errmsg);
        rc = 1;
    } else if (unfinished) {
        snprintf(err, errlen,
                 "simulation ended with %d of %d ranks blocked (first: rank %d): a receive that can never be "
                 "matched, or a send nobody receives",
                 unfinished, P, first);
        rc = 1;
    }
    /* flows still under way when the run stopped */
    spf_net_advance(E.net, INFINITY, drop_flow, NULL);
    if (sh->rep) {
        sp_flow_solver *fs = &sh->rep->flow_solver;
        fs->on = 1;
        spf_net_work(E.net, &fs->solves, &fs->rerated, &fs->solved, &fs->opened, &fs->alone);
        fs->switches = E.switches;
        fs->looked = E.looked;
    }
    free_all();
    return rc;
}
