/* transport.c - the shim on SimGrid: P ranks as actors, and their messages.
 *
 * Shape, and why:
 *  - One mailbox per destination rank (O(P) objects, never one per pair).
 *    Senders put an envelope carrying (src, tag, iter, phase, t_post) and, in
 *    exact mode, a copy of the data.  The envelope is the SimGrid payload; the
 *    simulated size is the message's byte count.
 *  - The receiver keeps as many SimGrid gets posted as it has unmatched
 *    receives, so that concurrent arrivals share links as on a real network
 *    (a get posted late would serialise them).  Matching on (source, tag) is
 *    done here, with a queue of unexpected messages, because SimGrid's FIFO
 *    mailbox matching is not MPI matching.
 *  - Non-overtaking: gets complete in any order, so a small message could
 *    finish before an earlier large one of the same sender.  A completed
 *    envelope is held back while an earlier-posted get still carries a
 *    message of the same sender; mailbox matching is FIFO, so this restores
 *    the sender's order.
 *  - Every wait waits on all of the rank's pending comms at once, so each
 *    completion is seen at its simulated time.
 *  - Small messages of --unshared-below bypass all of this (postbox.c); a
 *    wait here also takes those that are due, and blocks at most until the
 *    next one is.
 */
#include "simgrid_internal.h"

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct spg_ranks spg_ranks;

static void *pool_alloc(freenode **list, size_t size)
{
    if (*list) {
        void *p = *list;
        *list = (*list)->next;
        memset(p, 0, size);
        return p;
    }
    return calloc(1, size);
}

static void pool_free(freenode **list, void *p)
{
    freenode *f = p;
    f->next = *list;
    *list = f;
}

static void pool_drain(freenode **list)
{
    while (*list) {
        freenode *f = *list;
        *list = f->next;
        free(f);
    }
}

void spg_envelope_free(envelope *e)
{
    if (e->pooled)
        pool_free(&spg_ranks.free_env, e);
    else
        free(e);
}

static void req_free(spg_rank *s, sp_req *r) { pool_free(&s->free_req, r); }

/* room for one more pending comm: made before the comm is started, so that
 * a started comm always has its place */
static int act_reserve(spg_rank *s)
{
    if (s->nact == s->capact) {
        size_t nc = s->capact ? s->capact * 2 : 16;
        sg_comm_t *a = realloc(s->act, nc * sizeof *a);
        if (!a)
            return -1;
        s->act = a;
        void **o = realloc(s->act_owner, nc * sizeof *o);
        if (!o)
            return -1;
        s->act_owner = o;
        unsigned char *g = realloc(s->act_is_get, nc);
        if (!g)
            return -1;
        s->act_is_get = g;
        s->capact = nc;
    }
    return 0;
}

static void act_push(spg_rank *s, sg_comm_t comm, void *owner, int is_get)
{
    s->act[s->nact] = comm;
    s->act_owner[s->nact] = owner;
    s->act_is_get[s->nact] = (unsigned char)is_get;
    s->nact++;
}

static void act_remove(spg_rank *s, size_t i)
{
    s->nact--;
    s->act[i] = s->act[s->nact];
    s->act_owner[i] = s->act_owner[s->nact];
    s->act_is_get[i] = s->act_is_get[s->nact];
}

static int post_get(sp_ctx *c)
{
    spg_rank *s = spg_rank_of(c);
    getrec *g = act_reserve(s) == 0 ? pool_alloc(&s->free_get, sizeof *g) : NULL;
    if (!g) {
        sp_fail(c->shim, "out of memory on rank %d", c->rank);
        return -1;
    }
    g->sender_pid = -1;
    g->comm = sg_mailbox_get_async(spg_ranks.mbox[c->rank], &g->payload);
    g->prev = s->gets_tail;
    if (s->gets_tail)
        s->gets_tail->next = g;
    else
        s->gets_head = g;
    s->gets_tail = g;
    s->ngets_pending++;
    act_push(s, g->comm, g, 1);
    return 0;
}

