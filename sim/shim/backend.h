/* backend.h - what the shim core, its backends and the run driver share.
 *
 * The public shim headers (shim.h, and workload.h for the workload
 * questions) are all an algorithm sees.  Behind them, each backend (a room
 * of its own: sim/backends/simgrid/, sim/backends/mpi/) fills an sp_backend
 * table and starts the ranks; the shim core (shim.c) checks arguments, keeps
 * each rank's phase and turns what happens into events: a message
 * delivered, a phase span closed, a figure recorded.  Every event goes into one sink.  The driver decides what
 * the sink is (its accounting, which turns events into every figure and feeds
 * the writers); a backend only moves messages, and one that cannot observe a
 * message whole at delivery (MPI: the receiver does not know when it was
 * posted) records the halves, pairs them at the end and replays the events
 * into the driver's sink.
 */
#ifndef SPARSIM_BACKEND_H
#define SPARSIM_BACKEND_H

#include "error.h"
#include "shim.h"
#include "workload.h"
#include "topologies/device.h"
#include "traces/trace.h"

/* Where events go. */
typedef struct {
    void (*message)(void *to, const sp_msg_event *e);
    void (*span)(void *to, const sp_span_event *e);
    void (*stat)(void *to, const sp_stat_event *e);
    /* every rank has finished iteration `iter`: its events are all in */
    void (*iteration_done)(void *to, int iter);
    void *to;
} sp_sink;

/* The statistical model behind sp_model_* (sim/workload/model.c), for
 * model workloads; each call carries the asking rank and its iteration. */
typedef struct {
    uint64_t (*count_above)(void *m, int rank, int iter, double thr);
    double (*kth)(void *m, int rank, int iter, uint64_t k);
    double (*std)(void *m, int rank, int iter);
    sp_model_set *(*select)(void *m, int rank, int iter, double thr, uint64_t count);
    int64_t (*index_at)(void *m, const sp_model_set *s, uint64_t pos);
    void (*split)(void *m, int rank, int iter, const sp_model_set *s, const int32_t *bounds, int nreg,
                  uint32_t *counts);
    uint64_t (*union_count)(void *m, int rank, int iter, double thr, int64_t lo, int64_t hi, uint64_t at_least,
                            uint64_t at_most);
    uint64_t (*reduced_above)(void *m, int rank, int iter, double thr, int64_t lo, int64_t hi, double thr_global,
                              uint64_t at_most);
    double (*global_kth)(void *m, int rank, int iter, double thr, uint64_t K);
    void (*consume)(void *m, int rank, int iter, double thr, double thr_global);
    uint64_t (*team_union)(void *m, int rank, int iter, int W, int d, uint64_t h, int64_t lo, int64_t hi,
                           uint64_t cap);
} sp_model_ops;

/* The state of one run that the shim core keeps (one per process). */
typedef struct sp_shim {
    sp_report *rep;        /* phase and statistic names are interned into it */
    const sp_device *dev;  /* prices sp_compute on simulated backends */
    sp_sink sink;
    int want_times;        /* a writer needs t_post and t_done of messages */
    int gpus_per_node;     /* G of sp_node_size (0 is taken as 1) */
    int node_switch;       /* the nodes' switches reduce (sp_node_switch): the backend sets it */
    int failed;            /* the first failure wins */
    char errmsg[256];
    /* the model of a model workload, or NULL */
    const sp_model_ops *model;
    void *model_state;
    /* a node-aware form on a model (algorithms/node_aware.c): its sparse
     * algorithm runs among one rank per node, so the model's ranks are
     * nodes (rank r asks as r / gpus_per_node); rail: each rail j has a
     * model of its own shard (rail_models[j], rank r's is r mod G) */
    int model_per_node;
    void **rail_models;
    /* what disturbs the run (disturb.h), or NULL */
    struct sp_disturb *disturb;
    /* the program each rank runs (the driver's), with its argument */
    void (*rank_main)(sp_ctx *c, void *arg);
    void *rank_arg;
} sp_shim;

