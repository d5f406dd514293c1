/* backend_simgrid.c - the shim on SimGrid: P ranks as actors.
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
 *  - --unshared-below S: a message of fewer than S bytes does not enter
 *    SimGrid's bandwidth sharing (the max-min solver re-solves the flows
 *    that share links with a flow at each flow's start and end; at
 *    thousands of ranks with P^2 small messages that is most of the run,
 *    bench/README.md section 13).  Its send completes at once (an eager
 *    send, as MPI sends small messages); it waits in the receiver's postbox
 *    until it is due (post_unshared says when), and the receiver takes the
 *    due ones whenever it makes progress, blocking at most until the first
 *    one in its postbox is due.  A message that comes to a receiver already
 *    blocked with an empty postbox has the receiver's postman (one actor
 *    per rank, on its host) wake it then: the postman puts a 0-byte bell
 *    into the rank's mailbox, which completes one of its gets.
 */
#include "sim/shim/backend.h"
#include "sim/shim/disturb.h"
#include "topologies/platform.h"

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <xbt/config.h>
#include <xbt/dynar.h>
#include <xbt/log.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int spg_load_platform(const char *path, char *err, size_t errlen);
int spg_build_aries(int nodes, int spread, char *err, size_t errlen); /* simgrid_aries.cpp */
int spg_run(char *err, size_t errlen);
long spg_wait_any(sg_comm_t *comms, size_t count, double *finish_time);
long spg_wait_one(sg_comm_t comm, double *finish_time);
long spg_wait_any_for(sg_comm_t *comms, size_t count, double timeout, double *finish_time);
long spg_comm_sender_pid(sg_comm_t comm);
void spg_comm_cancel(sg_comm_t comm);
void spg_bg_start(sg_host_t from, sg_host_t to, double bytes, int src, int dst);
void spg_bg_reap(void (*done)(void *arg, int src, int dst, double bytes, double t0, double t1), void *arg);
void spg_bg_cancel_all(void);
void spg_on_deadlock(void (*fn)(void));
int spg_uncontended_init(int piecewise);
double spg_uncontended_time(sg_host_t from, sg_host_t to, double bytes);
double spg_unshared_arrival(sg_host_t from, sg_host_t to, double bytes, double start);
void spg_unshared_reset(void);

typedef struct envelope {
    int src, tag, iter, phase;
    uint64_t bytes;
    double t_post, t_done;
    sp_path path; /* disturbed runs: what the sender carried when it posted (disturb.h) */
    int has_data, pooled;
    struct envelope *next;
    unsigned char data[];
} envelope;

struct sp_req {
    unsigned char is_send, done, waited;
    int peer, tag;
    void *buf;
    size_t cap;
    long long result;
    struct sp_req *next; /* posted-receive queue */
    double t_posted; /* disturbed runs: when a receive was posted */
};

/* free lists: requests, get records and data-less envelopes are recycled
 * (the simulation runs one actor at a time, so no locking is needed) */
typedef struct freenode {
    struct freenode *next;
} freenode;

/* one posted SimGrid get, kept in posting order */
typedef struct getrec {
    sg_comm_t comm;
    void *payload;       /* written by SimGrid on completion */
    envelope *held;      /* completed but held back for ordering */
    int completed;
    long sender_pid;     /* cached once matched */
    struct getrec *prev, *next;
} getrec;

typedef struct {
    /* pending SimGrid comms of this rank: gets and sends */
    sg_comm_t *act;
    void **act_owner;
    unsigned char *act_is_get;
    size_t nact, capact;
    getrec *gets_head, *gets_tail;
    int ngets_pending;
    int nheld;
    sp_req *posted_head, *posted_tail;
    int nposted;
    envelope *unexp_head, *unexp_tail;
    int waiting_remaining;
    int waiting_recvs; /* waited receives not complete yet */
    int in_sync;       /* in the synchronisation between iterations */
    int finished;
    struct freenode *free_req, *free_get; /* recycled by the rank that uses them: stays in its cache */
} sg_rank;

static struct {
    freenode *free_env;
    sg_mailbox_t *mbox;
    sg_host_t *hosts;
    sg_bar_t barrier;
    struct rank_slot *slots; /* a rank's ctx and its backend state, side by side */
    long pid_base;
    int P;
    int arrived; /* ranks in the barrier */
    /* disturbances */
    sp_shim *sh;
    sg_actor_t *actors;
    sg_host_t *bg_hosts; /* background traffic runs between these */
    int nbg;
    int stop_bg, nfinished;
    int fail_rank, fail_iter, fail_phase, fail_in_sync; /* fail_rank >= 0: it has stopped */
    double fail_time;
} G;

struct rank_slot {
    sp_ctx ctx;
    sg_rank s;
};

/* --unshared-below: a rank's postbox, the bypassing messages due at it in
 * the order they arrive (e->t_done holds the date), and its postman's state */
typedef struct {
    envelope *head, *tail;
    double in_free;    /* the last message due here has arrived by then */
    double wait_until; /* the rank is blocked in a wait until then at the latest (-1: not blocked) */
    double ring_at;    /* the postman is to ring then (armed) */
    double self_time;  /* the bell's way to the rank's mailbox (the host's loopback) */
    int armed, bell_out;
    sg_sem_t ring;     /* a sender arms the postman */
    envelope bell;     /* what the postman puts: src -1 */
} postbox;

