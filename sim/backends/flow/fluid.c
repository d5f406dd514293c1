/* fluid.c - max-min fair sharing of links among flows (fluid.h says what).
 *
 * Shape, and why:
 *  - Every flow has one place in one indexed heap, keyed by its next event
 *    (the end of its latency, or its end at the current rate); a changed
 *    rate moves it in place, so the heap never holds stale entries.  The
 *    keys sit in the heap's entries, so a move reads no flow's record.
 *  - A flow's bytes are brought up to date only when its rate changes
 *    (remaining -= rate x elapsed), as SimGrid's lazy update does; a flow
 *    whose rate a solve leaves alone costs nothing.
 *  - A solve starts from the links whose set of flows changed: their flows
 *    are re-solved with every other flow held at its rate (the links they
 *    share with those keep what the others take).  Where the result and the
 *    held rates are not one max-min allocation (verify), the links where it
 *    fails are opened and the part grows; after a few tries the part is all
 *    that full links reach.  On symmetric traffic (an all-to-all over NICs
 *    that all fill at one level) a flow's end changes nobody's rate, and the
 *    first try, its links' flows alone, is the answer.
 *  - Progressive filling (Bertsekas and Gallager, Data Networks, 1992,
 *    section 6.5.2), weighted as SimGrid's lmm weights it: a link of
 *    remaining capacity R whose unfixed flows i have consumptions a_i and
 *    penalties p_i saturates at the level R / sum(a_i / p_i); the link with
 *    the lowest level saturates first, each of its unfixed flows gets
 *    level / p_i, and a flow bound below that (bound x p_i under the level)
 *    is fixed at its bound first.
 */
#include "fluid.h"
#include "sections.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { LATENT = 0, ACTIVE, ENDED };

#ifndef TIE
#define TIE(a, b) ((a) < (b))
#endif

typedef struct {
    int link;
    int pos; /* its place in the link's list */
    double coef;
} elem;

typedef struct flow {
    double remaining, rate, bound, penalty;
    double rf;      /* bytes per second per unit of solved value (the model's bandwidth factor) */
    double t_last;  /* remaining is as of then */
    double t_event; /* heap key */
    uint64_t seq;   /* ties go by the order of posting */
    int heap;       /* place in the heap, -1 none (or in a latency queue) */
    int state, nel;
    unsigned stamp; /* visited by the current solve */
    int fixed;      /* rate set in the current solve */
    int bl;         /* the link whose filling fixed it in the current solve (-1: its bound) */
    double newrate;
    double value;   /* the solved value now in force (rate = value x rf) */
    int fresh;      /* joined its links since the last solve: always solved */
    void *owner;
    struct flow *qnext; /* the next in its latency queue */
    elem *el;
    elem inl[8];
    struct flow *next_free;
} flow;

/* a flow on a link's list, and which of its elements is that link's */
typedef struct {
    struct flow *f;
    int e;
} onlink;

/* A link: what a message's start and end read (alone, rate_alone, the
 * lists) in its first cache line, the solve's working figures in the
 * second.  At thousands of ranks a link's record is cold by its next flow,
 * so each line it spans is a miss (bench/README.md, section 28). */
typedef struct {
    onlink *f;        /* flows through it (active ones) */
    int nf, cap;
    unsigned changed; /* its flows changed since the last solve (stamp of the pending change set) */
    unsigned stamp;   /* in the current solve's part */
    double capacity;
    double used;      /* sum of coef x value of its flows: what the sharing gives them now */
    double share; /* sum of coef / penalty over its flows: its level if none were held elsewhere is capacity / share */
    /* with slack (spf_net_slack): what flows that ended took of it and nobody
     * has been given yet (counted in used, left out of every fill), and the
     * lowest level among them */
    double ghost;
    unsigned edge;    /* at its edge: crossed by the part's flows, not expanded */
    unsigned force;   /* to be expanded in the current solve */
    /* second line */
    double ghost_level;
    double rem, usage;
    double excl; /* what the flows left out of the solve (below its floor) take of it */
    int unfixed;
} __attribute__((aligned(64))) link;
_Static_assert(offsetof(link, ghost_level) == 64, "a link's first cache line holds what a message reads");

/* Flows in their latency, one queue per latency: posted at times that
 * never go back, flows of one latency fall due in the order they were
 * posted, so the queue's head is its earliest (and of one instant, the
 * first posted).  A flow then enters the heap once, with its end, instead
 * of twice; a ring's steps post thousands of flows of two or three
 * latencies.  A latency beyond NLATQ queues goes to the heap as before. */
#define NLATQ 8
typedef struct {
    double lat;
    flow *head, *tail;
} latq;