typedef struct sp_backend {
    const char *name;
    /* NULL when the send or receive could not be posted (the shim records why) */
    sp_req *(*isend)(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post);
    sp_req *(*irecv)(sp_ctx *c, int src, int tag, void *buf, size_t cap);
    int (*waitall)(sp_ctx *c, sp_req **reqs, int n, size_t *sizes); /* NULL entries skipped */
    double (*now)(const sp_ctx *c);
    void (*advance)(sp_ctx *c, double seconds); /* modelled compute time */
    /* untraced, free synchronisation of all ranks; once every rank of this
     * process has arrived and before any leaves, last(arg) is called once */
    void (*barrier)(sp_ctx *c, void (*last)(void *arg), void *arg);
    /* sp_switch_push (NULL where no node has a reducing switch) */
    sp_req *(*switch_push)(sp_ctx *c, int tag, const void *buf, size_t bytes, int pushes, int to, double t_post);
} sp_backend;

/* One rank.  What every message touches comes first: thousands of ranks
 * take turns on one core, and a rank's state is cold each time its turn
 * comes. */
struct sp_ctx {
    int rank, size; /* in the whole run: backends and events speak these */
    int grp_first, grp_stride, grp_size; /* the group entered (sp_group_enter); grp_size 0: none */
    const sp_backend *be;
    void *be_state;
    sp_shim *shim;
    int iter;
    int phase;        /* current phase id */
    double phase_t0;  /* when the current phase began */
    void *algo_state; /* sp_rank_state */
};

/* Interns a phase name; returns its id (creates it on first use). */
int sp_phase_id(sp_shim *sh, const char *name);

/* The driver's hooks around an iteration of one rank: begin (phase `phase`,
 * now), end (closes the open phase span). */
void sp_shim_iteration_begin(sp_ctx *c, int iter, int phase);
void sp_shim_iteration_end(sp_ctx *c);
/* The free synchronisation between iterations: every rank of this process
 * arrives, then last(arg) runs once, then they all go on. */
void sp_shim_sync(sp_ctx *c, void (*last)(void *arg), void *arg);

/* Local compute of `seconds` that no kernel names (the base compute of an
 * iteration): the rank's clock advances by it, as disturbances stretch it. */
void sp_shim_compute_seconds(sp_ctx *c, double seconds);

/* Host and copy overheads of the device profile (topologies/device.h),
 * zero in the plain profiles, the same on every simulated engine.  The
 * rule, per message and per call:
 *  - posting a send costs the sender o_send of host CPU plus the copy of the
 *    message from device to host memory (the papers' codes send from host
 *    buffers), before the message leaves: sp_overhead_send;
 *  - every wait (one blocking call into the communication library: a step
 *    of a collective) costs call_o, and every receive it completes o_recv
 *    plus the copy of what arrived from host to device memory, after the
 *    wait: sp_overhead_wait, then sp_overhead_received per receive.
 * LogGP's o: Alexandrov, Ionescu, Schauser, Scheiman, SPAA 1995. */
double sp_overhead_send(const sp_ctx *c, size_t bytes);
double sp_overhead_wait(const sp_ctx *c);
double sp_overhead_received(const sp_ctx *c, long long bytes);

/* Called by a backend when a message has been delivered to rank `c`. */
void sp_deliver(sp_ctx *c, const sp_msg_event *e);

/* Records a failure (first one wins); ranks stop at the next iteration. */
void sp_fail(sp_shim *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a backend needs to start P ranks. */
typedef struct {
    int ranks;
    const char *platform; /* built-in name or SimGrid XML file (simulated backends) */
    const char *network;  /* cm02 | lv08 | smpi (simulated backends) */
    double watchdog;      /* seconds a wait may make no progress (real backends) */
    uint64_t seed;        /* of the disturbances (simulated backends) */
    int crosstraffic;     /* reverse-direction load: 0 as the network model has it, 1 on, 2 off (simulated) */
    double unshared_below; /* bytes: smaller messages bypass bandwidth sharing; 0 none (simulated) */
    int engine;           /* 0 SimGrid's, 1 sparsim's flow engine (simulated) */
    double flow_slack;    /* the flow engine's --flow-slack (0: exact sharing) */
} sp_backend_config;

/* The backend linked into this program (sim/backends/simgrid/engine.c or
 * sim/backends/mpi/backend_run.c): runs the ranks, each calling
 * sh->rank_main; 0 on success, or -1 with e saying why and with which
 * status (SP_STATUS_USAGE for bad input such as a platform file,
 * SP_STATUS_FAILED for a run that started and failed, a rank's failure
 * included).  On MPI every process calls it and only the root's report is
 * complete.  It sets rep->alpha and rep->beta where it knows the routes. */
int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, sp_error *e);
const char *sp_backend_name(void);
/* 1 in the process that writes the outputs */
int sp_backend_is_root(void);

#endif