static struct {
    double below; /* bytes; 0: every message shares links */
    postbox *box;
} U;

static sg_rank *RS(sp_ctx *c) { return (sg_rank *)c->be_state; }

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

static void env_free(envelope *e)
{
    if (e->pooled)
        pool_free(&G.free_env, e);
    else
        free(e);
}

static void req_free(sg_rank *s, sp_req *r) { pool_free(&s->free_req, r); }

/* room for one more pending comm: made before the comm is started, so that
 * a started comm always has its place */
static int act_reserve(sg_rank *s)
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

static void act_push(sg_rank *s, sg_comm_t comm, void *owner, int is_get)
{
    s->act[s->nact] = comm;
    s->act_owner[s->nact] = owner;
    s->act_is_get[s->nact] = (unsigned char)is_get;
    s->nact++;
}

static void act_remove(sg_rank *s, size_t i)
{
    s->nact--;
    s->act[i] = s->act[s->nact];
    s->act_owner[i] = s->act_owner[s->nact];
    s->act_is_get[i] = s->act_is_get[s->nact];
}

static int post_get(sp_ctx *c)
{
    sg_rank *s = RS(c);
    getrec *g = act_reserve(s) == 0 ? pool_alloc(&s->free_get, sizeof *g) : NULL;
    if (!g) {
        sp_fail(c->shim, "out of memory on rank %d", c->rank);
        return -1;
    }
    g->sender_pid = -1;
    g->comm = sg_mailbox_get_async(G.mbox[c->rank], &g->payload);
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
    sg_rank *s = RS(c);
    while (s->ngets_pending < s->nposted - s->nheld)
        if (post_get(c) != 0)
            return -1;
    return 0;
}

static void complete_req(sg_rank *s, sp_req *r, long long result)
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
static void deliver(sp_ctx *c, envelope *e)
{
    sg_rank *s = RS(c);
    sp_msg_event ev = {e->iter, e->phase, e->src, c->rank, e->tag, e->bytes, e->t_post, e->t_done};
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
            if (c->shim->disturb) /* the transfer ran from when both sides were there */
                sp_disturb_heard(c->shim->disturb, c, &e->path, e->src, r->t_posted > e->t_post ? r->t_posted : e->t_post,
                                 e->t_done);
            copy_into(r, e);
            complete_req(s, r, r->result);
            env_free(e);
            return;
        }
    }
    e->next = NULL;
    if (c->shim->disturb) /* unexpected: it ran as soon as it was sent */
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

static void unlink_get(sg_rank *s, getrec *g)
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
    sg_rank *s = RS(c);
    envelope *e = g->payload;
    g->completed = 1;
    s->ngets_pending--;
    if (e->src < 0) { /* the postman's bell: take_due follows */
        U.box[c->rank].bell_out = 0;
        unlink_get(s, g);
        return;
    }
    e->t_done = t_finish;
    long pid = G.pid_base + e->src;
    g->sender_pid = pid;
    if (!order_settled(g, pid)) {
        g->held = e;
        s->nheld++;
        return;
    }
    unlink_get(s, g);
    deliver(c, e);
    /* held envelopes that were waiting on this one */
    for (getrec *h = s->gets_head; h;) {
        getrec *next = h->next;
        if (h->completed && h->held && order_settled(h, h->sender_pid)) {
            envelope *he = h->held;
            s->nheld--;
            unlink_get(s, h);
            deliver(c, he);
            next = s->gets_head; /* list changed; rescan from the start */
        }
        h = next;
    }
}

/* Which pending comm can be waited for alone without missing an event that
 * needs a reaction (only a completed get does: it may bring an unexpected
 * message, after which another get must be posted at once)?  With one get
 * pending and a waited receive still open, that get must complete before
 * the wait can end; with no get pending, any waited send.  Otherwise -1,
 * and the caller waits for any.  A plain wait is much cheaper in SimGrid
 * than a wait for any (bench/README.md). */
static long single_waitable(sg_rank *s)
{
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

static int take_due(sp_ctx *c);

/* wait for one of the rank's pending comms and process it; -1: nothing is
 * pending, -2: the engine found that nothing can ever complete (deadlock) */
static int progress(sp_ctx *c)
{
    sg_rank *s = RS(c);
    postbox *b = U.box ? &U.box[c->rank] : NULL;
    if (b && take_due(c) > 0)
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
        complete_req(s, r, r->result);
    }
    return 0;
}

/* Host and copy overheads of the device profile (topologies/device.h),
 * zero in the plain profiles.  The rule, per message and per call:
 *  - posting a send costs the sender o_send of host CPU plus the copy of the
 *    message from device to host memory (the papers' codes send from host
 *    buffers), before the message leaves;
 *  - every receive a wait completes costs o_recv plus the copy of what
 *    arrived from host to device memory, after the wait;
 *  - every wait (one blocking call into the communication library: a step
 *    of a collective) costs call_o.
 * LogGP's o: Alexandrov, Ionescu, Schauser, Scheiman, SPAA 1995. */