static int ensure_gets(sp_ctx *c)
{
    spg_rank *s = spg_rank_of(c);
    while (s->ngets_pending < s->nposted - s->nheld)
        if (post_get(c) != 0)
            return -1;
    return 0;
}

static void complete_req(spg_rank *s, sp_req *r, long long result)
{
    r->done = 1;
    r->result = result;
    if (r->waited) {
        s->waiting_remaining--;
        if (!r->is_send)
            s->waiting_recvs--;
    }
}

static void copy_into(sp_req *r, const envelope *e)
{
    if (e->bytes > r->cap) {
        r->result = SP_ERR_TRUNC;
        return;
    }
    if (r->buf && e->has_data && e->bytes)
        memcpy(r->buf, e->data, e->bytes);
    r->result = (long long)e->bytes;
}

/* an envelope whose order is settled: hand it to a posted receive or queue it */
void spg_deliver(sp_ctx *c, envelope *e)
{
    spg_rank *s = spg_rank_of(c);
    int from = e->src == SP_SWITCH ? SP_SWITCH_END(c->rank / sp_node_size(c)) : e->src;
    sp_msg_event ev = {e->iter, e->phase, from, c->rank, e->tag, e->bytes, e->t_post, e->t_done};
    sp_deliver(c, &ev);
    sp_req *prev = NULL;
    for (sp_req *r = s->posted_head; r; prev = r, r = r->next) {
        if (r->peer == e->src && r->tag == e->tag) {
            if (prev)
                prev->next = r->next;
            else
                s->posted_head = r->next;
            if (s->posted_tail == r)
                s->posted_tail = prev;
            s->nposted--;
            if (c->shim->disturb && e->src >= 0) /* the transfer ran from when both sides were there */
                sp_disturb_heard(c->shim->disturb, c, &e->path, e->src, r->t_posted > e->t_post ? r->t_posted : e->t_post,
                                 e->t_done);
            copy_into(r, e);
            complete_req(s, r, r->result);
            spg_envelope_free(e);
            return;
        }
    }
    e->next = NULL;
    if (c->shim->disturb && e->src >= 0) /* unexpected: it ran as soon as it was sent */
        sp_disturb_heard(c->shim->disturb, c, &e->path, e->src, e->t_post, e->t_done);
    if (s->unexp_tail)
        s->unexp_tail->next = e;
    else
        s->unexp_head = e;
    s->unexp_tail = e;
}

static long get_sender(getrec *g)
{
    if (g->sender_pid < 0 && !g->completed)
        g->sender_pid = spg_comm_sender_pid(g->comm);
    return g->sender_pid;
}

/* may `g` (completed) be delivered: no earlier pending get from the same sender */
static int order_settled(getrec *g, long pid)
{
    for (getrec *h = g->prev; h; h = h->prev)
        if (!h->completed && get_sender(h) == pid)
            return 0;
    return 1;
}

static void unlink_get(spg_rank *s, getrec *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else
        s->gets_head = g->next;
    if (g->next)
        g->next->prev = g->prev;
    else
        s->gets_tail = g->prev;
    pool_free(&s->free_get, g);
}

static void on_get_done(sp_ctx *c, getrec *g, double t_finish)
{
    spg_rank *s = spg_rank_of(c);
    envelope *e = g->payload;
    g->completed = 1;
    s->ngets_pending--;
    if (e->src == -1) { /* the postman's bell: take_due follows */
        spg_unshared.box[c->rank].bell_out = 0;
        unlink_get(s, g);
        return;
    }
    e->t_done = t_finish;
    long pid = e->src == SP_SWITCH ? spg_switch_pid(c->rank) : spg_ranks.pid_base + e->src;
    g->sender_pid = pid;
    if (!order_settled(g, pid)) {
        g->held = e;
        s->nheld++;
        return;
    }
    unlink_get(s, g);
    spg_deliver(c, e);
    /* held envelopes that were waiting on this one */
    for (getrec *h = s->gets_head; h;) {
        getrec *next = h->next;
        if (h->completed && h->held && order_settled(h, h->sender_pid)) {
            envelope *he = h->held;
            s->nheld--;
            unlink_get(s, h);
            spg_deliver(c, he);
            next = s->gets_head; /* list changed; rescan from the start */
        }
        h = next;
    }
}