/* a heap entry: a flow and its key */
typedef struct {
    double t;
    uint64_t seq;
    flow *f;
} hent;

struct spf_net {
    link *l;
    int nl, capl;
    hent *heap;
    int nheap, capheap;
    latq lq[NLATQ];
    int nqueued; /* flows in the latency queues */
    flow *free_flows;
    uint64_t started, solves, rerated, gathered;
    /* links changed since the last solve */
    int *chg;
    int nchg, capchg;
    unsigned chg_mark, stamp;
    /* the current solve's part */
    int *qlinks;
    int nq, capq;
    int *elinks; /* the edge links of the part */
    int ne, cape;
    int *open;   /* the fill's open links (part and edge), compacted as they close */
    int capopen;
    flow **qflows;
    int nqf, capqf;
    /* the floor of the next solve: the lowest level (value x penalty) among
     * the flows that ended since the last one, and a bound below the level
     * of each that started */
    double floor;
    int whole; /* solve everything a change reaches through any link (spf_net_whole) */
    double slack; /* spf_net_slack: share of a link that ended flows may leave unused (0: none) */
    uint64_t opened; /* edge links verify() opened */
    uint64_t alone;  /* flows rated alone on their links (activate) */
};

/* room for `need` elements of `size` bytes in *arr (capacity *cap, doubled
 * from `first`): 0, or -1 (memory; *arr as it was) */
SPF_NETMODEL static int grow(void *arr, int *cap, size_t size, int need, int first)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap : first;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*(void **)arr, (size_t)nc * size);
    if (!p)
        return -1;
    *(void **)arr = p;
    *cap = nc;
    return 0;
}

/* ---- the heap ---- */

/* The heap holds each flow's key beside it, so that its moves compare
 * entries of one array and read no flow: at thousands of flows in flight
 * the flows' records are cold (bench/README.md, section 28). */
SPF_NETMODEL static inline void heap_set(spf_net *n, int i, hent e)
{
    n->heap[i] = e;
    e.f->heap = i;
}

/* a before b: the earlier event, and of two at one instant the one posted first */
SPF_NETMODEL static inline int before(const flow *a, const flow *b)
{
    return a->t_event < b->t_event || (a->t_event == b->t_event && TIE(a->seq, b->seq));
}

SPF_NETMODEL static inline int hbefore(const hent *a, const hent *b)
{
    return a->t < b->t || (a->t == b->t && TIE(a->seq, b->seq));
}

SPF_NETMODEL static void heap_up(spf_net *n, int i)
{
    hent e = n->heap[i];
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!hbefore(&e, &n->heap[p]))
            break;
        heap_set(n, i, n->heap[p]);
        i = p;
    }
    heap_set(n, i, e);
}

SPF_NETMODEL static void heap_down(spf_net *n, int i)
{
    hent e = n->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n->nheap)
            break;
        if (c + 1 < n->nheap && hbefore(&n->heap[c + 1], &n->heap[c]))
            c++;
        if (!hbefore(&n->heap[c], &e))
            break;
        heap_set(n, i, n->heap[c]);
        i = c;
    }
    heap_set(n, i, e);
}

/* f into the heap at its t_event (room was made) */
SPF_NETMODEL static void heap_insert(spf_net *n, flow *f)
{
    int i = n->nheap++;
    heap_set(n, i, (hent){f->t_event, f->seq, f});
    heap_up(n, i);
}

SPF_NETMODEL static int heap_push(spf_net *n, flow *f)
{
    /* room for the queued flows too (place) */
    if (grow(&n->heap, &n->capheap, sizeof *n->heap, n->nheap + n->nqueued + 1, 256) != 0)
        return -1;
    heap_insert(n, f);
    return 0;
}

SPF_NETMODEL static void heap_remove(spf_net *n, flow *f)
{
    int i = f->heap;
    f->heap = -1;
    n->nheap--;
    if (i == n->nheap)
        return;
    hent m = n->heap[n->nheap];
    heap_set(n, i, m);
    heap_up(n, i);
    heap_down(n, m.f->heap);
}

/* a flow's key changed (it is in the heap) */
SPF_NETMODEL static void heap_move(spf_net *n, flow *f, double t)
{
    f->t_event = t;
    n->heap[f->heap].t = t;
    heap_up(n, f->heap);
    heap_down(n, f->heap);
}

/* the queue of latency lat that f can join at its tail (FIFO stays in
 * heap order), or -1 (the heap takes it) */
SPF_NETMODEL static int lat_queue(spf_net *n, double lat, const flow *f)
{
    int empty = -1;
    for (int q = 0; q < NLATQ; q++) {
        latq *lq = &n->lq[q];
        if (lq->head && lq->lat == lat)
            return before(lq->tail, f) ? q : -1;
        if (!lq->head && empty < 0)
            empty = q;
    }
    if (empty >= 0)
        n->lq[empty].lat = lat;
    return empty;
}