static double send_overhead(const sp_ctx *c, size_t bytes)
{
    const sp_device *d = c->shim->dev;
    return d ? d->send_o + sp_device_copy_time(d, (double)bytes) : 0.0;
}

/* may a message to dst bypass sharing without overtaking one of the same
 * pair that still shares links?  (A later, larger message cannot overtake
 * an earlier bypassing one: alone it already takes longer, and sharing only
 * slows it.)  The scan is bounded: past a few pending sends, share. */
static int unshared_ok(const sg_rank *s, int dst)
{
    size_t sends = s->nact - (size_t)s->ngets_pending;
    if (sends == 0)
        return 1;
    if (sends > 16)
        return 0;
    for (size_t i = 0; i < s->nact; i++)
        if (!s->act_is_get[i] && ((const sp_req *)s->act_owner[i])->peer == dst)
            return 0;
    return 1;
}

/* A bypassing message is due when spg_unshared_arrival says: alone on its
 * route it takes exactly SimGrid's time, and each link of the route serves
 * the bypassing messages in the order they were posted (the gap per byte
 * of LogGP at the ends, Alexandrov, Ionescu, Schauser, Scheiman, SPAA 1995,
 * applied to every link).  Messages to one rank arrive in the order they
 * were sent, which keeps every pair's order. */
static int post_unshared(sp_ctx *c, int dst, envelope *e)
{
    postbox *b = &U.box[dst];
    double due = spg_unshared_arrival(G.hosts[c->rank], G.hosts[dst], (double)e->bytes, simgrid_get_clock());
    if (due < 0) {
        sp_fail(c->shim, "no route from rank %d to rank %d", c->rank, dst);
        return -1;
    }
    if (due < b->in_free)
        due = b->in_free;
    b->in_free = due;
    e->t_done = due;
    e->next = NULL;
    if (b->tail)
        b->tail->next = e;
    else
        b->head = e;
    b->tail = e;
    if (b->wait_until > due && !b->armed) { /* blocked, and nothing would wake it by then */
        b->armed = 1;
        b->ring_at = due - b->self_time;
        sg_sem_release(b->ring);
    }
    return 0;
}

/* the receiver takes its bypassing messages that are due; how many */
static int take_due(sp_ctx *c)
{
    postbox *b = &U.box[c->rank];
    double now = simgrid_get_clock();
    int taken = 0;
    while (b->head && b->head->t_done <= now) {
        envelope *e = b->head;
        if (!(b->head = e->next))
            b->tail = NULL;
        deliver(c, e);
        taken++;
    }
    return taken;
}

/* rank r's postman: armed by a sender when the rank is blocked with nothing
 * due to wake it, it rings at the message's due date (puts the bell, less
 * the bell's own way, and waits until a get of the rank takes it) if the
 * rank is still blocked until after then */
static void postman_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sg_actor_daemonize(sg_actor_self());
    postbox *b = sg_actor_self_get_data();
    int r = (int)(b - U.box);
    b->bell.src = -1;
    b->bell.pooled = 1;
    for (;;) {
        if (!b->armed) {
            sg_sem_acquire(b->ring);
            continue;
        }
        double now = simgrid_get_clock();
        if (b->ring_at > now) {
            sg_sem_acquire_timeout(b->ring, b->ring_at - now);
            continue;
        }
        b->armed = 0;
        if (b->wait_until > now && !b->bell_out) {
            b->bell_out = 1;
            sg_comm_t cm = sg_mailbox_put_async(G.mbox[r], &b->bell, 0);
            if (spg_wait_one(cm, NULL) != 0)
                return; /* the run is ending */
        }
    }
}

static sp_req *sg_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post)
{
    sg_rank *s = RS(c);
    double o = send_overhead(c, bytes);
    if (o > 0) {
        sg_actor_sleep_for(o);
        if (t_post > 0 || c->shim->want_times)
            t_post = simgrid_get_clock(); /* it leaves when the host is done with it */
    }
    size_t datasz = buf ? bytes : 0;
    if (act_reserve(s) != 0)
        return NULL;
    envelope *e = datasz ? malloc(sizeof *e + datasz) : pool_alloc(&G.free_env, sizeof *e);
    if (!e)
        return NULL;
    e->pooled = datasz == 0;
    sp_req *r = pool_alloc(&s->free_req, sizeof *r);
    if (!r) {
        env_free(e);
        return NULL;
    }
    e->src = c->rank;
    e->tag = tag;
    e->iter = c->iter;
    e->phase = c->phase;
    e->bytes = bytes;
    e->t_post = t_post;
    e->t_done = 0;
    e->has_data = buf != NULL;
    e->next = NULL;
    if (c->shim->disturb)
        e->path = sp_disturb_path_out(c->shim->disturb, c);
    if (datasz)
        memcpy(e->data, buf, datasz);
    r->is_send = 1;
    r->peer = dst;
    r->tag = tag;
    r->result = (long long)bytes;
    if (U.below > 0 && (double)bytes < U.below && unshared_ok(s, dst)) {
        if (post_unshared(c, dst, e) != 0) {
            env_free(e);
            req_free(s, r);
            return NULL;
        }
        r->done = 1;
        return r;
    }
    act_push(s, sg_mailbox_put_async(G.mbox[dst], e, (long)bytes), r, 0);
    return r;
}

