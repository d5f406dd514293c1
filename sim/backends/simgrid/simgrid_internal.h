/* simgrid_internal.h - what the files of the SimGrid backend share.
 *
 * The backend is split by job: transport.c moves messages between the rank
 * actors (matching, ordering, waits), postbox.c carries the small messages
 * of --unshared-below outside bandwidth sharing, disturbances.c injects
 * degraded links, other jobs' traffic and a failed rank, platform_check.c
 * tries a user platform in a child process, and engine.c starts SimGrid and
 * the ranks and ends the run.  They share the types of one rank's
 * communication state and two globals, one per job that every file touches:
 * spg_ranks (the ranks, their hosts and mailboxes) and spg_unshared (the
 * postboxes).  The simulation runs one actor at a time, so nothing here
 * needs a lock.
 */
#ifndef SPARSIM_SIMGRID_INTERNAL_H
#define SPARSIM_SIMGRID_INTERNAL_H

#include "simgrid_glue.h"
#include "sim/shim/backend.h"
#include "sim/shim/disturb.h"

#include <simgrid/barrier.h>
#include <simgrid/semaphore.h>
#include <stddef.h>
#include <stdint.h>

/* what a message carries through SimGrid: the envelope is the payload, the
 * simulated size the message's byte count */
typedef struct envelope {
    int src, tag, iter, phase;
    uint64_t bytes;
    double t_post, t_done;
    sp_path path; /* disturbed runs: what the sender carried when it posted (disturb.h) */
    int has_data, pooled;
    int sw_pushes, sw_to; /* a push to the node's switch (sp_switch_push): its pushes and where the sum goes */
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
    struct envelope *push; /* a push to the node's switch: what it carries, handed over when it ends */
};

/* free lists: requests, get records and data-less envelopes are recycled */
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

/* one rank's communication state */
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
    int pushes;        /* pushes to the node's switch in flight: each end needs a reaction */
    int finished;
    struct freenode *free_req, *free_get; /* recycled by the rank that uses them: stays in its cache */
} spg_rank;

/* a rank's ctx and its backend state, side by side */
struct rank_slot {
    sp_ctx ctx;
    spg_rank s;
};

/* The ranks of the run (one run per process at a time): transport.c
 * defines it, engine.c fills it and empties it. */
extern struct spg_ranks {
    sp_shim *sh;
    int P;
    sg_host_t *hosts;
    sg_mailbox_t *mbox;      /* one per destination rank */
    struct rank_slot *slots;
    sg_actor_t *actors;
    long pid_base;           /* rank 0's actor id; rank r's is pid_base + r */
    sg_bar_t barrier;
    int arrived;             /* ranks in the barrier */
    int nfinished;           /* ranks whose program has returned */
    freenode *free_env;      /* data-less envelopes, recycled */
} spg_ranks;

static inline spg_rank *spg_rank_of(sp_ctx *c) { return (spg_rank *)c->be_state; }

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

/* The postboxes of --unshared-below (postbox.c defines it); box is NULL
 * when every message shares links. */
extern struct spg_unshared {
    double below; /* bytes; 0: every message shares links */
    postbox *box;
} spg_unshared;

/* ---- transport.c ---- */
extern const sp_backend spg_transport;
/* an envelope whose order is settled: to a posted receive, or queued */
void spg_deliver(sp_ctx *c, envelope *e);
void spg_envelope_free(envelope *e);
/* the program of rank actors (its data: the rank's sp_ctx) */
void spg_rank_actor(int argc, char **argv);
/* every rank's state, the barrier and the recycled envelopes */
void spg_transport_free(void);

/* ---- nvswitch.c ---- */
/* the switch actors of the nodes, where the fabric's switches reduce (none
 * elsewhere); 0, or -1 with a message */
int spg_switches_start(const sp_fabric *f, int P, char *err, size_t errlen);
int spg_switches_on(void);
void spg_switches_free(void);
/* the actor id of rank's node's switch (the sender of its sums), and its host */
long spg_switch_pid(int rank);
sg_host_t spg_switch_host(int rank);
/* a push of rank c has reached its node's switch at time t (the envelope is the switch's now) */
void spg_switch_arrived(sp_ctx *c, envelope *e, double t);

/* ---- postbox.c ---- */
/* one postbox and postman per rank; 0, or -1 with a message */
int spg_postboxes_start(double below, int piecewise, char *err, size_t errlen);
void spg_postboxes_free(void);
/* may a message to dst bypass sharing without overtaking one that shares */
int spg_postbox_may_bypass(const spg_rank *s, int dst);
/* puts a bypassing message into dst's postbox; 0, or -1 (the shim knows why) */
int spg_postbox_post(sp_ctx *c, int dst, envelope *e);
/* the rank takes the messages of its postbox that are due; how many */
int spg_postbox_take_due(sp_ctx *c);

/* ---- disturbances.c ---- */
/* 0, 2 (bad input: no such links) or 1, with a message */
int spg_disturbances_start(sp_shim *sh, const char *platform, char *err, size_t errlen);
void spg_disturbances_reset(void);
void spg_disturbances_free(void);
/* every rank has finished: other jobs' flows end with the run */
void spg_background_end(void);
/* the engine found that nobody can go on (after a failed rank) */
void spg_disturbances_on_deadlock(void);
/* the links of the route from rank src's host to rank dst's, by name */
void spg_name_route(void *arg, int src, int dst, char *buf, size_t len);

/* ---- platform_check.c ---- */
/* a user platform file that SimGrid 3.32 would crash or abort on: -1 with a message */
int spg_check_platform_file(const char *path, char *err, size_t errlen);

#endif