/* the flow whose event is next: the heap's top or a queue's head */
SPF_NETMODEL static flow *next_flow(const spf_net *n)
{
    flow *best = n->nheap ? n->heap[0].f : NULL;
    if (n->nqueued)
        for (int q = 0; q < NLATQ; q++) {
            flow *h = n->lq[q].head;
            if (h && (!best || before(h, best)))
                best = h;
        }
    return best;
}

/* f out of its latency queue (it is a head) */
SPF_NETMODEL static void unqueue(spf_net *n, flow *f)
{
    for (int q = 0; q < NLATQ; q++)
        if (n->lq[q].head == f) {
            n->lq[q].head = f->qnext;
            if (!f->qnext)
                n->lq[q].tail = NULL;
            f->qnext = NULL;
            n->nqueued--;
            return;
        }
}

/* f's event at t: moved in the heap, or entered into it (room was made when
 * it was queued) */
SPF_NETMODEL static void place(spf_net *n, flow *f, double t)
{
    if (f->heap >= 0) {
        heap_move(n, f, t);
        return;
    }
    f->t_event = t;
    heap_insert(n, f);
}

/* ---- links ---- */

SPF_NETMODEL spf_net *spf_net_new(void)
{
    spf_net *n = calloc(1, sizeof(spf_net));
    if (n)
        n->floor = INFINITY;
    return n;
}

/* a flow in flight, its elements with it */
SPF_NETMODEL static void free_flow(flow *f)
{
    if (f->el != f->inl)
        free(f->el);
    free(f);
}

SPF_NETMODEL void spf_net_free(spf_net *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->nl; i++) {
        free(n->l[i].f);
    }
    for (int i = 0; i < n->nheap; i++)
        free_flow(n->heap[i].f);
    for (int q = 0; q < NLATQ; q++)
        for (flow *f = n->lq[q].head, *next; f; f = next) {
            next = f->qnext;
            free_flow(f);
        }
    while (n->free_flows) {
        flow *f = n->free_flows;
        n->free_flows = f->next_free;
        free(f);
    }
    free(n->l);
    free(n->heap);
    free(n->chg);
    free(n->qlinks);
    free(n->elinks);
    free(n->open);
    free(n->qflows);
    free(n);
}

SPF_NETMODEL int spf_net_add_link(spf_net *n, double capacity)
{
    if (n->nl == n->capl) { /* aligned as the record is: realloc keeps 16 bytes */
        int cap = n->capl ? 2 * n->capl : 64;
        link *l = aligned_alloc(_Alignof(link), (size_t)cap * sizeof *l);
        if (!l)
            return -1;
        if (n->nl)
            memcpy(l, n->l, (size_t)n->nl * sizeof *l);
        free(n->l);
        n->l = l;
        n->capl = cap;
    }
    link *k = &n->l[n->nl];
    memset(k, 0, sizeof *k);
    k->capacity = capacity;
    return n->nl++;
}

SPF_NETMODEL static int mark_changed(spf_net *n, int li)
{
    link *k = &n->l[li];
    if (k->changed == n->chg_mark + 1)
        return 0;
    if (grow(&n->chg, &n->capchg, sizeof *n->chg, n->nchg + 1, 64) != 0)
        return -1;
    k->changed = n->chg_mark + 1;
    n->chg[n->nchg++] = li;
    return 0;
}

/* f on link e's list, the link not marked as changed */
SPF_NETMODEL static int link_list(spf_net *n, flow *f, int e)
{
    link *k = &n->l[f->el[e].link];
    if (grow(&k->f, &k->cap, sizeof *k->f, k->nf + 1, 4) != 0)
        return -1;
    f->el[e].pos = k->nf;
    k->share += f->el[e].coef / f->penalty;
    k->f[k->nf] = (onlink){f, e};
    k->nf++;
    return 0;
}

SPF_NETMODEL static int link_add(spf_net *n, flow *f, int e)
{
    return link_list(n, f, e) != 0 ? -1 : mark_changed(n, f->el[e].link);
}

/* f off link e's list, the link not marked as changed */
SPF_NETMODEL static void link_unlist(spf_net *n, flow *f, int e)
{
    link *k = &n->l[f->el[e].link];
    int pos = f->el[e].pos;
    k->share = k->nf > 1 ? k->share - f->el[e].coef / f->penalty : 0;
    k->nf--;
    if (pos != k->nf) {
        k->f[pos] = k->f[k->nf];
        k->f[pos].f->el[k->f[pos].e].pos = pos;
    }
}