static sp_req *sg_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    sg_rank *s = RS(c);
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
            env_free(e);
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
    sg_rank *s = RS(c);
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
    const sp_device *dev = c->shim->dev;
    double o = dev ? dev->call_o : 0.0;
    for (int i = 0; i < n; i++) {
        if (!reqs[i]) {
            if (sizes)
                sizes[i] = 0;
            continue;
        }
        long long res = reqs[i]->result;
        if (dev && !reqs[i]->is_send && res >= 0)
            o += dev->recv_o + sp_device_copy_time(dev, (double)res);
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
    if (++G.arrived == G.P) {
        G.arrived = 0;
        if (last)
            last(arg);
    }
    RS(c)->in_sync = 1;
    sg_barrier_wait(G.barrier);
    RS(c)->in_sync = 0;
}

static const sp_backend simgrid_backend = {"simgrid", sg_isend, sg_irecv, sg_waitall, sg_now, sg_advance, sg_barrier};

static void rank_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sp_ctx *c = sg_actor_self_get_data();
    c->shim->rank_main(c, c->shim->rank_arg);
    sg_rank *s = RS(c);
    /* with bypassing messages, gets posted for receives that a bypassing
     * message met are left over: nothing else will come */
    for (size_t i = s->nact; U.box && i-- > 0;)
        if (s->act_is_get[i]) {
            spg_comm_cancel(s->act[i]);
            unlink_get(s, s->act_owner[i]);
            s->ngets_pending--;
            act_remove(s, i);
        }
    s->finished = 1;
    if (++G.nfinished == G.P && G.nbg) { /* other jobs' flows end with the run */
        G.stop_bg = 1;
        spg_bg_cancel_all();
    }
}

static void free_rank_state(sg_rank *s)
{
    while (s->unexp_head) {
        envelope *e = s->unexp_head;
        s->unexp_head = e->next;
        env_free(e);
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
            env_free(g->held);
        free(g);
    }
    pool_drain(&s->free_req);
    pool_drain(&s->free_get);
    free(s->act);
    free(s->act_owner);
    free(s->act_is_get);
}

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
        simgrid_init(&argc, argv);
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

/* ---- disturbances: degraded links, background traffic, a failed rank ---- */

enum { ST_LINKS = 201, ST_BG = 202 };

/* a link's full-duplex name: without its _UP or _DOWN half */
static void link_base(const char *name, char *out, size_t n)
{
    size_t len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, "_UP"))
        len -= 3;
    else if (len > 5 && !strcmp(name + len - 5, "_DOWN"))
        len -= 5;
    snprintf(out, n, "%.*s", (int)len, name);
}

/* the full-duplex link a rank's host reaches the network by: the first link
 * of its route to another rank's host */