/* Which pending comm can be waited for alone without missing an event that
 * needs a reaction (a completed get: it may bring an unexpected message,
 * after which another get must be posted at once; and the end of a push to
 * the switch, which the switch takes then)?  With one get
 * pending and a waited receive still open, that get must complete before
 * the wait can end; with no get pending, any waited send.  Otherwise -1,
 * and the caller waits for any.  A plain wait is much cheaper in SimGrid
 * than a wait for any (bench/README.md). */
static long single_waitable(spg_rank *s)
{
    if (s->pushes > 0) /* a push's end needs a reaction too: the switch takes it then */
        return -1;
    if (s->ngets_pending == 1 && s->waiting_recvs > 0) {
        for (size_t i = 0; i < s->nact; i++)
            if (s->act_is_get[i])
                return (long)i;
    } else if (s->ngets_pending == 0) {
        for (size_t i = 0; i < s->nact; i++)
            if (!s->act_is_get[i] && ((sp_req *)s->act_owner[i])->waited)
                return (long)i;
    }
    return -1;
}

/* wait for one of the rank's pending comms and process it; -1: nothing is
 * pending, -2: the engine found that nothing can ever complete (deadlock) */
static int progress(sp_ctx *c)
{
    spg_rank *s = spg_rank_of(c);
    postbox *b = spg_unshared.box ? &spg_unshared.box[c->rank] : NULL;
    if (b && spg_postbox_take_due(c) > 0)
        return 0;
    double fin = 0, *finp = c->shim->want_times ? &fin : NULL;
    long pos;
    if (b && b->head) { /* a bypassing message is due later: wait at most until then */
        double due = b->head->t_done;
        if (s->nact == 0) {
            sg_actor_sleep_until(due);
            return 0;
        }
        b->wait_until = due;
        double left = due - simgrid_get_clock();
        pos = spg_wait_any_for(s->act, s->nact, left > 0 ? left : 0, finp);
        b->wait_until = -1;
        if (pos == -3) /* it is due */
            return 0;
    } else {
        if (s->nact == 0)
            return -1;
        pos = single_waitable(s);
        if (b)
            b->wait_until = INFINITY;
        if (pos >= 0)
            pos = spg_wait_one(s->act[pos], finp) == 0 ? pos : -1;
        else
            pos = spg_wait_any(s->act, s->nact, finp);
        if (b)
            b->wait_until = -1;
    }
    if (pos < 0)
        return -2;
    void *owner = s->act_owner[pos];
    int is_get = s->act_is_get[pos];
    act_remove(s, (size_t)pos);
    if (is_get) {
        on_get_done(c, owner, fin);
        if (ensure_gets(c) != 0)
            return -3;
    } else {
        sp_req *r = owner;
        if (r->push) { /* it has reached the switch (nvswitch.c) */
            spg_switch_arrived(c, r->push, finp ? fin : simgrid_get_clock());
            r->push = NULL;
            s->pushes--;
        }
        complete_req(s, r, r->result);
    }
    return 0;
}

/* the device's host overheads: sp_overhead_* (sim/shim/backend.h) */

/* a send's envelope (the data captured) and request, filled as far as every
 * send fills them: to `peer` (a rank, or SP_SWITCH) under `tag`; NULL, with
 * nothing kept, when memory runs out */
static sp_req *new_send(sp_ctx *c, int peer, int tag, const void *buf, size_t bytes, double t_post, envelope **out)
{
    spg_rank *s = spg_rank_of(c);
    size_t datasz = buf ? bytes : 0;
    if (act_reserve(s) != 0)
        return NULL;
    envelope *e = datasz ? malloc(sizeof *e + datasz) : pool_alloc(&spg_ranks.free_env, sizeof *e);
    if (!e)
        return NULL;
    if (datasz)
        memset(e, 0, sizeof *e); /* pool_alloc's are zeroed already */
    e->pooled = datasz == 0;
    sp_req *r = pool_alloc(&s->free_req, sizeof *r);
    if (!r) {
        spg_envelope_free(e);
        return NULL;
    }
    e->src = c->rank;
    e->tag = tag;
    e->iter = c->iter;
    e->phase = c->phase;
    e->bytes = bytes;
    e->t_post = t_post;
    e->has_data = buf != NULL;
    if (datasz)
        memcpy(e->data, buf, datasz);
    r->is_send = 1;
    r->peer = peer;
    r->tag = tag;
    r->result = (long long)bytes;
    *out = e;
    return r;
}

