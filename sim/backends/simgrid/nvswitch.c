/* nvswitch.c - a node's NVSwitch as an endpoint that reduces and
 * multicasts (NVLink SHARP, which NCCL's NVLS algorithm drives with multimem
 * loads and stores): sp_switch_push on the platforms whose fabric has an
 * nvls_bw (topologies/fabric.h).
 *
 * Shape, and why:
 *  - A push is a flow from the GPU's host to host nvswitch-N that no actor
 *    receives (simgrid_nodes.cpp routes it over the GPU's port up and the
 *    switch's intake, nvls_N): the pushing rank waits for it among its other
 *    comms (transport.c), and when it sees it end it hands the data to the
 *    switch here (spg_switch_arrived).  A rank sees its comms end while it
 *    waits, so a push is taken when it arrives as long as its GPU is in a
 *    wait then, as NCCL's kernels are; one that ends while its GPU computes
 *    is taken at the GPU's next wait.  (Gets posted by the switch itself
 *    would bind to the pushes in the order they were posted, not the order
 *    they arrive, and waiting for any of hundreds of them made each arrival
 *    cost as many.)
 *  - A slot per tag: the sum so far and the pushes it has.  The last push
 *    queues the slot for the node's switch actor, on host nvswitch-N, which
 *    sends the sum from there to the GPU named or to every GPU of the node
 *    (a multicast: one copy down each port), as messages from SP_SWITCH that
 *    the transport matches like any other (detached puts into the ranks'
 *    mailboxes).
 *  - A push is one message event (rank -> SP_SWITCH_END(node)) when it
 *    arrives; a sum sent is one when it is delivered (transport.c).
 *  - The switch actors are daemons: the run ends when the ranks do.  What
 *    they hold lives here, not on their stacks, and spg_switches_free frees it.
 */
#include "simgrid_internal.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct swslot {
    int tag, got, pushes, to, has_data, iter, phase;
    uint64_t bytes;
    float *sum;
    struct swslot *next;
} swslot;

typedef struct {
    int node;
    char name[32];
    sg_host_t host;
    long pid;                 /* its actor's: the sender of its sums */
    sg_sem_t ready;           /* one unit per slot queued for sending */
    swslot *slots;            /* still adding up */
    swslot *queue, *queue_tail; /* complete, to be sent in this order */
} nvswitch;

static struct {
    int nodes, G;
    nvswitch *sw;
} switches;

static swslot *slot_of(nvswitch *w, const envelope *e)
{
    for (swslot *s = w->slots; s; s = s->next)
        if (s->tag == e->tag)
            return s;
    swslot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->tag = e->tag;
    s->pushes = e->sw_pushes;
    s->to = e->sw_to;
    s->bytes = e->bytes;
    s->has_data = e->has_data;
    if (s->has_data && !(s->sum = malloc(e->bytes ? e->bytes : 1))) {
        free(s);
        return NULL;
    }
    s->next = w->slots;
    w->slots = s;
    return s;
}