static int nic_of(int r, char *out, size_t n)
{
    if (G.P < 2)
        return -1;
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(G.hosts[r], G.hosts[(r + 1) % G.P], d);
    int ok = xbt_dynar_length(d) > 0;
    if (ok)
        link_base(sg_link_get_name(xbt_dynar_get_as(d, 0, sg_link_t)), out, n);
    xbt_dynar_free(&d);
    return ok ? 0 : -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the prefix that names a built-in class of links (dragonfly colours) */
static const char *class_prefix(const char *cls)
{
    static const char *const known[][2] = {{"green", "green_link_"}, {"black", "black_link_"}, {"blue", "blue_link_"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(cls, known[i][0]))
            return known[i][1];
    return NULL;
}

/* Degrades the links the disturbance names.  0, or 2 with a message (no such
 * links), or 1 (no memory). */
static int degrade_links(sp_shim *sh, const char *platform, char *err, size_t errlen)
{
    const sp_disturb_opts *o = sp_disturb_options(sh->disturb);
    sp_report_disturb *out = sh->rep->disturb;
    size_t nl = sg_link_count();
    sg_link_t *all = sg_link_list();
    char **bases = calloc(nl + (size_t)G.P + 1, sizeof *bases);
    int nb = 0, rc = 1;
    if (!all || !bases)
        goto done;
    char b[300];
    if (o->degrade_nic >= 0) {
        if (nic_of(o->degrade_nic, b, sizeof b) == 0 && !(bases[nb++] = strdup(b)))
            goto done;
    } else if (!strcmp(o->degrade_links, "nic")) {
        for (int r = 0; r < G.P; r++)
            if (nic_of(r, b, sizeof b) == 0 && !(bases[nb++] = strdup(b)))
                goto done;
    } else {
        const char *pre = class_prefix(o->degrade_links);
        int every = !strcmp(o->degrade_links, "all");
        if (!pre)
            pre = o->degrade_links;
        for (size_t i = 0; i < nl; i++) {
            const char *name = sg_link_get_name(all[i]);
            if (!strncmp(name, "__", 2) || (!every && strncmp(name, pre, strlen(pre)) != 0))
                continue;
            link_base(name, b, sizeof b);
            if (!(bases[nb++] = strdup(b)))
                goto done;
        }
    }
    /* one entry per full-duplex link, in name order (the draw is then the
     * same whatever order SimGrid lists them in) */
    qsort(bases, (size_t)nb, sizeof *bases, cmp_str);
    int w = 0;
    for (int i = 0; i < nb; i++) {
        if (w > 0 && !strcmp(bases[w - 1], bases[i])) {
            free(bases[i]);
            continue;
        }
        bases[w++] = bases[i];
    }
    nb = w;
    if (nb == 0) {
        char cls[200] = "";
        static const char *const names[] = {"green", "black", "blue"};
        for (int i = 0; i < 3; i++)
            for (size_t j = 0; j < nl; j++)
                if (!strncmp(sg_link_get_name(all[j]), class_prefix(names[i]), strlen(class_prefix(names[i])))) {
                    strncat(cls, ", ", sizeof cls - strlen(cls) - 1);
                    strncat(cls, names[i], sizeof cls - strlen(cls) - 1);
                    break;
                }
        char shown[120];
        size_t k = 0;
        for (const char *t = o->degrade_links; *t && k + 5 < sizeof shown; t++)
            k += (unsigned char)*t < 0x20 ? (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x", *t)
                                          : (size_t)snprintf(shown + k, sizeof shown - k, "%c", *t);
        if (o->degrade_nic >= 0)
            snprintf(err, errlen, "--degrade-nic %d: rank %d's host has no link to the others on %s", o->degrade_nic,
                     o->degrade_nic, platform);
        else
            snprintf(err, errlen,
                     "--degrade-links: no link class or link '%s' on %s at P = %d (classes there: nic%s, all; or a "
                     "link's name)",
                     shown, platform, G.P, cls);
        rc = 2;
        goto done;
    }
    int want = nb;
    if (o->degrade_count > 0) {
        if (o->degrade_count > nb) {
            snprintf(err, errlen, "--degrade-count %d: '%s' has %d link%s on %s at P = %d", o->degrade_count,
                     o->degrade_links, nb, nb == 1 ? "" : "s", platform, G.P);
            rc = 2;
            goto done;
        }
        want = o->degrade_count;
    } else if (o->degrade_fraction < 1.0) {
        want = (int)floor(o->degrade_fraction * nb + 0.5);
        if (want < 1)
            want = 1;
    }
    /* a partial shuffle keyed by the seed picks `want` of them */
    for (int j = 0; j < want; j++) {
        int pick = j + (int)(sp_disturb_uniform(sp_disturb_seed(sh->disturb), ST_LINKS, (uint64_t)j, 0) * (nb - j));
        if (pick >= nb)
            pick = nb - 1;
        char *t = bases[j];
        bases[j] = bases[pick];
        bases[pick] = t;
    }
    qsort(bases, (size_t)want, sizeof *bases, cmp_str);
    for (size_t i = 0; i < nl; i++) {
        char base[300];
        link_base(sg_link_get_name(all[i]), base, sizeof base);
        if (!bsearch(&(const char *){base}, bases, (size_t)want, sizeof *bases, cmp_str))
            continue;
        if (o->degrade_bw != 1.0)
            sg_link_set_bandwidth(all[i], sg_link_get_bandwidth(all[i]) * o->degrade_bw);
        if (o->degrade_latency > 0)
            sg_link_set_latency(all[i], sg_link_get_latency(all[i]) + o->degrade_latency);
    }
    out->links_degraded = want;
    out->links_in_target = nb;
    for (int j = 0; j < want && j < SP_REPORT_NAMED; j++)
        snprintf(out->link_names[j], sizeof out->link_names[j], "%s", bases[j]);
    rc = 0;
done:
    if (rc == 1)
        snprintf(err, errlen, "out of memory degrading links");
    for (int i = 0; i < nb; i++)
        free(bases[i]);
    free(bases);
    free(all);
    return rc;
}

static void bg_done(void *arg, int src, int dst, double bytes, double t0, double t1)
{
    (void)arg;
    sp_slice_event e = {-1, "flow", t0, t1, -1, 0, src, dst, bytes};
    sp_disturb_slice(G.sh->disturb, &e);
}

/* other jobs' flows: a Poisson stream of flows of --bg-flow bytes from every
 * host at --bg-load of its injection bandwidth, to a uniform random other
 * host or to the one half the machine away */
static void background_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sg_actor_daemonize(sg_actor_self());
    sp_disturb *d = G.sh->disturb;
    const sp_disturb_opts *o = sp_disturb_options(d);
    sp_report_disturb *out = G.sh->rep->disturb;
    uint64_t seed = sp_disturb_seed(d);
    int H = G.nbg;
    double rate = out->bg_rate * H, t = 0, bytes = (double)o->bg_flow;
    for (uint64_t k = 0; !G.stop_bg; k++) {
        t -= log(1.0 - sp_disturb_uniform(seed, ST_BG, k, 0)) / rate;
        double now = simgrid_get_clock();
        if (t > now)
            sg_actor_sleep_for(t - now);
        if (G.stop_bg)
            break;
        int src = (int)(sp_disturb_uniform(seed, ST_BG, k, 1) * H), dst;
        if (src >= H)
            src = H - 1;
        if (o->bg_pattern == SP_BG_SHIFT) {
            dst = (src + (H / 2 > 0 ? H / 2 : 1)) % H;
        } else {
            int off = 1 + (int)(sp_disturb_uniform(seed, ST_BG, k, 2) * (H - 1));
            dst = (src + (off < H ? off : H - 1)) % H;
        }
        spg_bg_reap(bg_done, NULL);
        spg_bg_start(G.bg_hosts[src], G.bg_hosts[dst], bytes, src, dst);
        out->bg_flows++;
        out->bg_bytes += o->bg_flow;
    }
}

/* --fail-rank: the rank stops at --fail-at, as a crashed process would */
static void failure_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sg_actor_daemonize(sg_actor_self());
    const sp_disturb_opts *o = sp_disturb_options(G.sh->disturb);
    if (o->fail_at > simgrid_get_clock())
        sg_actor_sleep_until(o->fail_at);
    int R = o->fail_rank;
    if (G.slots[R].s.finished)
        return; /* it had finished: nothing stops */
    const sp_ctx *c = &G.slots[R].ctx;
    G.fail_iter = c->iter;
    G.fail_phase = c->phase;
    G.fail_in_sync = G.slots[R].s.in_sync;
    G.fail_time = simgrid_get_clock();
    G.fail_rank = R;
    sg_actor_suspend(G.actors[R]);
    G.stop_bg = 1; /* the engine can then find that nobody can go on */
}

/* does rank r wait on rank R (a receive from it, a send to it, or the
 * synchronisation it never reaches)? */
static int waits_on(int r, int R)
{
    sg_rank *s = &G.slots[r].s;
    if (s->in_sync)
        return 1;
    for (const sp_req *q = s->posted_head; q; q = q->next)
        if (q->peer == R)
            return 1;
    for (size_t i = 0; i < s->nact; i++)
        if (!s->act_is_get[i] && ((const sp_req *)s->act_owner[i])->peer == R)
            return 1;
    return 0;
}

/* the engine found that nobody can go on: after a rank has stopped, this is
 * how the run ends, in one line naming it and those left waiting on it */
static void on_deadlock(void)
{
    if (!G.sh || G.fail_rank < 0)
        return;
    int R = G.fail_rank, nwait = 0, behind = 0;
    char list[400] = "";
    size_t w = 0;
    for (int r = 0; r < G.P; r++) {
        if (r == R || G.slots[r].s.finished)
            continue;
        if (waits_on(r, R)) {
            if (nwait < 16 && w < sizeof list)
                w += (size_t)snprintf(list + w, sizeof list - w, "%s%d", nwait ? ", " : "", r);
            nwait++;
        } else {
            behind++;
        }
    }
    if (nwait > 16 && w < sizeof list)
        snprintf(list + w, sizeof list - w, ", ... (%d in all)", nwait);
    char where[200];
    if (G.fail_in_sync)
        snprintf(where, sizeof where, "in the synchronisation after iteration %d", G.fail_iter);
    else
        snprintf(where, sizeof where, "in phase %s of iteration %d", G.sh->rep->phase_names[G.fail_phase],
                 G.fail_iter);
    char more[80] = "";
    if (behind)
        snprintf(more, sizeof more, "; %d more blocked behind them", behind);
    sp_fail(G.sh, "rank %d stopped at %.9g s (--fail-rank, --fail-at) %s; %d rank%s left waiting on it%s%s%s", R,
            G.fail_time, where, nwait, nwait == 1 ? " was" : "s were", nwait ? ": " : "", list, more);
}

/* the links of the route from rank src's host to rank dst's, by name */
static void name_route(void *arg, int src, int dst, char *buf, size_t len)
{
    (void)arg;
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(G.hosts[src], G.hosts[dst], d);
    size_t w = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < xbt_dynar_length(d); i++) {
        const char *name = sg_link_get_name(xbt_dynar_get_as(d, i, sg_link_t));
        if (w + strlen(name) + 5 >= len) { /* whole names only */
            snprintf(buf + w, len - w, "%s...", i ? "," : "");
            break;
        }
        w += (size_t)snprintf(buf + w, len - w, "%s%s", i ? "," : "", name);
    }
    xbt_dynar_free(&d);
}