static sp_req *sg_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post)
{
    spg_rank *s = spg_rank_of(c);
    double o = sp_overhead_send(c, bytes);
    if (o > 0) {
        sg_actor_sleep_for(o);
        if (t_post > 0 || c->shim->want_times)
            t_post = simgrid_get_clock(); /* it leaves when the host is done with it */
    }
    envelope *e;
    sp_req *r = new_send(c, dst, tag, buf, bytes, t_post, &e);
    if (!r)
        return NULL;
    if (c->shim->disturb)
        e->path = sp_disturb_path_out(c->shim->disturb, c);
    if (spg_unshared.below > 0 && (double)bytes < spg_unshared.below && spg_postbox_may_bypass(s, dst)) {
        if (spg_postbox_post(c, dst, e) != 0) {
            spg_envelope_free(e);
            req_free(s, r);
            return NULL;
        }
        r->done = 1;
        return r;
    }
    act_push(s, sg_mailbox_put_async(spg_ranks.mbox[dst], e, (long)bytes), r, 0);
    return r;
}

/* a push to the node's switch (nvswitch.c): the GPU's data goes up its port
 * as multimem stores do, from device memory, with no host overheads; the
 * switch takes it when this rank sees the flow end (progress) */
static sp_req *sg_switch_push(sp_ctx *c, int tag, const void *buf, size_t bytes, int pushes, int to, double t_post)
{
    spg_rank *s = spg_rank_of(c);
    envelope *e;
    sp_req *r = spg_switches_on() ? new_send(c, SP_SWITCH, tag, buf, bytes, t_post, &e) : NULL;
    if (!r)
        return NULL;
    e->sw_pushes = pushes;
    e->sw_to = to;
    r->push = e;
    s->pushes++;
    /* a flow of 0 bytes between two hosts never ends in SimGrid 3.32: one byte instead (2 ps on NVLink) */
    act_push(s, spg_sendto_async(spg_ranks.hosts[c->rank], spg_switch_host(c->rank), bytes ? (double)bytes : 1.0), r,
             0);
    return r;
}

static sp_req *sg_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    spg_rank *s = spg_rank_of(c);
    sp_req *r = pool_alloc(&s->free_req, sizeof *r);
    if (!r)
        return NULL;
    r->peer = src;
    r->tag = tag;
    r->buf = buf;
    r->cap = cap;
    if (c->shim->disturb)
        r->t_posted = simgrid_get_clock();
    envelope *prev = NULL;
    for (envelope *e = s->unexp_head; e; prev = e, e = e->next) {
        if (e->src == src && e->tag == tag) {
            if (prev)
                prev->next = e->next;
            else
                s->unexp_head = e->next;
            if (s->unexp_tail == e)
                s->unexp_tail = prev;
            copy_into(r, e);
            r->done = 1;
            spg_envelope_free(e);
            return r;
        }
    }
    r->next = NULL;
    if (s->posted_tail)
        s->posted_tail->next = r;
    else
        s->posted_head = r;
    s->posted_tail = r;
    s->nposted++;
    if (ensure_gets(c) != 0) {
        /* no get behind it: take it back; the caller gets the failure */
        sp_req *prev = NULL;
        for (sp_req *q = s->posted_head; q != r; q = q->next)
            prev = q;
        if (prev)
            prev->next = NULL;
        else
            s->posted_head = NULL;
        s->posted_tail = prev;
        s->nposted--;
        req_free(s, r);
        return NULL;
    }
    return r;
}