static void slot_unlink(nvswitch *w, swslot *s)
{
    for (swslot **p = &w->slots; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    s->next = NULL;
}

static void slot_free(swslot *s)
{
    free(s->sum);
    free(s);
}

/* the sum leaves the switch for its GPUs */
static int send_sum(nvswitch *w, const swslot *s)
{
    int first = w->node * switches.G;
    int lo = s->to == SP_SWITCH_ALL ? 0 : s->to, hi = s->to == SP_SWITCH_ALL ? switches.G : s->to + 1;
    for (int j = lo; j < hi; j++) {
        if (first + j >= spg_ranks.P)
            continue; /* a GPU of the last node that holds no rank */
        size_t datasz = s->has_data ? s->bytes : 0;
        envelope *o = malloc(sizeof *o + datasz);
        if (!o)
            return -1;
        memset(o, 0, sizeof *o);
        o->src = SP_SWITCH;
        o->tag = s->tag;
        o->iter = s->iter;
        o->phase = s->phase;
        o->bytes = s->bytes;
        o->t_post = simgrid_get_clock();
        o->has_data = s->has_data;
        if (datasz)
            memcpy(o->data, s->sum, datasz);
        sg_comm_detach(sg_mailbox_put_init(spg_ranks.mbox[first + j], o, (long)s->bytes), free);
    }
    return 0;
}

void spg_switch_arrived(sp_ctx *c, envelope *e, double t)
{
    sp_shim *sh = c->shim;
    nvswitch *w = &switches.sw[c->rank / switches.G];
    sp_msg_event ev = {e->iter, e->phase, e->src, SP_SWITCH_END(w->node), e->tag, e->bytes, e->t_post, t};
    sh->sink.message(sh->sink.to, &ev);
    swslot *s = slot_of(w, e);
    if (!s) {
        sp_fail(sh, "out of memory in the switch of node %d", w->node);
    } else if (s->pushes != e->sw_pushes || s->to != e->sw_to || s->bytes != e->bytes || s->has_data != e->has_data) {
        sp_fail(sh, "rank %d pushes tag %d to its switch as %d pushes of %llu bytes to %d, another GPU as %d of %llu to %d",
                e->src, e->tag, e->sw_pushes, (unsigned long long)e->bytes, e->sw_to, s->pushes,
                (unsigned long long)s->bytes, s->to);
    } else {
        if (s->has_data) {
            const float *x = (const float *)e->data;
            size_t n = s->bytes / sizeof(float);
            if (s->got == 0)
                memcpy(s->sum, x, n * sizeof(float));
            else
                for (size_t i = 0; i < n; i++)
                    s->sum[i] += x[i];
        }
        if (++s->got == s->pushes) { /* complete: the switch actor sends it, now */
            s->iter = e->iter;
            s->phase = e->phase;
            slot_unlink(w, s);
            if (w->queue_tail)
                w->queue_tail->next = s;
            else
                w->queue = s;
            w->queue_tail = s;
            sg_sem_release(w->ready);
        }
    }
    spg_envelope_free(e);
}

static void switch_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    nvswitch *w = sg_actor_self_get_data();
    sg_actor_daemonize(sg_actor_self());
    for (;;) {
        sg_sem_acquire(w->ready);
        swslot *s = w->queue;
        if (!s)
            continue;
        w->queue = s->next;
        if (!w->queue)
            w->queue_tail = NULL;
        if (send_sum(w, s) != 0)
            sp_fail(spg_ranks.sh, "out of memory in the switch of node %d", w->node);
        slot_free(s);
    }
}

int spg_switches_start(const sp_fabric *f, int P, char *err, size_t errlen)
{
    memset(&switches, 0, sizeof switches);
    if (f->kind != SP_FABRIC_LEAF_SPINE || !(f->nvls_bw > 0))
        return 0;
    switches.G = f->gpus_per_node;
    switches.nodes = (P + switches.G - 1) / switches.G;
    switches.sw = calloc((size_t)switches.nodes, sizeof *switches.sw);
    if (!switches.sw) {
        snprintf(err, errlen, "out of memory for %d switches", switches.nodes);
        return -1;
    }
    for (int n = 0; n < switches.nodes; n++) {
        nvswitch *w = &switches.sw[n];
        w->node = n;
        snprintf(w->name, sizeof w->name, "nvswitch-%d", n);
        sg_host_t h = sg_host_by_name(w->name);
        if (!h) {
            snprintf(err, errlen, "platform has no host %s", w->name);
            return -1;
        }
        w->host = h;
        w->ready = sg_sem_init(0);
        sg_actor_t a = sg_actor_init(w->name, h);
        sg_actor_set_data(a, w);
        sg_actor_start(a, switch_actor, 0, NULL);
        w->pid = (long)sg_actor_get_pid(a);
    }
    return 0;
}

int spg_switches_on(void) { return switches.sw != NULL; }

long spg_switch_pid(int rank) { return switches.sw[rank / switches.G].pid; }

sg_host_t spg_switch_host(int rank) { return switches.sw[rank / switches.G].host; }

void spg_switches_free(void)
{
    for (int n = 0; switches.sw && n < switches.nodes; n++) {
        nvswitch *w = &switches.sw[n];
        while (w->slots) {
            swslot *s = w->slots;
            w->slots = s->next;
            slot_free(s);
        }
        while (w->queue) {
            swslot *s = w->queue;
            w->queue = s->next;
            slot_free(s);
        }
        if (w->ready)
            sg_sem_destroy(w->ready);
    }
    free(switches.sw);
    memset(&switches, 0, sizeof switches);
}