/* the disturbances that live in the platform and in actors of their own;
 * 0, 2 (bad input: no such links) or 1, with a message */
static int start_disturbances(sp_shim *sh, const char *platform, char *err, size_t errlen)
{
    const sp_disturb_opts *o = sp_disturb_options(sh->disturb);
    sp_report_disturb *out = sh->rep->disturb;
    if (sp_disturb_links_on(o)) {
        int rc = degrade_links(sh, platform, err, errlen);
        if (rc)
            return rc;
    }
    if (sp_disturb_background_on(o)) {
        size_t nh = sg_host_count();
        sg_host_t *hl = sg_host_list();
        if (!hl || nh < 2) {
            free(hl);
            snprintf(err, errlen, nh < 2 ? "--bg-load needs a platform of at least two hosts" : "out of memory");
            return nh < 2 ? 2 : 1;
        }
        G.bg_hosts = hl;
        G.nbg = (int)nh;
        /* a host's injection bandwidth: the narrowest link of its route to another */
        double bw = G.P > 1 ? sg_host_get_route_bandwidth(G.hosts[0], G.hosts[1])
                            : sg_host_get_route_bandwidth(hl[0], hl[1]);
        out->bg_hosts = G.nbg;
        out->bg_rate = o->bg_load * bw / (double)o->bg_flow;
        sg_actor_t a = sg_actor_init("background", G.hosts[0]);
        sg_actor_start(a, background_actor, 0, NULL);
    }
    if (sp_disturb_failure_on(o)) {
        sg_actor_t a = sg_actor_init("failure", G.hosts[0]);
        sg_actor_start(a, failure_actor, 0, NULL);
    }
    return 0;
}