SPF_NETMODEL static void link_remove(spf_net *n, flow *f, int e)
{
    link_unlist(n, f, e);
    mark_changed(n, f->el[e].link);
}

/* ---- flows ---- */

SPF_NETMODEL int spf_flow_start(spf_net *n, double now, double bytes, double latency, double bound, double penalty, double rf,
                   const int *links, const double *coefs, int nlinks, void *owner)
{
    flow *f = n->free_flows;
    if (f)
        n->free_flows = f->next_free;
    else if (!(f = malloc(sizeof *f)))
        return -1;
    memset(f, 0, offsetof(flow, inl));
    f->el = nlinks <= (int)(sizeof f->inl / sizeof f->inl[0]) ? f->inl : malloc((size_t)nlinks * sizeof *f->el);
    if (!f->el) {
        f->next_free = n->free_flows;
        n->free_flows = f;
        return -1;
    }
    for (int i = 0; i < nlinks; i++) {
        f->el[i].link = links[i];
        f->el[i].coef = coefs ? coefs[i] : 1.0;
        f->el[i].pos = -1;
    }
    f->nel = nlinks;
    f->remaining = bytes;
    f->bound = bound > 0 ? bound : INFINITY;
    f->penalty = penalty > 0 ? penalty : 1.0;
    f->rf = rf > 0 ? rf : 1.0;
    f->owner = owner;
    f->t_last = now;
    f->state = LATENT;
    f->t_event = now + (latency > 0 ? latency : 0);
    f->heap = -1;
    f->seq = n->started;
    /* room in the heap for every queued flow too: activate() cannot fail to place it */
    int q = latency > 0 && grow(&n->heap, &n->capheap, sizeof *n->heap, n->nheap + n->nqueued + 1, 256) == 0
                ? lat_queue(n, latency, f)
                : -1;
    if (q >= 0) {
        latq *lq = &n->lq[q];
        if (lq->tail)
            lq->tail->qnext = f;
        else
            lq->head = f;
        lq->tail = f;
        n->nqueued++;
    } else if (heap_push(n, f) != 0) {
        if (f->el != f->inl)
            free(f->el);
        f->next_free = n->free_flows;
        n->free_flows = f;
        return -1;
    }
    n->started++;
    return 0;
}

/* SimGrid 3.32 ends every action due within surf/precision (1e-9 s) of
 * the clock at the clock (network_cm02.cpp, update_actions_state_lazy) */
#define SAME_INSTANT 1e-9

/* A flow alone on its links: nobody else crosses any of them, none of them
 * waits for the next solve (a change there this instant), and none holds
 * what ended flows left (slack).  Its max-min rate is then its own: the
 * lowest of its links' capacity over its consumption, or its bound; a solve
 * over it alone would give exactly that, with the same operations
 * (fill()), and change no other flow.  So it is rated where it joins, and
 * when such a flow ends, nobody is left on its links to take what it
 * frees: neither needs a solve.  Rings and the NVLink hops of the NCCL
 * schemes are mostly such flows (bench/README.md, section 28). */
/* listed: 0, f is about to join its links (nobody is on them); 1, f is on
 * them and about to leave (nobody else is) */
SPF_NETMODEL static int alone(const spf_net *n, const flow *f, int listed)
{
    if (f->nel == 0 || n->whole || n->slack > 0)
        return 0;
    for (int e = 0; e < f->nel; e++) {
        const link *k = &n->l[f->el[e].link];
        if (k->nf != listed || (listed && f->el[e].pos < 0) || k->changed == n->chg_mark + 1 || k->ghost > 0)
            return 0;
    }
    return 1;
}

/* a flow alone on its links (alone(n, f, 0)) rated as a solve over it would rate
 * it: 1, or 0 where it would be through within this instant (left to the
 * solve, whose ends are taken at the solve), or -1 (memory) */
SPF_NETMODEL static int rate_alone(spf_net *n, flow *f, double t)
{
    double lv = INFINITY;
    for (int e = 0; e < f->nel; e++) {
        const link *k = &n->l[f->el[e].link];
        double l1 = k->capacity / (f->el[e].coef / f->penalty); /* fill's rem / usage */
        if (l1 < lv)
            lv = l1;
    }
    double value = f->bound * f->penalty < lv ? f->bound : lv / f->penalty;
    if (value > f->bound)
        value = f->bound;
    double rate = value * f->rf;
    if (!(rate > 0) || !(t + f->remaining / rate > t + SAME_INSTANT))
        return 0;
    for (int e = 0; e < f->nel; e++) {
        if (link_list(n, f, e) != 0)
            return -1;
        n->l[f->el[e].link].used = f->el[e].coef * value;
    }
    f->value = value;
    f->rate = rate;
    n->alone++;
    place(n, f, t + f->remaining / rate);
    return 1;
}