static int sg_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    spg_rank *s = spg_rank_of(c);
    s->waiting_remaining = 0;
    s->waiting_recvs = 0;

    for (int i = 0; i < n; i++)
        if (reqs[i] && !reqs[i]->done) {
            reqs[i]->waited = 1;
            s->waiting_remaining++;
            s->waiting_recvs += !reqs[i]->is_send;
        }
    while (s->waiting_remaining > 0) {
        int pr = progress(c);
        if (pr == -1) {
            sp_fail(c->shim, "rank %d waits for a request that has no communication behind it", c->rank);
            return SP_ERR_COMM;
        }
        if (pr == -3)
            return SP_ERR_MEM;
        if (pr == -2) {
            sp_fail(c->shim,
                    "deadlock: rank %d (iteration %d) is blocked, waiting for a message nobody sends or on a send "
                    "nobody receives",
                    c->rank, c->iter);
            return SP_ERR_COMM;
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
        req_free(s, reqs[i]);
        reqs[i] = NULL;
    }
    if (o > 0)
        sg_actor_sleep_for(o);
    return rc;
}

static double sg_now(const sp_ctx *c)
{
    (void)c;
    return simgrid_get_clock();
}

static void sg_advance(sp_ctx *c, double seconds)
{
    (void)c;
    if (seconds > 0)
        sg_actor_sleep_for(seconds);
}

static void sg_barrier(sp_ctx *c, void (*last)(void *), void *arg)
{
    /* actors run one at a time: the last to arrive finds every other one
     * blocked in the barrier, and acts for all before releasing them */
    if (++spg_ranks.arrived == spg_ranks.P) {
        spg_ranks.arrived = 0;
        if (last)
            last(arg);
    }
    spg_rank_of(c)->in_sync = 1;
    sg_barrier_wait(spg_ranks.barrier);
    spg_rank_of(c)->in_sync = 0;
}

const sp_backend spg_transport = {"simgrid", sg_isend,   sg_irecv,   sg_waitall,
                                  sg_now,    sg_advance, sg_barrier, sg_switch_push};

void spg_rank_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sp_ctx *c = sg_actor_self_get_data();
    c->shim->rank_main(c, c->shim->rank_arg);
    spg_rank *s = spg_rank_of(c);
    /* with bypassing messages, gets posted for receives that a bypassing
     * message met are left over: nothing else will come */
    for (size_t i = s->nact; spg_unshared.box && i-- > 0;)
        if (s->act_is_get[i]) {
            spg_comm_cancel(s->act[i]);
            unlink_get(s, s->act_owner[i]);
            s->ngets_pending--;
            act_remove(s, i);
        }
    s->finished = 1;
    if (++spg_ranks.nfinished == spg_ranks.P)
        spg_background_end(); /* other jobs' flows end with the run */
}

static void free_rank_state(spg_rank *s)
{
    for (size_t i = 0; i < s->nact; i++) /* pushes to the switch still under way when the run failed */
        if (!s->act_is_get[i] && ((sp_req *)s->act_owner[i])->push) {
            spg_envelope_free(((sp_req *)s->act_owner[i])->push);
            ((sp_req *)s->act_owner[i])->push = NULL;
        }
    while (s->unexp_head) {
        envelope *e = s->unexp_head;
        s->unexp_head = e->next;
        spg_envelope_free(e);
    }
    while (s->posted_head) {
        sp_req *r = s->posted_head;
        s->posted_head = r->next;
        req_free(s, r);
    }
    while (s->gets_head) {
        getrec *g = s->gets_head;
        s->gets_head = g->next;
        if (g->held)
            spg_envelope_free(g->held);
        free(g);
    }
    pool_drain(&s->free_req);
    pool_drain(&s->free_get);
    free(s->act);
    free(s->act_owner);
    free(s->act_is_get);
}

void spg_transport_free(void)
{
    if (spg_ranks.slots)
        for (int r = 0; r < spg_ranks.P; r++)
            free_rank_state(&spg_ranks.slots[r].s);
    if (spg_ranks.barrier)
        sg_barrier_destroy(spg_ranks.barrier);
    pool_drain(&spg_ranks.free_env);
}