const char *sp_backend_name(void) { return "simgrid"; }
int sp_backend_is_root(void) { return 1; }

static void free_all(void)
{
    if (G.slots)
        for (int r = 0; r < G.P; r++)
            free_rank_state(&G.slots[r].s);
    if (G.barrier)
        sg_barrier_destroy(G.barrier);
    pool_drain(&G.free_env);
    spg_bg_cancel_all();
    if (U.box) {
        for (int r = 0; r < G.P; r++) {
            postbox *b = &U.box[r];
            while (b->head) {
                envelope *e = b->head;
                b->head = e->next;
                env_free(e);
            }
            if (b->ring)
                sg_sem_destroy(b->ring);
        }
        free(U.box);
    }
    memset(&U, 0, sizeof U);
    free(G.actors);
    free(G.bg_hosts);
    free(G.hosts);
    free(G.mbox);
    free(G.slots);
    memset(&G, 0, sizeof G);
}

/* --unshared-below: one postbox and postman per rank, after the ranks (whose
 * actor ids must be contiguous) */
static int start_postmen(double below, int piecewise, char *err, size_t errlen)
{
    if (spg_uncontended_init(piecewise) != 0) {
        snprintf(err, errlen, "internal error: the network model's factors could not be read");
        return -1;
    }
    spg_unshared_reset();
    U.box = calloc((size_t)G.P, sizeof *U.box);
    if (!U.box) {
        snprintf(err, errlen, "out of memory for %d postboxes", G.P);
        return -1;
    }
    U.below = below;
    char name[32];
    for (int r = 0; r < G.P; r++) {
        postbox *b = &U.box[r];
        b->self_time = spg_uncontended_time(G.hosts[r], G.hosts[r], 0);
        if (b->self_time < 0)
            b->self_time = 0;
        b->wait_until = -1;
        if (!(b->ring = sg_sem_init(0))) {
            snprintf(err, errlen, "out of memory for %d postboxes", G.P);
            return -1;
        }
        snprintf(name, sizeof name, "postman-%d", r);
        sg_actor_t a = sg_actor_init(name, G.hosts[r]);
        sg_actor_set_data(a, b);
        sg_actor_start(a, postman_actor, 0, NULL);
    }
    return 0;
}

/* crosstraffic: 0 as the model has it, 1 on, 2 off (sp_backend_config) */
static void set_network_model(const char *network, int crosstraffic)
{
    if (strcmp(network, "cm02") == 0) {
        sg_cfg_set_string("network/model", "CM02");
        sg_cfg_set_boolean("network/crosstraffic", "no");
    } else if (strcmp(network, "smpi") == 0) {
        sg_cfg_set_string("network/model", "SMPI");
    } else {
        sg_cfg_set_string("network/model", "LV08");
    }
    /* TCP's acknowledgements load the reverse direction of a flow's links
     * (SimGrid's crosstraffic, on in LV08 and SMPI); every flow then shares
     * links with the flows coming the other way, which couples far more of
     * them in the max-min solver */
    if (crosstraffic)
        sg_cfg_set_boolean("network/crosstraffic", crosstraffic == 1 ? "yes" : "no");
}

/* the hosts of the P ranks: node-0.. of a built-in, the first P of a file */
static int find_hosts(const sp_platform *plat, const char *platform, int P, char *err, size_t errlen)
{
    if (plat->host_prefix[0]) {
        char name[64];
        for (int r = 0; r < P; r++) {
            snprintf(name, sizeof name, "%s%d", plat->host_prefix, r);
            G.hosts[r] = sg_host_by_name(name);
            if (!G.hosts[r]) {
                snprintf(err, errlen, "platform has no host %s", name);
                return -1;
            }
        }
        return 0;
    }
    size_t nh = sg_host_count(); /* O(H log H): called once */
    if (nh < (size_t)P) {
        snprintf(err, errlen, "platform file '%s' has %zu hosts, fewer than --ranks %d", platform, nh, P);
        return -1;
    }
    sg_host_t *all = sg_host_list();
    if (!all) {
        snprintf(err, errlen, "out of memory listing the platform's hosts");
        return -1;
    }
    memcpy(G.hosts, all, (size_t)P * sizeof *G.hosts);
    free(all);
    return 0;
}