/* a latent flow's latency is over: it joins its links */
SPF_NETMODEL static int activate(spf_net *n, flow *f, double t)
{
    f->state = ACTIVE;
    f->t_last = t;
    f->rate = 0;
    f->value = 0;
    /* with nothing to move, or no link to share and no bound: through at once */
    if (f->remaining <= 0 || (f->nel == 0 && !isfinite(f->bound))) {
        f->remaining = 0;
        f->t_event = t;
        place(n, f, t);
        return 0;
    }
    if (f->nel == 0) { /* alone under its bound */
        f->rate = f->bound * f->rf;
        place(n, f, t + f->remaining / f->rate);
        return 0;
    }
    int rc = alone(n, f, 0) ? rate_alone(n, f, t) : 0;
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    /* with slack, a link whose ended flows left enough for the new one at
     * their level gives it that, and is not solved again (spf_net_slack) */
    int marked = 0, lazy = n->slack > 0 && !n->whole;
    for (int e = 0; e < f->nel; e++) {
        link *k = &n->l[f->el[e].link];
        double take = lazy && k->ghost > 0 ? f->el[e].coef * k->ghost_level / f->penalty : INFINITY;
        if (take <= k->ghost && k->changed != n->chg_mark + 1) {
            if (link_list(n, f, e) != 0)
                return -1;
            k->ghost -= take;
            k->used -= take;
            continue;
        }
        if (link_add(n, f, e) != 0)
            return -1;
        marked = 1;
    }
    if (!marked && mark_changed(n, f->el[0].link) != 0) /* something must rate it */
        return -1;
    /* the level the new flow will be fixed at is at least its bound's, or
     * the lowest its links could fill at with every flow on them growing
     * (flows fixed lower elsewhere only leave more): the flows below it keep
     * their rates (gather) */
    double lb = f->bound * f->penalty;
    for (int e = 0; e < f->nel; e++) {
        const link *k = &n->l[f->el[e].link];
        double lv = k->share > 0 ? k->capacity / k->share : INFINITY;
        if (lv < lb)
            lb = lv;
    }
    lb *= 1 - 1e-6; /* the shares are sums kept up as flows come and go */
    f->fresh = 1;
    if (lb < n->floor)
        n->floor = lb;
    place(n, f, INFINITY); /* until the solve rates it */
    return 0;
}

SPF_NETMODEL static void end_flow(spf_net *n, flow *f)
{
    heap_remove(n, f);
    double level = f->value * f->penalty;
    int changed = 0, lazy = n->slack > 0 && !n->whole;
    if (f->state == ACTIVE && alone(n, f, 1)) { /* it leaves nobody a share to take: no solve */
        for (int e = 0; e < f->nel; e++) {
            link_unlist(n, f, e);
            n->l[f->el[e].link].used = 0;
        }
    } else if (f->state == ACTIVE) {
        for (int e = 0; e < f->nel; e++)
            if (f->el[e].pos >= 0) {
                link *k = &n->l[f->el[e].link];
                double take = f->el[e].coef * f->value;
                if (lazy && k->changed != n->chg_mark + 1 && k->ghost + take <= n->slack * k->capacity) {
                    /* its part stays taken until the link is solved again */
                    if (k->ghost == 0 || level < k->ghost_level)
                        k->ghost_level = level;
                    k->ghost += take;
                    link_unlist(n, f, e);
                    continue;
                }
                k->used -= take;
                link_remove(n, f, e);
                changed = 1;
            }
    }
    if (changed && level < n->floor)
        n->floor = level;
    f->state = ENDED;
    if (f->el != f->inl)
        free(f->el);
    f->next_free = n->free_flows;
    n->free_flows = f;
}

SPF_NETMODEL double spf_net_next(const spf_net *n)
{
    const flow *f = next_flow(n);
    return f ? f->t_event : INFINITY;
}

SPF_NETMODEL void spf_net_advance(spf_net *n, double t, void (*done)(void *ctx, void *owner, double t), void *ctx)
{
    flow *f;
    while ((f = next_flow(n)) && f->t_event <= t + SAME_INSTANT) {
        double te = t;
        if (f->heap < 0)
            unqueue(n, f);
        if (f->state == LATENT) {
            activate(n, f, te);
            if (f->t_event > te) /* it moves now, or waits for the solve to rate it */
                continue;
        }
        void *owner = f->owner;
        end_flow(n, f);
        done(ctx, owner, te);
    }
}

/* ---- the solve ---- */

