/* postbox.c - --unshared-below S: small messages outside bandwidth sharing.
 *
 * A message of fewer than S bytes does not enter SimGrid's bandwidth
 * sharing (the max-min solver re-solves the flows that share links with a
 * flow at each flow's start and end; at thousands of ranks with P^2 small
 * messages that is most of the run, bench/README.md section 13).  Its send
 * completes at once (an eager send, as MPI sends small messages); it waits
 * in the receiver's postbox until it is due (spg_postbox_post says when),
 * and the receiver takes the due ones whenever it makes progress, blocking
 * at most until the first one in its postbox is due (transport.c).  A
 * message that comes to a receiver already blocked with an empty postbox
 * has the receiver's postman (one actor per rank, on its host) wake it
 * then: the postman puts a 0-byte bell into the rank's mailbox, which
 * completes one of its gets.
 */
#include "simgrid_internal.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spg_unshared spg_unshared;

/* may a message to dst bypass sharing without overtaking one of the same
 * pair that still shares links?  (A later, larger message cannot overtake
 * an earlier bypassing one: alone it already takes longer, and sharing only
 * slows it.)  The scan is bounded: past a few pending sends, share. */
int spg_postbox_may_bypass(const spg_rank *s, int dst)
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
int spg_postbox_post(sp_ctx *c, int dst, envelope *e)
{
    postbox *b = &spg_unshared.box[dst];
    double due =
        spg_unshared_arrival(spg_ranks.hosts[c->rank], spg_ranks.hosts[dst], (double)e->bytes, simgrid_get_clock());
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
int spg_postbox_take_due(sp_ctx *c)
{
    postbox *b = &spg_unshared.box[c->rank];
    double now = simgrid_get_clock();
    int taken = 0;
    while (b->head && b->head->t_done <= now) {
        envelope *e = b->head;
        if (!(b->head = e->next))
            b->tail = NULL;
        spg_deliver(c, e);
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
    int r = (int)(b - spg_unshared.box);
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
            sg_comm_t cm = sg_mailbox_put_async(spg_ranks.mbox[r], &b->bell, 0);
            if (spg_wait_one(cm, NULL) != 0)
                return; /* the run is ending */
        }
    }
}

/* --unshared-below: one postbox and postman per rank, after the ranks (whose
 * actor ids must be contiguous) */
int spg_postboxes_start(double below, int piecewise, char *err, size_t errlen)
{
    if (spg_uncontended_init(piecewise) != 0) {
        snprintf(err, errlen, "internal error: the network model's factors could not be read");
        return -1;
    }
    spg_unshared_reset();
    spg_unshared.box = calloc((size_t)spg_ranks.P, sizeof *spg_unshared.box);
    if (!spg_unshared.box) {
        snprintf(err, errlen, "out of memory for %d postboxes", spg_ranks.P);
        return -1;
    }
    spg_unshared.below = below;
    char name[32];
    for (int r = 0; r < spg_ranks.P; r++) {
        postbox *b = &spg_unshared.box[r];
        b->self_time = spg_uncontended_time(spg_ranks.hosts[r], spg_ranks.hosts[r], 0);
        if (b->self_time < 0)
            b->self_time = 0;
        b->wait_until = -1;
        if (!(b->ring = sg_sem_init(0))) {
            snprintf(err, errlen, "out of memory for %d postboxes", spg_ranks.P);
            return -1;
        }
        snprintf(name, sizeof name, "postman-%d", r);
        sg_actor_t a = sg_actor_init(name, spg_ranks.hosts[r]);
        sg_actor_set_data(a, b);
        sg_actor_start(a, postman_actor, 0, NULL);
    }
    return 0;
}

/* the messages still in the postboxes, and the postboxes */
void spg_postboxes_free(void)
{
    if (spg_unshared.box) {
        for (int r = 0; r < spg_ranks.P; r++) {
            postbox *b = &spg_unshared.box[r];
            while (b->head) {
                envelope *e = b->head;
                b->head = e->next;
                spg_envelope_free(e);
            }
            if (b->ring)
                sg_sem_destroy(b->ring);
        }
        free(spg_unshared.box);
    }
    memset(&spg_unshared, 0, sizeof spg_unshared);
}