int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, char *err, size_t errlen)
{
    int P = cfg->ranks;
    sp_platform plat;
    if (sp_platform_prepare(cfg->platform, P, &plat, err, errlen) != 0)
        return 2;
    if (!plat.generated && !plat.builder[0] && (check_dragonfly_text(plat.xml_path, err, errlen) != 0 ||
                            check_platform_in_child(plat.xml_path, err, errlen) != 0))
        return 2;

    /* SimGrid's own chatter (configuration changes) stays quiet; warnings pass */
    int argc = 1;
    char *argv[] = {"sparsim", NULL};
    xbt_log_control_set("root.thresh:warning");
    xbt_log_control_set("ker_engine.app:file:/dev/null"); /* its deadlock report; ours says which rank */
    simgrid_init(&argc, argv);
    set_network_model(cfg->network, cfg->crosstraffic);
    sg_cfg_set_int("contexts/stack-size", 1024);

    char perr[512] = "";
    int rc = plat.builder[0] ? spg_build_aries(P, !strcmp(plat.builder, "aries"), perr, sizeof perr) /* in code */
                             : spg_load_platform(plat.xml_path, perr, sizeof perr);
    sp_platform_release(&plat);
    if (rc != 0) {
        perr[strcspn(perr, "\n")] = '\0';
        snprintf(err, errlen, "invalid platform file '%s': %s", cfg->platform, perr);
        return 2;
    }

    int ret = 1;
    memset(&G, 0, sizeof G);
    G.P = P;
    G.sh = sh;
    G.fail_rank = -1;
    G.hosts = calloc((size_t)P, sizeof *G.hosts);
    G.mbox = calloc((size_t)P, sizeof *G.mbox);
    G.slots = calloc((size_t)P, sizeof *G.slots);
    G.actors = calloc((size_t)P, sizeof *G.actors);
    if (!G.hosts || !G.mbox || !G.slots || !G.actors) {
        snprintf(err, errlen, "out of memory for %d ranks", P);
        goto out;
    }
    if (find_hosts(&plat, cfg->platform, P, err, errlen) != 0) {
        ret = 2;
        goto out;
    }
    /* alpha-beta facts of the route between the first two ranks */
    if (P >= 2) {
        sh->rep->alpha = sg_host_get_route_latency(G.hosts[0], G.hosts[1]);
        double bw = sg_host_get_route_bandwidth(G.hosts[0], G.hosts[1]);
        sh->rep->beta = bw > 0 ? 1.0 / bw : 0;
    }
    /* the route facts above are the undisturbed platform's */
    if (sh->disturb && (ret = start_disturbances(sh, cfg->platform, err, errlen)) != 0)
        goto out;
    ret = 1;
    char name[32];
    for (int r = 0; r < P; r++) {
        snprintf(name, sizeof name, "rank-%d", r);
        G.mbox[r] = sg_mailbox_by_name(name);
    }
    G.barrier = sg_barrier_init((unsigned)P);
    for (int r = 0; r < P; r++) {
        sp_ctx *c = &G.slots[r].ctx;
        c->rank = r;
        c->size = P;
        c->be = &simgrid_backend;
        c->be_state = &G.slots[r].s;
        c->shim = sh;
        snprintf(name, sizeof name, "rank-%d", r);
        sg_actor_t a = sg_actor_init(name, G.hosts[r]);
        sg_actor_set_data(a, c);
        sg_actor_start(a, rank_actor, 0, NULL);
        G.actors[r] = a;
        long pid = (long)sg_actor_get_pid(a);
        if (r == 0)
            G.pid_base = pid;
        else if (pid != G.pid_base + r) {
            snprintf(err, errlen, "internal error: actor ids are not contiguous");
            goto out;
        }
    }
    if (cfg->unshared_below > 0 && start_postmen(cfg->unshared_below, strcmp(cfg->network, "smpi") == 0, err,
                                                 errlen) != 0)
        goto out;
    char rerr[512] = "";
    /* after SimGrid's own SIGINT handler (which exits without cleaning up):
     * an interrupted run removes its .part outputs */
    sp_part_cleanup_on_signals();
    spg_on_deadlock(sh->disturb ? on_deadlock : NULL);
    rc = spg_run(rerr, sizeof rerr);
    int unfinished = 0, first_unfinished = -1;
    for (int r = 0; r < P; r++)
        if (!G.slots[r].s.finished) {
            if (first_unfinished < 0)
                first_unfinished = r;
            unfinished++;
        }
    if (sh->disturb && !sh->failed)
        sp_disturb_name_routes(sh->disturb, name_route, NULL);
    if (sh->failed) {
        snprintf(err, errlen, "%s", sh->errmsg);
    } else if (rc != 0 || unfinished) {
        snprintf(err, errlen,
                 "simulation ended with %d of %d ranks blocked (first: rank %d): a receive that can never be "
                 "matched, or a send nobody receives",
                 unfinished, P, first_unfinished);
    } else {
        ret = 0;
    }
out:
    free_all();
    return ret;
}