SPF_NETMODEL static int push_qlink(spf_net *n, int li)
{
    if (grow(&n->qlinks, &n->capq, sizeof *n->qlinks, n->nq + 1, 256) != 0)
        return -1;
    n->qlinks[n->nq++] = li;
    n->l[li].stamp = n->stamp;
    n->l[li].excl = 0;
    return 0;
}

SPF_NETMODEL static int push_qflow(spf_net *n, flow *f)
{
    if (grow(&n->qflows, &n->capqf, sizeof *n->qflows, n->nqf + 1, 256) != 0)
        return -1;
    n->qflows[n->nqf++] = f;
    f->stamp = n->stamp;
    return 0;
}

/* A link is tight when what its flows get fills it: only through tight
 * links can a change reach other flows.  A link with room to spare bounds
 * nobody; a change may fill it, which the solve checks (spf_net_solve). */
#define TIGHT_EPS 1e-7
SPF_NETMODEL static inline int tight(const link *k) { return k->used >= k->capacity * (1 - TIGHT_EPS); }

SPF_NETMODEL static int push_elink(spf_net *n, int li)
{
    if (grow(&n->elinks, &n->cape, sizeof *n->elinks, n->ne + 1, 256) != 0)
        return -1;
    n->elinks[n->ne++] = li;
    n->l[li].edge = n->stamp;
    return 0;
}

SPF_NETMODEL static void new_stamp(spf_net *n)
{
    n->stamp++;
    if (n->stamp == 0) { /* wrapped: no stale stamp may match */
        for (int i = 0; i < n->nl; i++)
            n->l[i].stamp = n->l[i].edge = 0;
        for (int i = 0; i < n->nheap; i++)
            n->heap[i].f->stamp = 0;
        for (int q = 0; q < NLATQ; q++)
            for (flow *f = n->lq[q].head; f; f = f->qnext)
                f->stamp = 0;
        n->stamp = 1;
    }
}

/* the part of the sharing graph the changed links reach through flows and
 * tight links (and links forced open); the links its flows cross beyond
 * that are its edge.  The flows whose level (value x penalty) is below the
 * lowest level of the flows that ended or started since the last solve keep
 * their rates: progressive filling reaches that level exactly as before,
 * since none of the changed flows' links fills below it (an ended flow
 * would have been fixed there before, a started one would be now).  They
 * stay out, and what they take is left out of their links' capacity. */
SPF_NETMODEL static int gather(spf_net *n, double floor, int local)
{
    n->nq = n->nqf = n->ne = 0;
    for (int i = 0; i < n->nchg; i++)
        if (n->l[n->chg[i]].stamp != n->stamp && push_qlink(n, n->chg[i]) != 0)
            return -1;
    for (int h = 0; h < n->nq; h++) {
        link *k = &n->l[n->qlinks[h]];
        for (int j = 0; j < k->nf; j++) {
            flow *f = k->f[j].f;
            if (f->stamp == n->stamp)
                continue;
            if (!f->fresh && f->value * f->penalty < floor) { /* below the floor: it keeps its rate, and takes its part */
                k->excl += f->el[k->f[j].e].coef * f->value;
                continue;
            }
            if (push_qflow(n, f) != 0)
                return -1;
            for (int e = 0; e < f->nel; e++) {
                int li = f->el[e].link;
                link *m = &n->l[li];
                if (m->stamp == n->stamp)
                    continue;
                if (n->whole || (!local && tight(m)) || m->force == (unsigned)n->solves) {
                    if (push_qlink(n, li) != 0)
                        return -1;
                } else if (m->edge != n->stamp && push_elink(n, li) != 0) {
                    return -1;
                }
            }
        }
    }
    /* an edge link that a later flow's tight path reached is expanded, not edge */
    int ne = 0;
    for (int i = 0; i < n->ne; i++)
        if (n->l[n->elinks[i]].stamp != n->stamp)
            n->elinks[ne++] = n->elinks[i];
    n->ne = ne;
    return 0;
}

/* fixes flow f at rate r: the links it crosses lose what it takes */
SPF_NETMODEL static void fix(spf_net *n, flow *f, double r, int bl)
{
    f->fixed = 1;
    f->bl = bl;
    f->newrate = r;
    for (int e = 0; e < f->nel; e++) {
        link *k = &n->l[f->el[e].link];
        k->rem -= f->el[e].coef * r;
        if (k->rem < 0)
            k->rem = 0;
        k->usage -= f->el[e].coef / f->penalty;
        k->unfixed--;
    }
}

#define REL_EPS 1e-9

/* progressive filling over the gathered part.  The lists of links with
 * unfixed flows and of unfixed flows shrink as rounds fix flows, so a
 * round costs what is still open, not the whole part. */
SPF_NETMODEL static void fill(spf_net *n)
{
    for (int h = 0; h < n->nq; h++) {
        link *k = &n->l[n->qlinks[h]];
        k->rem = k->capacity - k->excl - k->ghost;
        if (k->rem < 0)
            k->rem = 0;
        k->usage = 0;
        k->unfixed = 0;
    }
    /* an edge link keeps what its flows outside the part take */
    for (int h = 0; h < n->ne; h++) {
        link *k = &n->l[n->elinks[h]];
        k->rem = k->capacity - k->used;
        k->usage = 0;
        k->unfixed = 0;
    }
    for (int i = 0; i < n->nqf; i++) {
        flow *f = n->qflows[i];
        f->fixed = 0;
        f->newrate = 0;
        for (int e = 0; e < f->nel; e++) {
            link *k = &n->l[f->el[e].link];
            k->usage += f->el[e].coef / f->penalty;
            k->unfixed++;
            if (k->edge == n->stamp && k->stamp != n->stamp) /* its own share is the part's to give again */
                k->rem += f->el[e].coef * f->value;
        }
    }
    /* the open links: the part's and its edge's, one list (room made by spf_net_solve) */
    int *open = n->open;
    if (n->nq)
        memcpy(open, n->qlinks, (size_t)n->nq * sizeof *open);
    if (n->ne)
        memcpy(open + n->nq, n->elinks, (size_t)n->ne * sizeof *open);
    int nl = n->nq + n->ne, nf = n->nqf; /* open links and flows, compacted at the front of the lists */
    while (nf > 0) {
        double level = INFINITY;
        for (int h = 0; h < nl;) {
            link *k = &n->l[open[h]];
            if (k->unfixed <= 0) { /* closed: out of the open list */
                int t = open[h];
                open[h] = open[--nl];
                open[nl] = t;
                continue;
            }
            if (k->usage > 0) {
                double lv = k->rem / k->usage;
                if (lv < level)
                    level = lv;
            }
            h++;
        }
        double blevel = INFINITY;
        for (int i = 0; i < nf;) {
            flow *f = n->qflows[i];
            if (f->fixed) {
                n->qflows[i] = n->qflows[--nf];
                n->qflows[nf] = f;
                continue;
            }
            if (f->bound * f->penalty < blevel)
                blevel = f->bound * f->penalty;
            i++;
        }
        if (nf == 0)
            break;
        int fixed = 0;
        if (blevel < level) {
            double lim = blevel * (1 + REL_EPS);
            for (int i = 0; i < nf; i++) {
                flow *f = n->qflows[i];
                if (!f->fixed && f->bound * f->penalty <= lim) {
                    fix(n, f, f->bound, -1);
                    fixed++;
                }
            }
        } else if (isfinite(level)) {
            double lim = level * (1 + REL_EPS);
            for (int h = 0; h < nl; h++) {
                link *k = &n->l[open[h]];
                if (k->unfixed <= 0 || k->usage <= 0 || k->rem > lim * k->usage)
                    continue;
                for (int j = 0; j < k->nf; j++) {
                    flow *f = k->f[j].f;
                    if (f->fixed || f->stamp != n->stamp) /* fixed, or outside the part (an edge link) */
                        continue;
                    double r = level / f->penalty;
                    fix(n, f, r < f->bound ? r : f->bound, r < f->bound ? open[h] : -1);
                    fixed++;
                }
            }
        }
        if (fixed == 0) /* nothing binds what is left: no link limits it (cannot happen with links) */
            for (int i = 0; i < nf; i++)
                if (!n->qflows[i]->fixed)
                    fix(n, n->qflows[i], n->qflows[i]->bound, -1);
    }
}

/* room for the fill's open links */
SPF_NETMODEL static int room(spf_net *n) { return grow(&n->open, &n->capopen, sizeof *n->open, n->nq + n->ne, 256); }

/* After a fill: the edge links at which the part's new rates and the rates
 * left outside it are no longer one max-min allocation, forced open for the
 * next try; how many.  The allocation is max-min fair when every flow has a
 * bottleneck, a full link on which no flow has a higher level (Bertsekas
 * and Gallager, section 6.5.2).  The part's flows have one inside the part;
 * one held at an edge link must not be below a flow outside on it (1).  A
 * flow outside keeps its rate and its bottleneck unless that was an edge
 * link, which it can only have been if the link was full and the flow had
 * its highest level; then the link must still be full and no flow of the
 * part may have risen above it (2).  Links no flow of the part crosses are
 * as they were. */
SPF_NETMODEL static int verify(spf_net *n)
{
    int bad = 0;
    for (int h = 0; h < n->ne; h++) {
        int li = n->elinks[h];
        link *k = &n->l[li];
        int full = k->rem <= k->capacity * TIGHT_EPS;
        if (!full && !tight(k)) /* (1) needs it full now, (2) full before */
            continue;
        double out_max = -1, in_old = -1, in_new = -1, held_min = INFINITY;
        for (int j = 0; j < k->nf; j++) {
            const flow *f = k->f[j].f;
            double lo = f->value * f->penalty;
            if (f->stamp != n->stamp) {
                if (lo > out_max)
                    out_max = lo;
                continue;
            }
            double ln = f->newrate * f->penalty;
            if (lo > in_old)
                in_old = lo;
            if (ln > in_new)
                in_new = ln;
            if (f->bl == li && ln < held_min)
                held_min = ln;
        }
        if (out_max < 0) /* every flow on it was in the part */
            continue;
        int v = held_min < out_max * (1 - REL_EPS);                                        /* (1) */
        if (!v && tight(k) && out_max >= in_old * (1 - REL_EPS))                            /* (2) */
            v = !full || in_new > out_max * (1 + REL_EPS);
        if (v) {
            k->force = (unsigned)n->solves;
            bad++;
        }
    }
    return bad;
}

/* local tries before the solve takes in all that full links reach */
#define LOCAL_TRIES 4

SPF_NETMODEL void spf_net_solve(spf_net *n, double now)
{
    if (n->nchg == 0)
        return;
    n->solves++;
    new_stamp(n);
    /* a changed link gives back what ended flows left on it: the flows at or
     * above their level may take it */
    for (int i = 0; i < n->nchg; i++) {
        link *k = &n->l[n->chg[i]];
        if (k->ghost > 0) {
            k->used -= k->ghost;
            if (k->ghost_level < n->floor)
                n->floor = k->ghost_level;
            k->ghost = 0;
        }
    }
    double floor = n->whole ? 0 : n->floor * (1 - 1e-9);
    /* first the changed links' flows alone, the rest of the network held as
     * it is; where that is not one max-min allocation (verify), the links
     * where it fails are opened and the part grows; after LOCAL_TRIES the
     * part is all that full links reach from it */
    int local = !n->whole, tries = 0;
    for (;;) {
        if (gather(n, floor, local) != 0 || room(n) != 0) /* out of memory: keep the old rates; the next solve tries again */
            return;
        fill(n);
        n->gathered += (uint64_t)n->nqf;
        int bad = verify(n);
        if (!bad)
            break;
        n->opened += (uint64_t)bad;
        if (local && ++tries >= LOCAL_TRIES)
            local = 0;
        new_stamp(n);
    }
    n->chg_mark++;
    n->nchg = 0;
    n->floor = INFINITY;
    /* the links' use: exact on the part's links (all their flows are in it), moved on the edge's */
    for (int h = 0; h < n->nq; h++) {
        link *k = &n->l[n->qlinks[h]];
        k->used = k->excl + k->ghost;
    }
    for (int i = 0; i < n->nqf; i++) {
        flow *f = n->qflows[i];
        /* a rate the solve gave again up to rounding is kept as it was: the
         * flow keeps its place and its end */
        if (!f->fresh && fabs(f->newrate - f->value) <= 1e-12 * f->value)
            f->newrate = f->value;
        for (int e = 0; e < f->nel; e++) {
            link *k = &n->l[f->el[e].link];
            if (k->stamp == n->stamp)
                k->used += f->el[e].coef * f->newrate;
            else
                k->used += f->el[e].coef * (f->newrate - f->value);
        }
        f->value = f->newrate;
        f->fresh = 0;
    }
    for (int i = 0; i < n->nqf; i++) {
        flow *f = n->qflows[i];
        double rate = f->newrate * f->rf;
        if (rate == f->rate && f->t_event != INFINITY)
            continue;
        n->rerated++;
        f->remaining -= f->rate * (now - f->t_last);
        if (f->remaining < 0)
            f->remaining = 0;
        f->t_last = now;
        f->rate = rate;
        heap_move(n, f, f->rate > 0 ? now + f->remaining / f->rate : INFINITY);
    }
}

SPF_NETMODEL void spf_net_whole(spf_net *n, int on) { n->whole = on; }

SPF_NETMODEL void spf_net_slack(spf_net *n, double share) { n->slack = share > 0 ? share : 0; }

SPF_NETMODEL void spf_net_work(const spf_net *n, uint64_t *solves, uint64_t *rerated, uint64_t *gathered,
                               uint64_t *opened, uint64_t *alone)
{
    if (alone)
        *alone = n->alone;
    *solves = n->solves;
    *rerated = n->rerated;
    if (gathered)
        *gathered = n->gathered;
    if (opened)
        *opened = n->opened;
}
